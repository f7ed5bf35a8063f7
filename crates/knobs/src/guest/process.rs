//! Stopping a process perflab started (a guest's QEMU) by its pid and start time, from
//! its guard or from `perflab restore` in another process after a kill.

use std::time::{Duration, Instant};

use perflab_sys::SysRoot;

use crate::owner::parse_proc_stat;

/// How long a process gets to exit on SIGTERM before SIGKILL.
const GRACE: Duration = Duration::from_secs(3);

/// The start time of `pid` (field 22 of its stat), or `None` when there is no such
/// process or it is a zombie.
pub fn start_ticks(pid: u32) -> Option<u64> {
    let stat = parse_proc_stat(SysRoot::host().open(&format!("proc/{pid}/stat")).ok()?)?;
    (stat.state != 'Z' && stat.state != 'X').then_some(stat.start_ticks)
}

/// Stops the process `pid` if it is still the one that started at `ticks`: SIGTERM, then
/// SIGKILL after [`GRACE`]. A process that is gone, or whose pid now names another, is
/// as good as stopped.
pub fn stop(pid: u32, ticks: u64) -> Result<(), String> {
    let Ok(raw) = libc::pid_t::try_from(pid) else {
        return Ok(());
    };
    if raw <= 0 || start_ticks(pid) != Some(ticks) {
        return Ok(());
    }
    // SAFETY: the pid names the process started at `ticks` (checked just above).
    unsafe { libc::kill(raw, libc::SIGTERM) };
    let started = Instant::now();
    while start_ticks(pid) == Some(ticks) {
        if started.elapsed() > GRACE {
            // SAFETY: as above; SIGKILL cannot be caught.
            unsafe { libc::kill(raw, libc::SIGKILL) };
            std::thread::sleep(Duration::from_millis(100));
            return match start_ticks(pid) == Some(ticks) {
                true => Err(format!("pid {pid} survived SIGKILL")),
                false => Ok(()),
            };
        }
        // Our own child becomes a zombie until reaped; reap it if it is ours.
        // SAFETY: WNOHANG on a pid that is ours or not: at worst ECHILD.
        unsafe { libc::waitpid(raw, std::ptr::null_mut(), libc::WNOHANG) };
        std::thread::sleep(Duration::from_millis(20));
    }
    // A child of ours that exited is a zombie until reaped: reap it, so a long run that
    // boots a guest per measurement leaves none behind.
    // SAFETY: as above.
    unsafe { libc::waitpid(raw, std::ptr::null_mut(), libc::WNOHANG) };
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stops_a_child_and_ignores_a_pid_with_another_start_time() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let pid = child.id();
        let ticks = start_ticks(pid).unwrap();
        stop(pid, ticks + 1).unwrap();
        assert!(
            child.try_wait().unwrap().is_none(),
            "a different start time must not be stopped"
        );
        stop(pid, ticks).unwrap();
        // stop() reaps its own children, so the pid is gone, zombie and all.
        assert_eq!(start_ticks(pid), None);
        assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists());
        let _ = child.try_wait();
        stop(pid, ticks).unwrap();
    }
}
