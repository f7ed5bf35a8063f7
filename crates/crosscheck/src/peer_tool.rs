//! What the crosschecks share about running a peer tool (`perf bench …`): checking that
//! perf is usable, running a command line and keeping its output only when it succeeded,
//! and the errors of those steps, each naming the command as the user could retype it.

use std::process::{Command, Output, Stdio};

use perflab_parsers::{ParseError, Parsed};

/// Said when `taskset` cannot be started.
pub(crate) const TASKSET_HINT: &str = " (taskset comes with util-linux)";

#[derive(Debug, thiserror::Error)]
pub enum PeerError {
    #[error("perf is not usable here ({0}); install it with `apt-get install linux-perf`")]
    PerfMissing(String),
    /// `hint` is empty or starts with a space: where the missing program comes from.
    #[error("cannot start `{cmd}`: {source}{hint}")]
    Spawn {
        cmd: String,
        hint: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error("`{cmd}` failed ({status}): {stderr}")]
    PeerFailed {
        cmd: String,
        status: String,
        stderr: String,
    },
    #[error("`{cmd}` printed no {what}")]
    NoResult { cmd: String, what: &'static str },
    #[error("cannot read the output of `{cmd}`: {source}")]
    Parse {
        cmd: String,
        #[source]
        source: ParseError,
    },
}

/// Reads `perf bench` output (default format) with the shared parser.
pub(crate) fn parse_perf_bench(cmd: &str, stdout: &[u8]) -> Result<Parsed, PeerError> {
    let text = String::from_utf8_lossy(stdout);
    perflab_parsers::parse_perf_bench(&text).map_err(|source| PeerError::Parse {
        cmd: cmd.to_string(),
        source,
    })
}

/// Fails with [`PeerError::PerfMissing`] unless `program <subcommand…> --help` prints
/// `marker` (an option of that subcommand). perf prints the usage of the subcommand;
/// Debian's wrapper script instead says that no perf matches the running kernel.
pub(crate) fn check_perf(
    program: &str,
    subcommand: &[&str],
    marker: &str,
) -> Result<(), PeerError> {
    let out = Command::new(program)
        .args(subcommand)
        .arg("--help")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| PeerError::PerfMissing(format!("cannot run perf: {e}")))?;
    let text = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
    if text.contains(marker) {
        Ok(())
    } else {
        Err(PeerError::PerfMissing(
            text.trim().chars().take(300).collect(),
        ))
    }
}

/// The output of the command shown as `cmd`, from `Command::output` or
/// `Child::wait_with_output`: an error when it could not run or did not succeed, with
/// its stderr.
pub(crate) fn succeeded(
    cmd: &str,
    hint: &'static str,
    out: std::io::Result<Output>,
) -> Result<Output, PeerError> {
    let out = out.map_err(|source| spawn_error(cmd, hint, source))?;
    if out.status.success() {
        Ok(out)
    } else {
        Err(PeerError::PeerFailed {
            cmd: cmd.to_string(),
            status: out.status.to_string(),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        })
    }
}

pub(crate) fn spawn_error(cmd: &str, hint: &'static str, source: std::io::Error) -> PeerError {
    PeerError::Spawn {
        cmd: cmd.to_string(),
        hint,
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_perf_says_how_to_install_it() {
        for (sub, marker) in [
            (["bench", "sched", "pipe"], "--loop"),
            (["bench", "mem", "memcpy"], "--nr_loops"),
        ] {
            let e = check_perf("/nonexistent/perf", &sub, marker)
                .unwrap_err()
                .to_string();
            assert!(e.contains("apt-get install linux-perf"), "{e}");
            // A program that runs but is not perf (like Debian's wrapper without a
            // matching perf) is refused too.
            let e = check_perf("true", &sub, marker).unwrap_err().to_string();
            assert!(e.contains("linux-perf"), "{e}");
        }
    }

    #[test]
    fn failures_name_the_command_and_keep_stderr() {
        let run = |prog: &str, args: &[&str]| Command::new(prog).args(args).output();
        let e = succeeded("sh -c …", "", run("sh", &["-c", "echo oops >&2; exit 3"]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("`sh -c …` failed") && e.ends_with("oops"), "{e}");
        let e = succeeded("nope", TASKSET_HINT, run("/nonexistent/nope", &[]))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("cannot start `nope`: ") && e.contains("util-linux"),
            "{e}"
        );
        let out = succeeded("echo hi", "", run("echo", &["hi"])).map(|o| o.stdout);
        assert_eq!(out.ok(), Some(b"hi\n".to_vec()));
    }
}
