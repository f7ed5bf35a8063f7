//! `perflab fleet agent`: the side of a fleet run that runs on each host, started over
//! ssh. It starts the study as a detached `perflab run` (its own session, output to a log
//! beside the database), so a dropped connection never stops a measurement; then it follows
//! the host's database and streams the run back. A later connection with the same run uid
//! finds the run and attaches to it, resumes it if nothing is measuring it any more, or
//! just replays it when it is complete.

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use perflab_store::{RunId, RunStatus, Store};

use crate::stream::{write_event, Event, STREAM_VERSION};

/// What the fleet side asks of the agent.
#[derive(Clone, Debug)]
pub struct AgentArgs {
    /// The host's database for this fleet run.
    pub db: PathBuf,
    /// The run's identity, chosen by the fleet side, so every connection finds it.
    pub uid: String,
    /// `perflab run` arguments: the study and its options.
    pub run_args: Vec<String>,
    /// How often the database is looked at.
    pub poll: Duration,
}

/// The log of the detached run, beside its database.
pub fn log_path(db: &Path) -> PathBuf {
    let mut s = db.as_os_str().to_owned();
    s.push(".log");
    PathBuf::from(s)
}

/// What follows the run: either the process this agent started, or (attached) whoever
/// holds the run's claim.
enum Driver {
    Child(Child),
    Attached,
}

/// Runs the agent, writing events to `out`; returns the process exit code. A write that
/// fails means the connection is gone: the agent stops, the run goes on.
pub fn run(args: &AgentArgs, out: &mut impl Write) -> i32 {
    match drive(args, out) {
        Ok(code) => code,
        Err(Stop::Gone) => 0,
        Err(Stop::Failed(message)) => {
            let _ = write_event(out, &Event::Error { message });
            2
        }
    }
}

enum Stop {
    /// The connection is gone (a write failed).
    Gone,
    /// The run cannot be started or followed; said once.
    Failed(String),
}

impl From<std::io::Error> for Stop {
    fn from(_: std::io::Error) -> Self {
        Stop::Gone
    }
}

fn drive(args: &AgentArgs, out: &mut impl Write) -> Result<i32, Stop> {
    if let Some(dir) = args.db.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| Stop::Failed(format!("cannot create {}: {e}", dir.display())))?;
    }
    let existing = find(&args.db, &args.uid)?;
    let (action, mut driver) = match existing {
        None => ("started", Driver::Child(spawn(args, None)?)),
        Some((store, id)) => {
            let info = store.run(id).map_err(|e| Stop::Failed(e.to_string()))?;
            // A complete run is replayed; one whose claim is held is being measured by
            // the process an earlier connection started: follow it. Otherwise nothing
            // measures it any more (the host rebooted): resume it.
            if info.status == RunStatus::Complete || store.claim(id).is_err() {
                ("attached", Driver::Attached)
            } else {
                ("resumed", Driver::Child(spawn(args, Some(id))?))
            }
        }
    };
    write_event(
        out,
        &Event::Hello {
            stream_version: STREAM_VERSION,
            perflab_version: perflab_core::VERSION.to_string(),
            action: action.to_string(),
        },
    )?;
    let mut follow = Follower::default();
    let started = Instant::now();
    loop {
        let ended = match &mut driver {
            Driver::Child(c) => c.try_wait().ok().flatten().map(|s| s.code()),
            Driver::Attached => follow.measuring_ended(&args.db),
        };
        follow.poll(&args.db, &args.uid, out)?;
        if let Some(code) = ended {
            // One last look: the run's final commits came before its process ended.
            follow.poll(&args.db, &args.uid, out)?;
            return finish(args, &follow, code, out);
        }
        if follow.id.is_none() && started.elapsed() > Duration::from_secs(600) {
            return Err(Stop::Failed(
                "the run did not appear in the host's database within 10 minutes".into(),
            ));
        }
        std::thread::sleep(args.poll);
    }
}

fn finish(
    args: &AgentArgs,
    follow: &Follower,
    code: Option<i32>,
    out: &mut impl Write,
) -> Result<i32, Stop> {
    let tail = if code == Some(0) {
        Vec::new()
    } else {
        log_tail(&log_path(&args.db), 5)
    };
    let Some(status) = &follow.status else {
        // The process ended before it created the run: bad arguments, an unknown study.
        let why = tail.last().cloned().unwrap_or_else(|| "no message".into());
        return Err(Stop::Failed(format!(
            "perflab run ended with exit code {} before it started the run: {why}",
            code.map_or("(killed)".to_string(), |c| c.to_string())
        )));
    };
    write_event(
        out,
        &Event::End {
            status: status.clone(),
            exit_code: code,
            log_tail: tail,
        },
    )?;
    Ok(0)
}

/// The run with this uid in the host's database, if the database and the run exist.
fn find(db: &Path, uid: &str) -> Result<Option<(Store, RunId)>, Stop> {
    if !db.exists() {
        return Ok(None);
    }
    let store = Store::open_existing(db).map_err(|e| Stop::Failed(e.to_string()))?;
    let id = store
        .run_by_uid(uid)
        .map_err(|e| Stop::Failed(e.to_string()))?;
    Ok(id.map(|id| (store, id)))
}

/// Starts `perflab run` in its own session, detached from this connection: stdin from
/// /dev/null, output appended to the log.
fn spawn(args: &AgentArgs, resume: Option<RunId>) -> Result<Child, Stop> {
    let exe = std::env::current_exe()
        .map_err(|e| Stop::Failed(format!("cannot find this perflab: {e}")))?;
    let log_file = log_path(&args.db);
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log_file)
        .map_err(|e| Stop::Failed(format!("cannot open {}: {e}", log_file.display())))?;
    let log2 = log
        .try_clone()
        .map_err(|e| Stop::Failed(format!("{}: {e}", log_file.display())))?;
    let mut c = Command::new(exe);
    c.arg("run");
    match resume {
        Some(id) => {
            c.arg("--resume").arg(id.to_string());
        }
        None => {
            c.args(&args.run_args).arg("--uid").arg(&args.uid);
        }
    }
    c.arg("--db").arg(&args.db);
    c.stdin(Stdio::null())
        .stdout(Stdio::from(log))
        .stderr(Stdio::from(log2));
    // SAFETY: setsid is async-signal-safe and touches nothing of the parent's.
    unsafe {
        c.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    c.spawn()
        .map_err(|e| Stop::Failed(format!("cannot start perflab run: {e}")))
}

/// The last `n` non-empty lines of the run's log (progress redraws end in `\r`).
fn log_tail(path: &Path, n: usize) -> Vec<String> {
    let text = std::fs::read(path).unwrap_or_default();
    let text = String::from_utf8_lossy(&text);
    let lines: Vec<String> = text
        .split(['\n', '\r'])
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect();
    lines[lines.len().saturating_sub(n)..].to_vec()
}

/// What has been sent so far on this connection.
#[derive(Default)]
struct Follower {
    id: Option<RunId>,
    store: Option<Store>,
    planned: Option<u32>,
    counts: Option<(u32, u32, u32)>,
    /// (seq, status word) already sent: a failed measurement retried as ok is sent again.
    sent: std::collections::HashSet<(u32, &'static str)>,
    status: Option<String>,
    last_claim_check: Option<Instant>,
}

impl Follower {
    fn poll(&mut self, db: &Path, uid: &str, out: &mut impl Write) -> Result<(), Stop> {
        if self.store.is_none() {
            if !db.exists() {
                return Ok(());
            }
            match Store::open_existing(db) {
                Ok(s) => self.store = Some(s),
                // A database being created this instant: look again next time.
                Err(_) => return Ok(()),
            }
        }
        let store = self.store.as_ref().expect("opened above");
        if self.id.is_none() {
            self.id = store
                .run_by_uid(uid)
                .map_err(|e| Stop::Failed(e.to_string()))?;
        }
        let Some(id) = self.id else {
            return Ok(());
        };
        let info = store.run(id).map_err(|e| Stop::Failed(e.to_string()))?;
        self.status = Some(info.status.as_str().to_string());
        if self.planned != Some(info.planned) {
            let plan = store.plan(id).map_err(|e| Stop::Failed(e.to_string()))?;
            self.planned = Some(info.planned);
            write_event(
                out,
                &Event::Run {
                    run: Box::new(info.clone()),
                    plan,
                },
            )?;
        }
        let counts = (info.done, info.failed, info.ineffective);
        if self.counts == Some(counts) {
            return Ok(());
        }
        self.counts = Some(counts);
        let records = store
            .measurements(id)
            .map_err(|e| Stop::Failed(e.to_string()))?;
        for rec in records {
            if self.sent.insert((rec.seq, rec.status.word())) {
                write_event(
                    out,
                    &Event::Measurement {
                        record: Box::new(rec),
                    },
                )?;
            }
        }
        Ok(())
    }

    /// Attached to a run another process measures: it has ended when its claim can be
    /// taken (checked once a second; a complete run has ended already).
    fn measuring_ended(&mut self, _db: &Path) -> Option<Option<i32>> {
        if self.status.as_deref() == Some(RunStatus::Complete.as_str()) {
            return Some(None);
        }
        let now = Instant::now();
        if self
            .last_claim_check
            .is_some_and(|t| now.duration_since(t) < Duration::from_secs(1))
        {
            return None;
        }
        self.last_claim_check = Some(now);
        let (store, id) = (self.store.as_ref()?, self.id?);
        store.claim(id).ok().map(|_| None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_tail_skips_progress_redraws() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.db.log");
        std::fs::write(&p, "a\nprogress 1\rprogress 2\r\nerror: no study \"x\"\n\n").unwrap();
        assert_eq!(log_tail(&p, 2), vec!["progress 2", "error: no study \"x\""]);
        assert!(log_tail(&dir.path().join("none"), 3).is_empty());
    }
}
