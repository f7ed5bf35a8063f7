//! A PostgreSQL server for tests, and a database of its own for each test.
//!
//! The server is the one `PERFLAB_TEST_PG` names (a URL perflab's tests may create and
//! drop databases through), else a throwaway cluster this test process starts itself where
//! Debian's `postgresql` is installed: `initdb` into a temporary directory, `pg_ctl start`
//! listening only on a unix socket in that directory, as the `postgres` user when the tests
//! run as root (PostgreSQL refuses to run as root). It is stopped and removed when the
//! process exits — by an exit handler, and by a watchdog process should the test process
//! be killed instead.
//!
//! Where neither is possible, [`pg_database`] reports the skip (`needs postgres`), which
//! fails the test instead when `PERFLAB_TEST_REQUIRE` lists `postgres`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use crate::skip::{is_root, skip};

/// The variable naming an existing server.
pub const PG_VAR: &str = "PERFLAB_TEST_PG";

/// A database created for one test, dropped (with its connections) when this is dropped.
pub struct PgDatabase {
    /// The database's URL, as `--db` takes it.
    pub url: String,
    name: String,
    admin: String,
}

impl PgDatabase {
    /// The URL of another database on the same server (not created).
    pub fn url_of(&self, dbname: &str) -> String {
        with_dbname(&self.admin, dbname)
    }
}

impl Drop for PgDatabase {
    fn drop(&mut self) {
        if let Ok(mut c) = postgres::Client::connect(&self.admin, postgres::NoTls) {
            let _ = c.batch_execute(&format!(
                "DROP DATABASE IF EXISTS \"{}\" WITH (FORCE)",
                self.name
            ));
        }
    }
}

/// A fresh, empty database for the calling test; `None` after reporting the skip when no
/// server can be had.
#[track_caller]
pub fn pg_database() -> Option<PgDatabase> {
    let server = match server() {
        Ok(s) => s,
        Err(why) => {
            skip("postgres", why);
            return None;
        }
    };
    let mut bytes = [0u8; 8];
    fill_random(&mut bytes);
    let name: String = std::iter::once("perflab_test_".to_string())
        .chain(bytes.iter().map(|b| format!("{b:02x}")))
        .collect();
    let mut c = postgres::Client::connect(&server.admin, postgres::NoTls)
        .unwrap_or_else(|e| panic!("connecting to the test server {}: {e}", server.shown));
    c.batch_execute(&format!("CREATE DATABASE \"{name}\""))
        .unwrap_or_else(|e| panic!("creating a test database on {}: {e:?}", server.shown));
    Some(PgDatabase {
        url: with_dbname(&server.admin, &name),
        name,
        admin: server.admin.clone(),
    })
}

/// `url` with its database replaced by `dbname` (a query parameter overrides the path).
fn with_dbname(url: &str, dbname: &str) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}dbname={dbname}")
}

struct Server {
    /// A URL that reaches the `postgres` database as a user who may create databases.
    admin: String,
    /// What messages show of it.
    shown: String,
}

fn server() -> Result<&'static Server, String> {
    static SERVER: OnceLock<Result<Server, String>> = OnceLock::new();
    SERVER
        .get_or_init(|| match std::env::var(PG_VAR) {
            Ok(url) if !url.is_empty() => Ok(Server {
                shown: format!("{PG_VAR} server"),
                admin: url,
            }),
            _ => start_cluster(),
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// The newest `initdb` of Debian's packages.
fn initdb() -> Option<PathBuf> {
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .flatten()
        .filter_map(|e| {
            let version = e.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = e.path().join("bin/initdb");
            bin.exists().then_some((version, bin))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, p)| p)
}

fn start_cluster() -> Result<Server, String> {
    let initdb = initdb().ok_or_else(|| {
        format!("{PG_VAR} is unset and PostgreSQL is not installed (apt-get install postgresql)")
    })?;
    let bin = initdb
        .parent()
        .expect("initdb is in a bin directory")
        .to_path_buf();
    let dir = make_dir()?;
    // Run as `postgres` when root: the server refuses root, and the directory must be theirs.
    let owner = if is_root() {
        let (uid, gid) = user_ids("postgres")
            .ok_or("running as root and there is no `postgres` user to run the server as")?;
        chown(&dir, uid, gid)?;
        Some("postgres")
    } else {
        None
    };
    let as_owner = |program: &Path| -> Command {
        match owner {
            Some(user) => {
                let mut c = Command::new("runuser");
                c.args(["-u", user, "--"]).arg(program);
                c
            }
            None => Command::new(program),
        }
    };
    let data = dir.join("data");
    run(as_owner(&initdb).arg("-D").arg(&data).args([
        "-A",
        "trust",
        "-U",
        "postgres",
        "-E",
        "UTF8",
        "--no-sync",
        "--no-instructions",
    ]))
    .map_err(|e| format!("initdb: {e}"))?;
    let options = format!(
        "-k {} -c listen_addresses='' -c fsync=off -c synchronous_commit=off \
         -c full_page_writes=off -c max_connections=300",
        dir.display()
    );
    run(as_owner(&bin.join("pg_ctl"))
        .arg("-D")
        .arg(&data)
        .arg("-o")
        .arg(&options)
        .arg("-l")
        .arg(dir.join("log"))
        .args(["-w", "-t", "60", "start"]))
    .map_err(|e| {
        let log = std::fs::read_to_string(dir.join("log")).unwrap_or_default();
        format!("pg_ctl start: {e}; log: {log}")
    })?;
    let stop = format!(
        "{} {} -D {} -m immediate stop >/dev/null 2>&1; rm -rf {}",
        match owner {
            Some(u) => format!("runuser -u {u} --"),
            None => String::new(),
        },
        bin.join("pg_ctl").display(),
        data.display(),
        dir.display()
    );
    watch(&stop);
    Ok(Server {
        admin: format!("postgres:///postgres?host={}&user=postgres", dir.display()),
        shown: format!("the test cluster in {}", dir.display()),
    })
}

/// Stops the cluster when this process ends: at a normal exit through `atexit`, and a
/// killed one through a shell that waits for this process to go.
fn watch(stop: &str) {
    static STOP: OnceLock<String> = OnceLock::new();
    let _ = STOP.set(stop.to_string());
    extern "C" fn at_exit() {
        if let Some(stop) = STOP.get() {
            let _ = Command::new("sh")
                .args(["-c", stop])
                .stdin(Stdio::null())
                .status();
        }
    }
    // SAFETY: registering a plain extern "C" function with no captured state.
    unsafe { libc::atexit(at_exit) };
    let me = std::process::id();
    let script = format!("while kill -0 {me} 2>/dev/null; do sleep 1; done; {stop}");
    let _ = Command::new("sh")
        .args(["-c", &script])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
}

fn run(cmd: &mut Command) -> Result<(), String> {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {:?}: {e}", cmd.get_program()))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

fn make_dir() -> Result<PathBuf, String> {
    let mut bytes = [0u8; 6];
    fill_random(&mut bytes);
    let name: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    // Short: a unix socket path must fit in 107 bytes.
    let dir = std::env::temp_dir().join(format!("perflab-pg-{name}"));
    std::fs::create_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    Ok(dir)
}

fn fill_random(buf: &mut [u8]) {
    use std::io::Read;
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(buf))
        .expect("reading /dev/urandom");
}

fn user_ids(name: &str) -> Option<(u32, u32)> {
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|l| {
        let f: Vec<&str> = l.split(':').collect();
        (f.len() > 3 && f[0] == name).then(|| Some((f[2].parse().ok()?, f[3].parse().ok()?)))?
    })
}

fn chown(dir: &Path, uid: u32, gid: u32) -> Result<(), String> {
    std::os::unix::fs::chown(dir, Some(uid), Some(gid))
        .map_err(|e| format!("chown {}: {e}", dir.display()))
}
