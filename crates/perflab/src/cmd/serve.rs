//! `perflab serve`: the responder for `netrr` measurements from another host.

use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use perflab_workloads::netrr::serve::{Log, ServeConfig, Server};

use crate::cli::{Global, ServeArgs};
use crate::exit::input;
use perflab_core::limits::flag_seconds;

pub fn run(_g: &Global, a: ServeArgs) -> anyhow::Result<i32> {
    let ip: IpAddr = a.listen.parse().map_err(|_| {
        input(format!(
            "--listen {:?} is not an IP address (e.g. 127.0.0.1, 0.0.0.0 or 10.0.0.2)",
            a.listen
        ))
    })?;
    let session_time = flag_seconds("--session-time", &a.session_time).map_err(input)?;
    if a.max_sessions == 0 {
        return Err(input("--max-sessions must be at least 1"));
    }
    let handshake_time = flag_seconds("--handshake-time", &a.handshake_time).map_err(input)?;
    let (token, generated) = match token_given(&a)? {
        Some(t) => (t, false),
        None => (random_token()?, true),
    };
    let mut cfg = ServeConfig::new(token.clone());
    cfg.listen = SocketAddr::new(ip, a.port);
    cfg.max_sessions = a.max_sessions;
    cfg.session_time = Duration::from_secs_f64(session_time);
    cfg.handshake_time = Duration::from_secs_f64(handshake_time);
    cfg.allow_weak_token = a.allow_weak_token;
    if a.allow_weak_token {
        if let Err(why) = perflab_workloads::netrr::serve::token_check(&token) {
            let why = why.split(':').next().unwrap_or_default();
            eprintln!("perflab serve: warning: {why}; served anyway (--allow-weak-token)");
        }
    }
    let server = Server::bind(cfg).map_err(|e| input(e.to_string()))?;
    let addr = server.local_addr()?;
    eprintln!(
        "perflab serve: listening on {addr}, at most {} sessions of {} s each, {} s to \
         authenticate (token {})",
        a.max_sessions,
        session_time,
        handshake_time,
        perflab_core::secret::fingerprint(&token)
    );
    if generated {
        // Asked for none: this is the only way the user learns it.
        eprintln!("token: {token}");
        eprintln!(
            "measure from the other host with: PERFLAB_SERVE_TOKEN=<the token> perflab run \
             --workload netrr -p peer={addr}  (give serve --token-file to choose the token)"
        );
    }
    if ip.is_unspecified() || !ip.is_loopback() {
        eprintln!(
            "note: listening beyond loopback; anyone who can reach {addr} and knows the token \
             can make this host answer UDP/TCP echoes to their own address (the token is \
             never sent, but the traffic is not encrypted)"
        );
    }
    let stop = Arc::new(AtomicBool::new(false));
    let signals = perflab_knobs::signals::install(stop.clone())?;
    let log: Log = Arc::new(|line: &str| eprintln!("perflab serve: {line}"));
    server.run(&stop, log)?;
    eprintln!("perflab serve: stopped");
    Ok(signals.received().map(|s| 128 + s).unwrap_or(0))
}

/// The token from --token-file, --token or $PERFLAB_SERVE_TOKEN, in that order; `None`
/// when none is given.
fn token_given(a: &ServeArgs) -> anyhow::Result<Option<String>> {
    if let Some(path) = &a.token_file {
        let text = std::fs::read_to_string(path)
            .map_err(|e| input(format!("--token-file {}: {e}", path.display())))?;
        let token = text.lines().next().unwrap_or("").trim().to_string();
        if token.is_empty() {
            return Err(input(format!(
                "--token-file {}: the file is empty (write the token on its first line)",
                path.display()
            )));
        }
        if let Ok(meta) = std::fs::metadata(path) {
            use std::os::unix::fs::PermissionsExt;
            let mode = meta.permissions().mode() & 0o777;
            if mode & 0o077 != 0 {
                eprintln!(
                    "note: --token-file {} is readable by others (mode {mode:04o}); chmod 600 it",
                    path.display()
                );
            }
        }
        return Ok(Some(token));
    }
    Ok(a.token
        .clone()
        .or_else(|| std::env::var("PERFLAB_SERVE_TOKEN").ok())
        .filter(|t| !t.is_empty()))
}

/// 128 random bits from the kernel, as hex.
fn random_token() -> anyhow::Result<String> {
    let mut buf = [0u8; 16];
    // SAFETY: getrandom writes at most buf.len() bytes into the buffer we own.
    let n = unsafe { libc::getrandom(buf.as_mut_ptr().cast(), buf.len(), 0) };
    if n != buf.len() as isize {
        anyhow::bail!(
            "cannot get random bytes for a token ({}); give --token",
            std::io::Error::last_os_error()
        );
    }
    Ok(buf.iter().map(|b| format!("{b:02x}")).collect())
}
