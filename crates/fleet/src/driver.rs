//! Running a study on every host of a fleet at once, each host in its own thread, all
//! streaming into one store. A host that cannot be reached, or lacks what the study needs,
//! is said with the reason and the others go on. A dropped connection is retried with
//! growing pauses for `reconnect_for`; the host's run never stops meanwhile (the agent
//! detached it), so a reconnection only has to catch up.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use perflab_store::Store;

use crate::connection::{agent_argv, connect, Ended, Watch};
use crate::provision::{provision, Local, Remote, Unready, Want};
use crate::ssh::Ssh;
use crate::state::{FleetState, HostEntry, HostStatus};

/// How the fleet reaches its hosts.
#[derive(Clone, Debug)]
pub struct Fleet {
    pub ssh: Ssh,
    pub want: Want,
    /// How long a host may stay unreachable before it is given up (for this invocation).
    pub reconnect_for: Duration,
    /// The database path on the hosts [default: the agent's, under the login user's data
    /// directory, named by the run's uid].
    pub remote_db: Option<String>,
    /// Where the fleet's record is saved after every change.
    pub state_dir: PathBuf,
}

/// The pause before reconnection attempt `n` (1-based): 1, 2, 4, 8, then 10 s.
pub fn backoff(n: u32) -> Duration {
    Duration::from_secs(1u64 << n.saturating_sub(1).min(4)).min(Duration::from_secs(10))
}

/// Runs every host of `state` that is not complete (those `only` names, when given),
/// saving the state as hosts progress. Returns when every host is complete, failed, or
/// unreachable past the window, or when `stop` is set.
pub fn run(
    fleet: &Fleet,
    state: &mut FleetState,
    store: Store,
    local: &Local,
    watch: &dyn Watch,
    stop: &AtomicBool,
) -> Store {
    let store = Mutex::new(store);
    let entries: Vec<Mutex<HostEntry>> = state.hosts.iter().cloned().map(Mutex::new).collect();
    // What every host runs (the study and its options); `shared` is the record as saved.
    let job = state.clone();
    let shared = Mutex::new(state.clone());
    std::thread::scope(|scope| {
        for (i, entry) in entries.iter().enumerate() {
            if entry.lock().expect("fresh").status == HostStatus::Complete {
                continue;
            }
            let (store, shared, job) = (&store, &shared, &job);
            scope.spawn(move || {
                let save = || {
                    let mut st = shared.lock().unwrap_or_else(|p| p.into_inner());
                    st.hosts[i] = entry.lock().unwrap_or_else(|p| p.into_inner()).clone();
                    if let Err(e) = st.save(&fleet.state_dir) {
                        watch.line("fleet", &format!("cannot save the fleet record: {e}"));
                    }
                };
                host(fleet, job, entry, store, local, watch, stop, &save);
                save();
            });
        }
    });
    *state = shared.into_inner().unwrap_or_else(|p| p.into_inner());
    store.into_inner().unwrap_or_else(|p| p.into_inner())
}

#[allow(clippy::too_many_arguments)]
fn host(
    fleet: &Fleet,
    job: &FleetState,
    entry: &Mutex<HostEntry>,
    store: &Mutex<Store>,
    local: &Local,
    watch: &dyn Watch,
    stop: &AtomicBool,
    save: &dyn Fn(),
) {
    let (h, uid) = {
        let e = entry.lock().unwrap_or_else(|p| p.into_inner());
        (e.host.clone(), e.uid.clone())
    };
    let name = h.name.as_str();
    let set = |status: HostStatus, reason: String| set_status(entry, status, reason);
    let mut remote: Option<Remote> = None;
    let mut down_since: Option<Instant> = None;
    let mut attempt = 0u32;
    loop {
        if stop.load(Ordering::Relaxed) {
            set(
                HostStatus::Pending,
                "interrupted here; the host's run goes on".into(),
            );
            return;
        }
        let failure = match &remote {
            None => match provision(&fleet.ssh, &h, &fleet.want, local) {
                Ok(r) => {
                    watch.line(name, &r.how);
                    remote = Some(r);
                    continue;
                }
                Err(Unready::Lacks(why)) => {
                    watch.line(name, &format!("skipped: {why}"));
                    set(HostStatus::Failed, why);
                    return;
                }
                Err(Unready::Connect(why)) => why,
            },
            Some(r) => {
                let argv = agent_argv(&r.path, &uid, fleet.remote_db.as_deref(), job);
                let mut connected = false;
                let ended = connect(
                    &fleet.ssh,
                    &h,
                    &argv,
                    entry,
                    store,
                    watch,
                    &mut connected,
                    save,
                );
                save();
                if connected {
                    down_since = None;
                    attempt = 0;
                }
                match settle(name, ended, entry, watch) {
                    Some(dropped) => dropped,
                    None => return,
                }
            }
        };
        if stop.load(Ordering::Relaxed) {
            continue;
        }
        let since = *down_since.get_or_insert_with(Instant::now);
        if since.elapsed() >= fleet.reconnect_for {
            give_up(name, since, failure, entry, watch);
            return;
        }
        attempt += 1;
        wait_to_retry(name, attempt, &failure, watch, stop);
    }
}

/// Records the host's status and why.
fn set_status(entry: &Mutex<HostEntry>, status: HostStatus, reason: String) {
    let mut e = entry.lock().unwrap_or_else(|p| p.into_inner());
    e.status = status;
    e.reason = reason;
}

/// The host stayed unreachable past the reconnect time: said, and marked so.
fn give_up(
    name: &str,
    since: Instant,
    failure: String,
    entry: &Mutex<HostEntry>,
    watch: &dyn Watch,
) {
    watch.line(
        name,
        &format!(
            "unreachable for {:.0} s, given up for now: {failure}",
            since.elapsed().as_secs_f64()
        ),
    );
    set_status(entry, HostStatus::Unreachable, failure);
}

/// Records how a connection that ended the host's part ended; `Some(why)` when it only
/// dropped, so the host is tried again.
fn settle(name: &str, ended: Ended, entry: &Mutex<HostEntry>, watch: &dyn Watch) -> Option<String> {
    let set = |status: HostStatus, reason: String| set_status(entry, status, reason);
    match ended {
        Ended::Run { complete: true, .. } => {
            set(HostStatus::Complete, String::new());
            let (ok, failed) = entry.lock().unwrap_or_else(|p| p.into_inner()).received;
            watch.line(name, &format!("complete: {ok} ok, {failed} failed"));
            None
        }
        Ended::Run {
            complete: false,
            why,
        } => {
            watch.line(name, &why);
            set(HostStatus::Incomplete, why);
            None
        }
        Ended::Fatal(why) => {
            watch.line(name, &format!("failed: {why}"));
            set(HostStatus::Failed, why);
            None
        }
        Ended::Dropped(why) => Some(why),
    }
}

/// Says the connection was lost and waits the back-off for `attempt`, in small steps so
/// an interrupt is not kept waiting.
fn wait_to_retry(name: &str, attempt: u32, failure: &str, watch: &dyn Watch, stop: &AtomicBool) {
    let pause = backoff(attempt);
    watch.line(
        name,
        &format!(
            "connection lost ({failure}); trying again in {} s",
            pause.as_secs()
        ),
    );
    let until = Instant::now() + pause;
    while Instant::now() < until && !stop.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_then_stays() {
        let s: Vec<u64> = (1..=7).map(|n| backoff(n).as_secs()).collect();
        assert_eq!(s, vec![1, 2, 4, 8, 10, 10, 10]);
    }
}
