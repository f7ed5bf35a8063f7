//! Cross-check of `netrr` (UDP, closed loop) against `sockperf ping-pong` on 127.0.0.1
//! with the same message size and the same pinning: `sockperf sr` under `taskset -c
//! <server CPU>`, `sockperf pp --full-rtt` under `taskset -c <client CPU>`; netrr with
//! `client_cpu`/`server_cpu`. Both report round trips (sockperf without `--full-rtt` would
//! report half of one), so the figures compare directly.
//!
//! The two tools run back to back, the order alternating from round to round so a drift
//! of the machine does not always favour the same side.
//!
//! What differs and cannot be made equal: sockperf takes time with rdtsc and waits in
//! `select` before each `recvfrom` (its default iomux), netrr reads CLOCK_MONOTONIC and
//! blocks in `recv`; sockperf's minimum message is 14 bytes (its header).

use std::net::UdpSocket;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::lab_side::{LabSide, LabSideError};
use crate::pairs::{self, Estimate, Judgement};
use crate::peer_tool::{self, PeerError, TASKSET_HINT};

/// Round-trip figures of one tool, µs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RttFigures {
    pub avg_us: f64,
    pub p50_us: f64,
    pub p99_us: f64,
}

/// One round: both tools at one size and placement.
#[derive(Clone, Debug, PartialEq)]
pub struct NetCrossRow {
    pub size: usize,
    pub client_cpu: u32,
    pub server_cpu: u32,
    pub netrr: RttFigures,
    pub sockperf: RttFigures,
    pub sockperf_first: bool,
}

impl NetCrossRow {
    /// netrr / sockperf for (avg, p50, p99).
    pub fn ratios(&self) -> (f64, f64, f64) {
        let r = |a: f64, b: f64| if b > 0.0 { a / b } else { f64::NAN };
        (
            r(self.netrr.avg_us, self.sockperf.avg_us),
            r(self.netrr.p50_us, self.sockperf.p50_us),
            r(self.netrr.p99_us, self.sockperf.p99_us),
        )
    }
}

#[derive(Debug, thiserror::Error)]
pub enum NetCrossError {
    #[error(transparent)]
    Peer(#[from] PeerError),
    #[error("sockperf is not usable here ({0}); install it with `apt-get install sockperf`")]
    SockperfMissing(String),
    #[error("sockperf's output lacks {0} (is this sockperf 3.x?)")]
    SockperfFigure(&'static str),
    #[error("sockperf's smallest message is 14 bytes; {0} was asked")]
    TooSmall(usize),
    #[error("netrr (size {size}, CPUs {client},{server}): {source}")]
    Netrr {
        size: usize,
        client: u32,
        server: u32,
        #[source]
        source: LabSideError,
    },
    #[error("cannot find a free UDP port on 127.0.0.1: {0}")]
    Port(std::io::Error),
}

/// One placement and size, decided: every round run, and the p50 ratio netrr / sockperf
/// (the figure the check holds to its tolerance) as the median of the rounds' ratios with
/// its interval ([`crate::pairs`]).
#[derive(Clone, Debug, PartialEq)]
pub struct NetDecided {
    pub rows: Vec<NetCrossRow>,
    pub estimate: Estimate,
    pub judgement: Judgement,
}

/// Alternating measurements of each tool, `duration_s` each, netrr through the lab runner
/// into `lab`, in interleaved pairs until the p50 ratio is decided against ±`pct` % or
/// `plan`'s most pairs are spent.
pub fn netrr_vs_sockperf(
    lab: &mut LabSide,
    size: usize,
    (client_cpu, server_cpu): (u32, u32),
    duration_s: f64,
    (plan, pct): ((usize, usize), f64),
) -> Result<NetDecided, NetCrossError> {
    if size < 14 {
        return Err(NetCrossError::TooSmall(size));
    }
    check_sockperf()?;
    // sockperf takes whole seconds; netrr runs as long.
    let duration_s = duration_s.ceil().max(1.0);
    let mut rows = Vec::new();
    let (estimate, judgement, _) = pairs::decide(plan, pct, |round| {
        let sockperf_first = round % 2 == 1;
        let (netrr, sockperf) = if sockperf_first {
            let s = run_sockperf(size, client_cpu, server_cpu, duration_s)?;
            (run_netrr(lab, size, client_cpu, server_cpu, duration_s)?, s)
        } else {
            let n = run_netrr(lab, size, client_cpu, server_cpu, duration_s)?;
            (n, run_sockperf(size, client_cpu, server_cpu, duration_s)?)
        };
        rows.push(NetCrossRow {
            size,
            client_cpu,
            server_cpu,
            netrr,
            sockperf,
            sockperf_first,
        });
        Ok::<_, NetCrossError>((netrr.p50_us, sockperf.p50_us))
    })?;
    Ok(NetDecided {
        rows,
        estimate,
        judgement,
    })
}

fn check_sockperf() -> Result<(), NetCrossError> {
    let out = Command::new("sockperf")
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| NetCrossError::SockperfMissing(format!("cannot run sockperf: {e}")))?;
    let text = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
    if text.contains("sockperf") {
        Ok(())
    } else {
        Err(NetCrossError::SockperfMissing(
            text.trim().chars().take(200).collect(),
        ))
    }
}

fn run_netrr(
    lab: &mut LabSide,
    size: usize,
    client: u32,
    server: u32,
    duration_s: f64,
) -> Result<RttFigures, NetCrossError> {
    let wrap = |source: LabSideError| NetCrossError::Netrr {
        size,
        client,
        server,
        source,
    };
    let params = [
        ("proto", "udp".to_string()),
        ("size", size.to_string()),
        ("client_cpu", client.to_string()),
        ("server_cpu", server.to_string()),
        ("duration", format!("{duration_s}")),
        // sockperf warms up for about as many exchanges before it measures.
        ("warmup", "1000".to_string()),
    ];
    let out = lab.measure("netrr", &params).map_err(wrap)?;
    let get = |n: &str| out.metric(n).map(|m| m.value).unwrap_or(f64::NAN);
    Ok(RttFigures {
        avg_us: get("rtt_avg_us"),
        p50_us: get("rtt_p50_us"),
        p99_us: get("rtt_p99_us"),
    })
}

/// Kills and reaps the sockperf server on every exit path.
struct ServerChild(Child);

impl Drop for ServerChild {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_udp_port() -> Result<u16, NetCrossError> {
    // Released right away for sockperf to bind; another process taking it in between
    // makes sockperf sr fail, which is reported.
    UdpSocket::bind("127.0.0.1:0")
        .and_then(|s| s.local_addr())
        .map(|a| a.port())
        .map_err(NetCrossError::Port)
}

fn run_sockperf(
    size: usize,
    client: u32,
    server: u32,
    duration_s: f64,
) -> Result<RttFigures, NetCrossError> {
    let port = free_udp_port()?.to_string();
    let srv = start_sockperf_server(server, &port)?;
    let ccpu = client.to_string();
    let (m, t) = (
        size.to_string(),
        format!("{}", duration_s.ceil().max(1.0) as u64),
    );
    let cargs = [
        "-c",
        &ccpu,
        "sockperf",
        "pp",
        "-i",
        "127.0.0.1",
        "-p",
        &port,
        "-m",
        &m,
        "-t",
        &t,
        "--full-rtt",
    ];
    let ccmd = format!("taskset {}", cargs.join(" "));
    let out = Command::new("taskset")
        .args(cargs)
        .stdin(Stdio::null())
        .output();
    let out = peer_tool::succeeded(&ccmd, TASKSET_HINT, out)?;
    drop(srv);
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    figures(&text)
}

/// `sockperf sr` on CPU `server`, listening on `port`, checked to be still running after
/// the time it takes to bind.
fn start_sockperf_server(server: u32, port: &str) -> Result<ServerChild, NetCrossError> {
    let scpu = server.to_string();
    let sargs = ["-c", &scpu, "sockperf", "sr", "-i", "127.0.0.1", "-p", port];
    let scmd = format!("taskset {}", sargs.join(" "));
    let mut srv = ServerChild(
        Command::new("taskset")
            .args(sargs)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|source| peer_tool::spawn_error(&scmd, TASKSET_HINT, source))?,
    );
    // sockperf sr binds within a few milliseconds; give it ample time.
    std::thread::sleep(Duration::from_millis(300));
    if let Ok(Some(status)) = srv.0.try_wait() {
        return Err(PeerError::PeerFailed {
            cmd: scmd,
            status: status.to_string(),
            stderr: String::new(),
        }
        .into());
    }
    Ok(srv)
}

/// The round-trip figures of `sockperf pp --full-rtt` output.
fn figures(text: &str) -> Result<RttFigures, NetCrossError> {
    let parsed = perflab_parsers::by_name("sockperf")
        .map(|p| (p.parse)(text))
        .ok_or(NetCrossError::SockperfFigure("a parser"))?
        .map_err(|e| NetCrossError::SockperfMissing(format!("unreadable output: {e}")))?;
    let get = |n: &'static str| {
        parsed
            .metric(n)
            .map(|m| m.value)
            .ok_or(NetCrossError::SockperfFigure(n))
    };
    Ok(RttFigures {
        avg_us: get("rtt_avg_us")?,
        p50_us: get("rtt_p50_us")?,
        p99_us: get("rtt_p99_us")?,
    })
}
