//! Stopping a process perflab started (a guest's QEMU, the KVM probe's) by its pid, start
//! time and command name, from its guard or from `perflab restore` in another process
//! after a kill. A pid whose start time or name differs now names another process (the
//! pid was recycled): that one is never signalled.

use std::time::{Duration, Instant};

use perflab_sys::SysRoot;

use crate::owner::parse_proc_stat;

/// How long a process gets to exit on SIGTERM before SIGKILL. A QEMU hung in a nested
/// KVM's firmware ignores SIGTERM, so this stays short.
const GRACE: Duration = Duration::from_secs(2);

/// How long a SIGKILLed process may take to go.
const KILL_WAIT: Duration = Duration::from_secs(5);

/// The start time of `pid` (field 22 of its stat), or `None` when there is no such
/// process or it is a zombie.
pub fn start_ticks(pid: u32) -> Option<u64> {
    let stat = parse_proc_stat(SysRoot::host().open(&format!("proc/{pid}/stat")).ok()?)?;
    (stat.state != 'Z' && stat.state != 'X').then_some(stat.start_ticks)
}

/// The command name of `pid` (`/proc/<pid>/comm`, at most 15 bytes: QEMU's is
/// `qemu-system-x86`), recorded with the pid so that a recycled pid is told apart.
pub fn comm(pid: u32) -> Option<String> {
    SysRoot::host()
        .read_trimmed(&format!("proc/{pid}/comm"))
        .ok()
}

/// Whether `pid` is still the process recorded (zombie or not).
fn same(pid: u32, ticks: u64, name: Option<&str>) -> Option<char> {
    let stat = parse_proc_stat(SysRoot::host().open(&format!("proc/{pid}/stat")).ok()?)?;
    if stat.start_ticks != ticks {
        return None;
    }
    if let Some(name) = name {
        // A zombie keeps its comm; a process that exec'd something else is not ours.
        if comm(pid).is_some_and(|c| c != name) {
            return None;
        }
    }
    Some(stat.state)
}

/// Stops the process `pid` if it is still the one that started at `ticks` (and, when
/// given, is named `name`): SIGTERM, then SIGKILL after [`GRACE`]. A process that is gone,
/// or whose pid now names another, is as good as stopped. A child of this process is
/// reaped, so a long run that boots guests leaves no defunct QEMU behind.
pub fn stop(pid: u32, ticks: u64, name: Option<&str>) -> Result<(), String> {
    let Ok(raw) = libc::pid_t::try_from(pid) else {
        return Ok(());
    };
    if raw <= 0 {
        return Ok(());
    }
    match same(pid, ticks, name) {
        None => return Ok(()),
        // Exited already: only its exit status is left, for its parent to collect.
        Some('Z' | 'X') => {
            reap(raw);
            return Ok(());
        }
        Some(_) => {}
    }
    // SAFETY: the pid names the process recorded (checked just above).
    unsafe { libc::kill(raw, libc::SIGTERM) };
    if wait_gone(pid, raw, ticks, name, GRACE) {
        return Ok(());
    }
    // SAFETY: as above; SIGKILL cannot be caught.
    unsafe { libc::kill(raw, libc::SIGKILL) };
    match wait_gone(pid, raw, ticks, name, KILL_WAIT) {
        true => Ok(()),
        false => Err(format!("pid {pid} survived SIGKILL")),
    }
}

/// Waits up to `limit` for the process to exit, reaping it when it is ours.
fn wait_gone(pid: u32, raw: libc::pid_t, ticks: u64, name: Option<&str>, limit: Duration) -> bool {
    let started = Instant::now();
    loop {
        match same(pid, ticks, name) {
            None => return true,
            Some('Z' | 'X') => {
                reap(raw);
                return true;
            }
            Some(_) if started.elapsed() > limit => return false,
            Some(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

/// Collects the exit status of `raw` if it is a child of this process; for anyone else's
/// process this is ECHILD and nothing happens.
fn reap(raw: libc::pid_t) {
    // SAFETY: WNOHANG on a pid that is ours or not: at worst ECHILD.
    unsafe { libc::waitpid(raw, std::ptr::null_mut(), libc::WNOHANG) };
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zombie(pid: u32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|s| s.rsplit(')').next().unwrap().trim_start().starts_with('Z'))
    }

    #[test]
    fn stops_a_child_and_ignores_a_pid_with_another_start_time_or_name() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let pid = child.id();
        let ticks = start_ticks(pid).unwrap();
        assert_eq!(comm(pid).as_deref(), Some("sleep"));
        stop(pid, ticks + 1, None).unwrap();
        stop(pid, ticks, Some("qemu-system-x86")).unwrap();
        assert!(
            child.try_wait().unwrap().is_none(),
            "a different start time or name must not be stopped"
        );
        stop(pid, ticks, Some("sleep")).unwrap();
        // stop() reaps its own children, so the pid is gone, zombie and all.
        assert_eq!(start_ticks(pid), None);
        assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists());
        let _ = child.try_wait();
        stop(pid, ticks, None).unwrap();
    }

    /// A guest that exited on its own (QEMU died mid-run) is a zombie until someone waits
    /// for it; stopping it reaps it instead of leaving `<defunct>` for the rest of the run.
    #[test]
    fn an_exited_child_is_reaped_not_left_defunct() {
        let child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        let ticks = {
            let stat = parse_proc_stat(SysRoot::host().open(&format!("proc/{pid}/stat")).unwrap());
            stat.unwrap().start_ticks
        };
        let started = Instant::now();
        while !zombie(pid) {
            assert!(started.elapsed() < Duration::from_secs(5));
            std::thread::sleep(Duration::from_millis(5));
        }
        stop(pid, ticks, Some("true")).unwrap();
        assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists());
        drop(child);
    }

    /// A process that ignores SIGTERM (QEMU hung in firmware) is SIGKILLed after the grace.
    #[test]
    fn a_process_ignoring_sigterm_is_killed() {
        let mut child = std::process::Command::new("sh")
            .args(["-c", "trap '' TERM; while :; do sleep 0.05; done"])
            .spawn()
            .unwrap();
        let pid = child.id();
        std::thread::sleep(Duration::from_millis(100));
        let ticks = start_ticks(pid).unwrap();
        stop(pid, ticks, comm(pid).as_deref()).unwrap();
        assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists());
        let _ = child.try_wait();
    }
}
