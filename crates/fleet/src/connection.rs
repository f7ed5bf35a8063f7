//! One ssh connection to a host's agent: start it, read its events into the fleet's store
//! until the run ends or the connection drops.

use std::io::{BufReader, Read};
use std::process::Stdio;
use std::sync::Mutex;

use perflab_store::{
    copy_records, ensure_run, MeasurementRecord, PlannedMeasurement, RunInfo, RunStatus, Store,
};

use crate::hosts::Host;
use crate::ssh::{last_line, Ssh};
use crate::state::{FleetState, HostEntry};
use crate::stream::{read_event, Event, STREAM_VERSION};

/// How a connection ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Ended {
    /// The run ended on the host; `complete` or not.
    Run { complete: bool, why: String },
    /// Not worth retrying (the agent said why, or its stream is not one).
    Fatal(String),
    /// The connection dropped before the run ended: try again.
    Dropped(String),
}

/// What the connection reports as it goes.
pub trait Watch: Sync {
    fn line(&self, host: &str, text: &str);
    /// After every stored measurement: (received, planned).
    fn measured(&self, host: &str, received: u32, planned: u32);
}

/// The remote command: the agent with this host's run uid and the fleet's study and run
/// options; a study that is a file on this side goes as its text.
pub fn agent_argv(
    perflab: &str,
    uid: &str,
    remote_db: Option<&str>,
    job: &FleetState,
) -> Vec<String> {
    let mut v = vec![
        perflab.to_string(),
        "fleet".into(),
        "agent".into(),
        "--uid".into(),
        uid.to_string(),
    ];
    if let Some(db) = remote_db {
        v.push("--db".into());
        v.push(db.to_string());
    }
    if let Some(text) = &job.study_toml {
        v.push("--study-toml".into());
        v.push(text.clone());
    }
    v.push("--".into());
    v.extend(job.run_args.iter().cloned());
    v
}

/// Runs one connection. `connected` is set once the agent said hello (the reconnection
/// window starts again from there); `save` keeps the fleet's record in step after every
/// stored event, so `fleet ls` and a watcher see how far each host got.
#[allow(clippy::too_many_arguments)]
pub fn connect(
    ssh: &Ssh,
    host: &Host,
    argv: &[String],
    entry: &Mutex<HostEntry>,
    store: &Mutex<Store>,
    watch: &dyn Watch,
    connected: &mut bool,
    save: &dyn Fn(),
) -> Ended {
    let mut child = match ssh
        .command(host, argv)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => return Ended::Fatal(format!("cannot run {}: {e}", ssh.program.display())),
    };
    let stderr = child.stderr.take().expect("piped");
    // ssh's and the remote shell's messages, kept for the reason of a drop (the last 8 KiB).
    let errs = std::thread::spawn(move || {
        let mut text = Vec::new();
        let _ = BufReader::new(stderr).take(1 << 20).read_to_end(&mut text);
        let start = text.len().saturating_sub(8192);
        String::from_utf8_lossy(&text[start..]).into_owned()
    });
    let mut out = BufReader::new(child.stdout.take().expect("piped"));
    let mut ended = None;
    // While the host measures, this process claims the fleet's copy of its run, so that
    // readers of the fleet's store see it running; a run stored as running that nobody
    // claims reads as interrupted (see `Store::run`).
    let mut claim: Option<perflab_store::Claim> = None;
    loop {
        match read_event(&mut out) {
            Ok(None) => break,
            Ok(Some(ev)) => {
                let is_run = matches!(ev, Event::Run { .. });
                let stored = is_run || matches!(ev, Event::Measurement { .. });
                if let Some(e) = apply(host, ev, entry, store, watch, connected) {
                    ended = Some(e);
                    break;
                }
                if is_run && claim.is_none() {
                    let id = entry.lock().unwrap_or_else(|p| p.into_inner()).local_run;
                    let s = store.lock().unwrap_or_else(|p| p.into_inner());
                    claim = id.and_then(|id| s.claim(id).ok());
                }
                if stored {
                    save();
                }
            }
            Err(e) => {
                ended = Some(Ended::Fatal(e));
                break;
            }
        }
    }
    if ended.is_some() {
        // The run ended or the stream is broken: nothing more to read.
        let _ = child.kill();
    }
    let status = child.wait();
    let errs = errs.join().unwrap_or_default();
    ended.unwrap_or_else(|| {
        let code = status.ok().and_then(|s| s.code());
        let why = last_line(&errs);
        Ended::Dropped(match code {
            Some(crate::ssh::CONNECTION_FAILED) => crate::ssh::ssh_reason(&errs),
            Some(c) => format!("the agent ended with exit code {c} without ending the run: {why}"),
            None => format!("ssh was killed: {why}"),
        })
    })
}

/// Stores what an event carries; `Some` when the connection is done.
fn apply(
    host: &Host,
    ev: Event,
    entry: &Mutex<HostEntry>,
    store: &Mutex<Store>,
    watch: &dyn Watch,
    connected: &mut bool,
) -> Option<Ended> {
    let name = host.name.as_str();
    match ev {
        Event::Hello {
            stream_version,
            perflab_version,
            action,
        } => {
            if stream_version != STREAM_VERSION {
                return Some(Ended::Fatal(format!(
                    "its perflab {perflab_version} speaks fleet stream version \
                     {stream_version}, this one {STREAM_VERSION}"
                )));
            }
            *connected = true;
            watch.line(name, &format!("agent {action} the run"));
            None
        }
        Event::Run { run, plan } => run_arrived(name, &run, &plan, entry, store, watch),
        Event::Measurement { record } => measured(name, &record, entry, store, watch),
        Event::End {
            status,
            exit_code,
            log_tail,
        } => Some(run_ended(&status, exit_code, &log_tail, entry, store)),
        Event::Error { message } => Some(Ended::Fatal(message)),
    }
}

/// The host's run arrives: stored (once), labelled with the host's name, and noted as
/// the entry's local run.
fn run_arrived(
    name: &str,
    run: &RunInfo,
    plan: &[PlannedMeasurement],
    entry: &Mutex<HostEntry>,
    store: &Mutex<Store>,
    watch: &dyn Watch,
) -> Option<Ended> {
    let mut s = store.lock().unwrap_or_else(|p| p.into_inner());
    match ensure_run(&mut s, run, plan) {
        Ok(id) => {
            let mut e = entry.lock().unwrap_or_else(|p| p.into_inner());
            if e.local_run.is_none() {
                // Reports and `perflab ls` name the run by its host.
                let label = match &run.label {
                    Some(l) => format!("{l} @ {name}"),
                    None => name.to_string(),
                };
                if let Err(err) = s.set_label(id, Some(&label)) {
                    return Some(Ended::Fatal(format!("labelling its run: {err}")));
                }
                watch.line(
                    name,
                    &format!("its run arrives as run {id} ({} planned)", plan.len()),
                );
            }
            e.local_run = Some(id);
            e.planned = plan.len() as u32;
            None
        }
        Err(err) => Some(Ended::Fatal(format!("storing its run: {err}"))),
    }
}

/// One measurement of the host's run, copied into the local run.
fn measured(
    name: &str,
    record: &MeasurementRecord,
    entry: &Mutex<HostEntry>,
    store: &Mutex<Store>,
    watch: &dyn Watch,
) -> Option<Ended> {
    let id = entry.lock().unwrap_or_else(|p| p.into_inner()).local_run;
    let Some(id) = id else {
        return Some(Ended::Fatal(
            "the agent sent a measurement before its run".into(),
        ));
    };
    let mut s = store.lock().unwrap_or_else(|p| p.into_inner());
    if let Err(err) = copy_records(&mut s, id, std::slice::from_ref(record)) {
        return Some(Ended::Fatal(format!(
            "storing measurement {}: {err}",
            record.seq
        )));
    }
    let (ok, failed) = counts(&s, id);
    drop(s);
    let mut e = entry.lock().unwrap_or_else(|p| p.into_inner());
    e.received = (ok, failed);
    watch.measured(name, ok + failed, e.planned);
    None
}

/// The host's run ended: its status stored, and why it did not complete.
fn run_ended(
    status: &str,
    exit_code: Option<i32>,
    log_tail: &[String],
    entry: &Mutex<HostEntry>,
    store: &Mutex<Store>,
) -> Ended {
    let complete = status == "complete";
    let id = entry.lock().unwrap_or_else(|p| p.into_inner()).local_run;
    if let (Some(id), Some(st)) = (id, run_status(status)) {
        let mut s = store.lock().unwrap_or_else(|p| p.into_inner());
        if let Err(err) = s.set_status(id, st) {
            return Ended::Fatal(format!("storing its run's status: {err}"));
        }
    }
    let why = if complete {
        String::new()
    } else {
        format!(
            "the run ended {status} there (exit code {}){}",
            exit_code.map_or("unknown".into(), |c| c.to_string()),
            log_tail
                .last()
                .map(|l| format!(": {l}"))
                .unwrap_or_default()
        )
    };
    Ended::Run { complete, why }
}

fn run_status(word: &str) -> Option<RunStatus> {
    [
        RunStatus::Running,
        RunStatus::Interrupted,
        RunStatus::Complete,
    ]
    .into_iter()
    .find(|s| s.as_str() == word)
}

/// What the fleet's store holds of the run: (ok, failed).
fn counts(store: &Store, id: i64) -> (u32, u32) {
    store.run(id).map(|r| (r.done, r.failed)).unwrap_or((0, 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_study_file_travels_as_its_text() {
        let mut job = FleetState {
            id: "ab".into(),
            created_at: 0.0,
            run_args: vec!["/home/me/mine.toml".into(), "--reps".into(), "3".into()],
            study_toml: Some("name = \"mine\"\nworkload = \"null\"\n".into()),
            db: None,
            hosts: Vec::new(),
        };
        let argv = agent_argv("/p", "00ff", Some("/x.db"), &job);
        assert_eq!(
            argv[..9],
            [
                "/p",
                "fleet",
                "agent",
                "--uid",
                "00ff",
                "--db",
                "/x.db",
                "--study-toml",
                "name = \"mine\"\nworkload = \"null\"\n"
            ]
        );
        assert_eq!(argv[9..], ["--", "/home/me/mine.toml", "--reps", "3"]);
        job.study_toml = None;
        let argv = agent_argv("/p", "00ff", None, &job);
        assert_eq!(argv[5..], ["--", "/home/me/mine.toml", "--reps", "3"]);
    }
}
