//! `process=true`: the pong side runs in a forked child, so each hand-over also switches
//! address space (context_switch2's default, perf bench sched pipe without -T).
//!
//! The child only pins itself, answers, and writes its thread record (or its error) as
//! JSON into a result pipe before `_exit`. The parent's supervisor checks the child every
//! 50 ms; if it ends while ping still waits, it posts a Stop into ping's own receive
//! direction. A child that does not leave after Stop is killed.

use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::signal::{kill, Signal};
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::{fork, ForkResult, Pid};
use perflab_core::{MeasureCtx, ThreadRecord, ThreadTracker, WorkloadError};
use serde::{Deserialize, Serialize};

use super::channel::Endpoint;
use super::sides::{self, combine, PingResult, RunSpec, SideError};

/// What the child sends back.
#[derive(Debug, Default, Serialize, Deserialize)]
struct ChildReport {
    records: Vec<ThreadRecord>,
    error: Option<String>,
}

fn failed(what: &str, e: impl std::fmt::Display) -> WorkloadError {
    WorkloadError::Failed(format!("ctxsw process mode: {what}: {e}"))
}

pub(super) fn measure<E: Endpoint>(
    ping_end: E,
    pong_end: E,
    spec: RunSpec,
    ctx: &MeasureCtx,
) -> Result<PingResult, WorkloadError> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills the two descriptors we then own.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } < 0 {
        return Err(failed("result pipe", std::io::Error::last_os_error()));
    }
    // SAFETY: both descriptors were just created and are owned by nobody else.
    let (result_r, result_w) =
        unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };

    // SAFETY: the child touches only what it owns after the fork (its endpoint, a fresh
    // tracker, the result pipe) and leaves with _exit, never returning into the caller.
    match unsafe { fork() }.map_err(|e| failed("fork", e))? {
        ForkResult::Child => {
            drop(ping_end);
            drop(result_r);
            let code = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                child_main(&pong_end, spec, &result_w)
            }))
            .unwrap_or(101);
            // SAFETY: ends the child without running the parent's atexit handlers.
            unsafe { libc::_exit(code) }
        }
        ForkResult::Parent { child } => {
            drop(pong_end);
            drop(result_w);
            parent_main(ping_end, child, result_r, spec, ctx)
        }
    }
}

fn child_main<E: Endpoint>(end: &E, spec: RunSpec, out: &OwnedFd) -> i32 {
    let tracker = ThreadTracker::new();
    let res = sides::pong(end, spec.cpu_b, spec.plan.work_ns, &tracker);
    let report = ChildReport {
        records: tracker.take(),
        error: match res {
            Ok(_) => None,
            Err(SideError::Failed(m)) => Some(m),
            Err(e) => Some(WorkloadError::from(e).to_string()),
        },
    };
    let Ok(bytes) = serde_json::to_vec(&report) else {
        return 2;
    };
    let mut off = 0;
    while off < bytes.len() {
        // SAFETY: writes from a live buffer of the given length.
        let n = unsafe {
            libc::write(
                out.as_raw_fd(),
                bytes[off..].as_ptr().cast(),
                bytes.len() - off,
            )
        };
        if n <= 0 {
            return 3;
        }
        off += n as usize;
    }
    0
}

/// The child's status if it has ended.
fn try_wait(child: Pid) -> Option<nix::Result<WaitStatus>> {
    match waitpid(child, Some(WaitPidFlag::WNOHANG)) {
        Ok(WaitStatus::StillAlive) | Err(Errno::EINTR) => None,
        other => Some(other),
    }
}

/// Waits for a child that has been sent Stop; one that has not left within half a second
/// (a healthy one leaves within microseconds) is killed, so a wedged child never hangs
/// the run.
fn reap(child: Pid) -> nix::Result<WaitStatus> {
    let deadline = Instant::now() + Duration::from_millis(500);
    while Instant::now() < deadline {
        if let Some(st) = try_wait(child) {
            return st;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let _ = kill(child, Signal::SIGKILL);
    loop {
        match waitpid(child, None) {
            Err(Errno::EINTR) => continue,
            other => return other,
        }
    }
}

fn parent_main<E: Endpoint>(
    ping_end: E,
    child: Pid,
    result_r: OwnedFd,
    spec: RunSpec,
    ctx: &MeasureCtx,
) -> Result<PingResult, WorkloadError> {
    let (ping, status) = std::thread::scope(|s| {
        let ping = s.spawn(|| sides::ping(&ping_end, spec.plan, ctx));
        let mut status = None;
        super::supervise::until_ping_done(
            &ping_end,
            ctx,
            || ping.is_finished(),
            || {
                if status.is_none() {
                    status = try_wait(child);
                }
                status.is_some()
            },
        );
        let ping = ping
            .join()
            .unwrap_or_else(|_| Err(SideError::Failed("ctxsw: the ping thread panicked".into())));
        let status = match status {
            Some(st) => st,
            None => reap(child),
        };
        (ping, status)
    });

    let mut bytes = Vec::new();
    // The child has exited, so all it wrote is in the pipe; non-blocking read stops there
    // even if another process inherited the write end.
    let _ = std::fs::File::from(result_r).read_to_end(&mut bytes);
    let report: Option<ChildReport> = serde_json::from_slice(&bytes).ok();

    let pong = match (&status, &report) {
        (_, Some(r)) if r.error.is_some() => {
            Err(SideError::Failed(r.error.clone().unwrap_or_default()))
        }
        (Ok(WaitStatus::Exited(_, 0)), Some(_)) => Ok(()),
        (Ok(st), _) => Err(SideError::Failed(format!(
            "ctxsw: the pong process ended abnormally ({st:?})"
        ))),
        (Err(e), _) => Err(SideError::Failed(format!(
            "ctxsw: waitpid on the pong process: {e}"
        ))),
    };
    if let Some(r) = report {
        for rec in r.records {
            ctx.threads.add(rec);
        }
    }
    combine(ping, pong)
}
