//! One command of the executable `perflab` run as a child process: its wall time, its
//! peak resident memory (from `wait4`'s rusage, which std's `wait` does not give) and how
//! much it wrote.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::error::{Error, Result};

pub(super) struct Timing {
    pub wall_s: f64,
    pub max_rss_mb: f64,
    /// What the command wrote, e.g. "html 412 KiB" or "stdout 9 KiB".
    pub size: String,
}

/// Runs `perflab --db DB ARGS…` (with `--html FILE` when `html`), standard output to a
/// file, and times it.
pub(super) fn time_child(
    perflab: &Path,
    db: &Path,
    dir: &Path,
    args: &[String],
    html: bool,
) -> Result<Timing> {
    let page = dir.join("r.html");
    let stdout_path = dir.join("stdout");
    let _ = std::fs::remove_file(&page);
    let mut cmd = Command::new(perflab);
    cmd.arg("--db").arg(db).args(args);
    if html {
        cmd.arg("--html").arg(&page);
    }
    // Standard output goes to a file, not a pipe, so the child never waits on this process.
    cmd.stdout(std::fs::File::create(&stdout_path)?)
        .stderr(Stdio::piped())
        .stdin(Stdio::null());
    // A child's max RSS starts from the memory of the process it was started from: with
    // posix_spawn (std's default) the parent's peak, with fork its current RSS. This
    // process held the built runs once, so a hook makes std fork, and `data::build`
    // hands that memory back first (see `data::trim`).
    // SAFETY: the hook does nothing, so nothing unsafe runs between fork and exec.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut cmd, || Ok(()));
    }
    let t0 = Instant::now();
    let mut child = cmd.spawn()?;
    let mut stderr = String::new();
    if let Some(mut e) = child.stderr.take() {
        e.read_to_string(&mut stderr)?;
    }
    let (status, rss_kb) = wait4(child.id())?;
    let wall_s = t0.elapsed().as_secs_f64();
    if !(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0) {
        return Err(Error::Failed(format!(
            "`perflab {}` failed (wait status {status:#x}): {}",
            args.join(" "),
            stderr.trim()
        )));
    }
    let kib = |p: &Path| {
        std::fs::metadata(p)
            .map(|m| m.len().div_ceil(1024))
            .unwrap_or(0)
    };
    let size = if html {
        format!("html {} KiB", kib(&page))
    } else {
        format!("stdout {} KiB", kib(&stdout_path))
    };
    Ok(Timing {
        wall_s,
        max_rss_mb: rss_kb as f64 / 1024.0,
        size,
    })
}

/// Reaps `pid`, returning its wait status and peak resident memory in KiB.
fn wait4(pid: u32) -> Result<(i32, i64)> {
    let pid = libc::pid_t::try_from(pid)
        .map_err(|_| Error::Failed(format!("child pid {pid} out of range")))?;
    loop {
        let mut status = 0;
        // SAFETY: wait4 writes only into the two values this frame owns.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
        if r == pid {
            return Ok((status, ru.ru_maxrss));
        }
        let err = std::io::Error::last_os_error();
        if err.kind() != std::io::ErrorKind::Interrupted {
            return Err(Error::Failed(format!("wait4 on the child {pid}: {err}")));
        }
    }
}
