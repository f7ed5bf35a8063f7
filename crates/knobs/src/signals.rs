//! SIGINT, SIGTERM and SIGHUP set perflab's stop flag instead of killing it, so that the
//! runner stops at its next check and the knob guards restore on the normal path.
//!
//! A second signal only sets the flag again: ending the process at once would skip the
//! restore, and a stuck perflab can still be SIGKILLed and `perflab restore`d. Once the last
//! [`SignalGuard`] is dropped, these signals end the process as they did before.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::SigId;

use crate::error::KnobError;

/// The signals that ask perflab to stop.
pub const STOP_SIGNALS: [i32; 3] = [SIGINT, SIGTERM, SIGHUP];

/// While registered, the stop signals set the flag; dropping it unregisters them.
#[derive(Debug)]
pub struct SignalGuard {
    ids: Vec<SigId>,
    last: Arc<AtomicUsize>,
}

impl SignalGuard {
    /// The last stop signal received while this guard was installed, if any; a CLI exits
    /// with 128 + that number, as a shell expects.
    pub fn received(&self) -> Option<i32> {
        match self.last.load(Ordering::SeqCst) {
            0 => None,
            n => i32::try_from(n).ok(),
        }
    }
}

/// signal-hook never reinstates the previous disposition on unregister, so the default
/// action is emulated by a handler registered once per process and armed whenever no
/// guard is installed.
struct Fallback {
    armed: Arc<AtomicBool>,
    guards: usize,
}

fn fallback() -> &'static Mutex<Option<Fallback>> {
    static FALLBACK: OnceLock<Mutex<Option<Fallback>>> = OnceLock::new();
    FALLBACK.get_or_init(|| Mutex::new(None))
}

/// Makes SIGINT, SIGTERM and SIGHUP set `stop` until the guard is dropped.
pub fn install(stop: Arc<AtomicBool>) -> Result<SignalGuard, KnobError> {
    let mut fb = fallback().lock().unwrap_or_else(|p| p.into_inner());
    if fb.is_none() {
        let armed = Arc::new(AtomicBool::new(false));
        for sig in STOP_SIGNALS {
            signal_hook::flag::register_conditional_default(sig, Arc::clone(&armed))
                .map_err(KnobError::Signal)?;
        }
        *fb = Some(Fallback { armed, guards: 0 });
    }
    let last = Arc::new(AtomicUsize::new(0));
    let mut guard = SignalGuard {
        ids: Vec::new(),
        last: Arc::clone(&last),
    };
    for sig in STOP_SIGNALS {
        // The flag first: once it is set, the runner stops whatever else happens.
        let registered = signal_hook::flag::register(sig, Arc::clone(&stop)).and_then(|id| {
            guard.ids.push(id);
            let value = usize::try_from(sig).unwrap_or(usize::MAX);
            signal_hook::flag::register_usize(sig, Arc::clone(&last), value)
        });
        match registered {
            Ok(id) => guard.ids.push(id),
            // Dropping the partial guard unregisters what was registered; it does not
            // touch the fallback count, which this guard has not joined yet.
            Err(e) => {
                for id in guard.ids.drain(..) {
                    signal_hook::low_level::unregister(id);
                }
                return Err(KnobError::Signal(e));
            }
        }
    }
    if let Some(fb) = fb.as_mut() {
        fb.guards += 1;
        fb.armed.store(false, Ordering::SeqCst);
    }
    Ok(guard)
}

impl Drop for SignalGuard {
    fn drop(&mut self) {
        if self.ids.is_empty() {
            return;
        }
        for id in self.ids.drain(..) {
            signal_hook::low_level::unregister(id);
        }
        let mut fb = fallback().lock().unwrap_or_else(|p| p.into_inner());
        if let Some(fb) = fb.as_mut() {
            fb.guards = fb.guards.saturating_sub(1);
            if fb.guards == 0 {
                fb.armed.store(true, Ordering::SeqCst);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;
    use std::process::Command;

    #[test]
    fn stop_signals_set_the_flag_and_repeat_safely() {
        let stop = Arc::new(AtomicBool::new(false));
        let guard = install(Arc::clone(&stop)).unwrap();
        assert_eq!(guard.received(), None);
        // SAFETY: raise only delivers a signal to this thread, whose handler is installed.
        unsafe { libc::raise(SIGHUP) };
        assert!(stop.load(Ordering::SeqCst));
        assert_eq!(guard.received(), Some(SIGHUP));
        unsafe { libc::raise(SIGINT) };
        unsafe { libc::raise(SIGINT) };
        assert_eq!(guard.received(), Some(SIGINT));
        drop(guard);
    }

    const CHILD: &str = "PERFLAB_SIGNALS_TEST_CHILD";

    /// Runs in a child process (see the test below): after the guard is gone, SIGTERM must
    /// end the process again. Not a test on its own: ignored, and run only with
    /// `--ignored --exact`.
    #[test]
    #[ignore = "helper process: spawned by signals_end_the_process_again_after_the_guard_is_dropped, not a test on its own"]
    fn child_default_after_drop() {
        perflab_testkit::helper_env(
            CHILD,
            "signals_end_the_process_again_after_the_guard_is_dropped",
        );
        let stop = Arc::new(AtomicBool::new(false));
        drop(install(stop).unwrap());
        unsafe { libc::raise(SIGTERM) };
        std::thread::sleep(std::time::Duration::from_millis(200));
        std::process::exit(0);
    }

    #[test]
    fn signals_end_the_process_again_after_the_guard_is_dropped() {
        let status = Command::new(std::env::current_exe().unwrap())
            .args([
                "--ignored",
                "--exact",
                "signals::tests::child_default_after_drop",
                "--test-threads=1",
            ])
            .env(CHILD, "1")
            .output()
            .unwrap()
            .status;
        assert_eq!(status.signal(), Some(SIGTERM), "{status:?}");
    }
}
