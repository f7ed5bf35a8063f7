//! ctxsw process mode when the pong process misbehaves: killed, or stopped (SIGSTOP) when
//! a stop request comes. The crate's tests share one process, whose other tests fork
//! children of their own: the pong under test is found as the child of the one thread that
//! runs the measurement (/proc/self/task/<tid>/children lists the children a thread
//! forked), never another test's. Needs CONFIG_PROC_CHILDREN and is skipped, saying so,
//! without it.
//!
//! "Never hangs" is shown against a 300 s run: the bounds below leave a loaded machine
//! tens of seconds and still prove the run did not wait for its duration.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use perflab_core::{resolve, MeasureCtx, SysRoot, Workload, WorkloadError};
use perflab_workloads::Ctxsw;

/// Whether this kernel lists a task's children (CONFIG_PROC_CHILDREN).
fn children_listed() -> bool {
    SysRoot::host()
        .read_string("proc/thread-self/children")
        .is_ok()
}

/// The pid of the child thread `tid` forked (the pong), once it shows up.
fn find_child(tid: i32) -> i32 {
    let sys = SysRoot::host();
    let deadline = Instant::now() + LIMIT;
    while Instant::now() < deadline {
        let text = sys
            .read_string(&format!("proc/self/task/{tid}/children"))
            .unwrap_or_default();
        if let Some(pid) = text.split_whitespace().find_map(|p| p.parse().ok()) {
            return pid;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    panic!("the pong process never showed up");
}

/// How long a step may take on a loaded machine: a tenth of the run's duration.
const LIMIT: Duration = Duration::from_secs(30);

type Run = std::thread::JoinHandle<Result<f64, WorkloadError>>;

/// Starts a 300 s run on a thread of its own; the run, its context, and the thread's tid
/// (whose child the pong is).
fn start(mech: &str) -> (Run, MeasureCtx, i32) {
    let given: BTreeMap<String, String> = [
        ("cpu_a", "0"),
        ("cpu_b", "0"),
        ("process", "true"),
        ("mechanism", mech),
        ("duration", "300s"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let p = resolve("ctxsw", Ctxsw.info().params, &given).expect("params");
    let ctx = MeasureCtx::new(SysRoot::host(), vec![0]);
    let c = ctx.clone();
    let (tx, rx) = std::sync::mpsc::channel();
    let h = std::thread::spawn(move || {
        // SAFETY: gettid has no preconditions.
        let _ = tx.send(unsafe { libc::syscall(libc::SYS_gettid) } as i32);
        Ctxsw.run(&p, &c).map(|o| {
            o.metric("round_trips_per_s")
                .map(|m| m.value)
                .unwrap_or(0.0)
        })
    });
    let tid = rx.recv().expect("the run thread's tid");
    (h, ctx, tid)
}

fn signal(pid: i32, sig: libc::c_int) {
    // SAFETY: signalling our own child.
    unsafe { libc::kill(pid, sig) };
}

#[test]
fn misbehaving_pong_process_never_hangs_the_run() {
    if !children_listed() {
        perflab_testkit::skip(
            "proc-children",
            "this kernel has no /proc/<pid>/task/<tid>/children (CONFIG_PROC_CHILDREN)",
        );
        return;
    }
    for mech in ["pipe", "futex", "eventfd"] {
        // Killed: ping waits on a peer that is gone.
        let (h, _ctx, tid) = start(mech);
        std::thread::sleep(Duration::from_millis(100));
        let pid = find_child(tid);
        let t0 = Instant::now();
        signal(pid, libc::SIGKILL);
        let res = h.join().expect("run thread");
        assert!(t0.elapsed() < LIMIT, "{mech}: {:?}", t0.elapsed());
        match res {
            Err(WorkloadError::Failed(m)) => assert!(m.contains("pong"), "{mech}: {m}"),
            other => panic!("{mech}: {other:?}"),
        }

        // Stopped: ping blocks, then the user asks to stop.
        let (h, ctx, tid) = start(mech);
        std::thread::sleep(Duration::from_millis(100));
        let pid = find_child(tid);
        signal(pid, libc::SIGSTOP);
        std::thread::sleep(Duration::from_millis(100));
        let t0 = Instant::now();
        ctx.stop.store(true, Ordering::Relaxed);
        let res = h.join().expect("run thread");
        assert!(t0.elapsed() < LIMIT, "{mech}: {:?}", t0.elapsed());
        assert!(
            matches!(res, Err(WorkloadError::Interrupted)),
            "{mech}: {res:?}"
        );
    }
}
