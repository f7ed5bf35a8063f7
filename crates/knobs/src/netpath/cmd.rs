//! Running the system tools a network path is built with (`ip`, `ovs-vsctl`), with a time
//! limit, so that a wedged ovsdb or a stuck netlink call cannot hang a run.

use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use perflab_sys::probe::tools::find_tool;

use crate::error::KnobError;

/// How long one `ip` or `ovs-vsctl` call may take. They take milliseconds; seconds mean
/// something is stuck.
pub(crate) const TIMEOUT: Duration = Duration::from_secs(20);

/// What a finished command printed.
#[derive(Debug)]
pub(crate) struct Output {
    pub ok: bool,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `tool args…` (feeding `stdin` when given) and waits at most `timeout`; a command
/// still running then is killed. An error only when it could not start or timed out.
pub(crate) fn output(
    tool: &str,
    args: &[&str],
    stdin: Option<&str>,
    timeout: Duration,
    mut prepare: Command,
) -> Result<Output, KnobError> {
    let line = format!("{tool} {}", args.join(" "));
    let fail = |why: String| KnobError::Command {
        cmd: line.clone(),
        why,
    };
    let mut child = prepare
        .args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| fail(format!("cannot start {tool}: {e}")))?;
    if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
        // A tool that exits early closes its end; its exit status then tells why.
        let _ = pipe.write_all(text.as_bytes());
    }
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let result = match rx.recv_timeout(timeout) {
        Ok(r) => r,
        Err(_) => {
            if let Ok(pid) = libc::pid_t::try_from(pid) {
                // SAFETY: the pid is our own child, not yet reaped (the waiter still waits).
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
            let _ = waiter.join();
            return Err(fail(format!("no answer within {} s", timeout.as_secs())));
        }
    };
    let _ = waiter.join();
    let out = result.map_err(|e| fail(e.to_string()))?;
    Ok(Output {
        ok: out.status.success(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
    })
}

/// Runs a tool found by [`find_tool`]; a non-zero exit is an error with its stderr.
pub(crate) fn run(tool: &str, args: &[&str]) -> Result<String, KnobError> {
    let out = run_status(tool, args)?;
    if out.ok {
        Ok(out.stdout)
    } else {
        Err(KnobError::Command {
            cmd: format!("{tool} {}", args.join(" ")),
            why: out.stderr,
        })
    }
}

/// Like [`run`], but a non-zero exit is returned, for callers that read the error.
pub(crate) fn run_status(tool: &str, args: &[&str]) -> Result<Output, KnobError> {
    let path = find_tool(tool).ok_or_else(|| KnobError::Command {
        cmd: format!("{tool} {}", args.join(" ")),
        why: format!("{tool} is not installed"),
    })?;
    output(tool, args, None, TIMEOUT, Command::new(path))
}

/// `ip ARGS…`.
pub(crate) fn ip(args: &[&str]) -> Result<String, KnobError> {
    run("ip", args)
}

/// `ip -n NS ARGS…`: the command inside a named namespace.
pub(crate) fn ip_in(ns: &str, args: &[&str]) -> Result<String, KnobError> {
    let mut all = vec!["-n", ns];
    all.extend_from_slice(args);
    run("ip", &all)
}
