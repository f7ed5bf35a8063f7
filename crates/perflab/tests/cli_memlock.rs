//! Issue 31 item 15: `run memxfer --quick` as a user exited 141 and left its run
//! interrupted. Its pvm peer could not lock a pinned buffer past the user's 8 MiB
//! locked-memory limit and exited; perflab's next command to it raised SIGPIPE, still at
//! its default. Now the plan leaves out pinned points past the limit (saying why and how
//! to raise it), `doctor` reports the limit, SIGPIPE is ignored, and a failed print is an
//! error. Root plays the user here: `setpriv` drops CAP_IPC_LOCK (which lifts the limit)
//! and `prlimit` sets the limit a user has.

use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Output, Stdio};

use crate::common;

use common::{text, Lab};

const USER_LIMIT: &str = "--memlock=8388608";

/// perflab under a user's locked-memory limit and without CAP_IPC_LOCK, or `None` (the
/// test skipped, saying why) where that cannot be arranged.
fn as_user(lab: &Lab, args: &[&str]) -> Option<Output> {
    if !perflab_testkit::have_root("dropping CAP_IPC_LOCK and lowering RLIMIT_MEMLOCK")
        || !perflab_testkit::have_tool("setpriv", "util-linux")
        || !perflab_testkit::have_tool("prlimit", "util-linux")
    {
        return None;
    }
    let o = Command::new("prlimit")
        .args([USER_LIMIT, "setpriv", "--bounding-set=-ipc_lock"])
        .args(["--inh-caps=-ipc_lock", env!("CARGO_BIN_EXE_perflab")])
        .args(args)
        .env("PERFLAB_DB", lab.db())
        .env("PERFLAB_JOURNAL", lab.journal())
        // As every test's perflab (common::Lab): this one runs beside other builds.
        .env("PERFLAB_DISTURBED_ABOVE", "100")
        .current_dir(lab.dir.path())
        .output()
        .expect("run prlimit");
    Some(o)
}

#[test]
fn pinned_points_past_the_locked_memory_limit_are_left_out_and_the_run_completes() {
    let lab = Lab::new();
    let args = [
        "run",
        "--workload",
        "xfer",
        "-p",
        "engine=pvm,memcpy",
        "-p",
        "state=pinned,unpinned",
        "-p",
        "size=4M,32M",
        "-p",
        "duration=20ms",
        "--reps",
        "1",
        "--monitors",
        "cpu_time",
    ];
    let Some(o) = as_user(&lab, &args) else {
        return;
    };
    let (out, err) = text(&o);
    assert_eq!(o.status.signal(), None, "killed: {err}");
    assert_eq!(o.status.code(), Some(0), "{out}\n{err}");
    // pvm locks one 32M buffer here, memcpy two: both past 8M; memcpy's two 4M fit.
    assert!(
        err.contains("skipping 2 point(s) with pinned buffers")
            && err.contains("above the locked-memory limit of 8M (ulimit -l)")
            && err.contains("ulimit -l unlimited"),
        "{err}"
    );
    assert!(
        err.contains(": complete (") && err.contains(", 0 failed"),
        "{err}"
    );
    let o = as_user(&lab, &["doctor"]).unwrap();
    let (out, _) = text(&o);
    let line = out
        .lines()
        .find(|l| l.contains("locked memory"))
        .unwrap_or_else(|| panic!("no locked memory line: {out}"));
    assert!(
        line.starts_with("partial") && line.contains("8M per process (ulimit -l)"),
        "{line}"
    );
}

#[test]
fn a_run_of_only_pinned_points_past_the_limit_is_refused_with_the_fix() {
    let lab = Lab::new();
    let args = [
        "run",
        "--workload",
        "xfer",
        "-p",
        "engine=pvm",
        "-p",
        "state=pinned",
        "-p",
        "size=32M",
        "--dry-run",
    ];
    let Some(o) = as_user(&lab, &args) else {
        return;
    };
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}\n{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(
            "can lock its buffers: its pinned buffers lock 32M in one process, above \
             the locked-memory limit of 8M (ulimit -l)"
        ),
        "{err}"
    );
    assert!(!lab.db().exists(), "a database was written");
}

/// A reader that is gone before perflab writes: an error (exit 1), quietly, as a Unix
/// filter ends; before, SIGPIPE killed perflab (status 141 in a shell).
#[test]
fn a_closed_stdout_ends_perflab_with_an_error_not_a_signal() {
    let lab = Lab::new();
    let mut fds = [0; 2];
    // SAFETY: pipe fills two descriptors, which we then own.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: the read end is ours; closing it leaves a pipe nobody reads.
    unsafe { libc::close(fds[0]) };
    // SAFETY: the write end is ours and handed to the child's stdout only.
    let stdout = unsafe { <Stdio as std::os::fd::FromRawFd>::from_raw_fd(fds[1]) };
    let o = lab
        .cmd()
        .arg("list")
        .stdout(stdout)
        .stderr(Stdio::piped())
        .output()
        .expect("run perflab");
    assert_eq!(o.status.signal(), None, "perflab died of a signal");
    assert_eq!(o.status.code(), Some(1));
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}
