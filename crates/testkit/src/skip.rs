//! Skipping a test whose prerequisite this machine lacks, visibly.
//!
//! libtest captures what a passing test prints with `print!`/`eprint!` and throws it away,
//! so a test that returned early after `eprintln!("skipped …")` read as a plain pass. Every
//! skip goes through [`skip`] instead, which writes one line straight to the process's
//! standard error (not through the captured macros), so `cargo test` shows it:
//!
//! ```text
//! SKIPPED netrr::tests::netrr_runs_inside_a_namespace_needs_root: needs root: creating a network namespace
//! ```
//!
//! Where a prerequisite is known to be present (CI installs the tools, runs as root),
//! `PERFLAB_TEST_REQUIRE` lists it (comma-separated names, as the `needs` argument spells
//! them), and a test that would skip for it fails instead: a tool that was installed and
//! then reported missing is a broken test or a broken install, never a pass.
//!
//! Prerequisite names in use: `root`; the tools by command name (`perf`, `sockperf`,
//! `fio`, `iperf3`, `cyclictest`, `hyperfine`, `chromium`, `ip`, `setpriv`); `ovs` (an
//! ovsdb that answers); `netns` (`ip netns add` works); `perf-events` (software perf
//! events open); `pmu` / `no-pmu` (hardware counters open / do not); `2-cpus`;
//! `proc-children` (CONFIG_PROC_CHILDREN); `postgres` (a PostgreSQL server the tests can
//! use, see the `pg` module); `bpf` (this process may load BPF programs); `tracefs`;
//! `mount-namespace` (`unshare -m`, for read-only mounts as root); `gpu` (a CUDA driver
//! that sees a GPU); `hugepages` (free 2 MiB hugetlb pages); and a few that name one
//! machine state each.

use std::fmt::Display;
use std::io::Write;
use std::path::PathBuf;

/// The variable that lists the prerequisites whose absence fails a test.
pub const REQUIRE_VAR: &str = "PERFLAB_TEST_REQUIRE";

/// Reports that the calling test skips (all of it, or the part the caller leaves out)
/// because this machine lacks `needs`, saying why; the caller then returns or carries on
/// without that part. Panics instead, failing the test, when [`REQUIRE_VAR`] lists
/// `needs`.
#[track_caller]
pub fn skip(needs: &str, reason: impl Display) {
    let test = current_test();
    let listed = std::env::var(REQUIRE_VAR).unwrap_or_default();
    if is_listed(&listed, needs) {
        panic!("{test} needs {needs}, which {REQUIRE_VAR}={listed} says is present: {reason}");
    }
    // Straight to the descriptor: libtest does not capture this, so the line is shown for
    // a passing test too. One write, so parallel tests do not interleave within it.
    let _ = std::io::stderr().write_all(skip_line(&test, needs, &reason).as_bytes());
}

/// The line [`skip`] prints.
fn skip_line(test: &str, needs: &str, reason: &dyn Display) -> String {
    format!("SKIPPED {test}: needs {needs}: {reason}\n")
}

/// Whether the comma-separated `list` names `needs`.
fn is_listed(list: &str, needs: &str) -> bool {
    list.split(',').map(str::trim).any(|n| n == needs)
}

/// The running test's name: libtest runs each test on a thread named after it.
fn current_test() -> String {
    std::thread::current()
        .name()
        .unwrap_or("(a test's helper thread)")
        .to_string()
}

/// Whether this process runs as root (effective uid 0).
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// True when running as root; otherwise reports the skip (`needs root: {why}`).
#[track_caller]
pub fn have_root(why: &str) -> bool {
    let root = is_root();
    if !root {
        skip("root", why);
    }
    root
}

/// The executable `tool` on `$PATH`, if there is one.
pub fn which(tool: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let paths = std::env::var_os("PATH")?;
    std::env::split_paths(&paths)
        .map(|dir| dir.join(tool))
        .find(|p| {
            p.metadata()
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// True when `tool` is on `$PATH`; otherwise reports the skip, naming the Debian
/// `package` that provides it.
#[track_caller]
pub fn have_tool(tool: &str, package: &str) -> bool {
    let found = which(tool).is_some();
    if !found {
        skip(
            tool,
            format!("{tool} is not on PATH (apt-get install {package})"),
        );
    }
    found
}

/// The value of `var` in a helper process: a function marked
/// `#[test] #[ignore = "helper process: …"]` that another test re-runs as a child
/// (`current_exe() --ignored --exact NAME`) with `var` set. Run any other way (say with
/// `cargo test -- --ignored`) it has nothing to do and fails, naming `spawned_by`, rather
/// than counting as a passed test.
#[track_caller]
pub fn helper_env(var: &str, spawned_by: &str) -> std::ffi::OsString {
    match std::env::var_os(var) {
        Some(v) => v,
        None => panic!(
            "{} is a helper process, not a test: {spawned_by} runs it with {var} set",
            current_test()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_names_the_test_the_prerequisite_and_the_reason() {
        assert_eq!(
            skip_line("a::b", "perf", &"perf is not on PATH"),
            "SKIPPED a::b: needs perf: perf is not on PATH\n"
        );
    }

    #[test]
    fn only_exact_names_in_the_list_count() {
        assert!(is_listed("root,perf, sockperf", "sockperf"));
        assert!(is_listed("root", "root"));
        assert!(!is_listed("root,perf", "perf-events"));
        assert!(!is_listed("", "root"));
        assert!(!is_listed("rooted", "root"));
    }

    #[test]
    fn the_test_is_named_by_its_thread() {
        assert_eq!(
            current_test(),
            "skip::tests::the_test_is_named_by_its_thread"
        );
    }

    #[test]
    #[should_panic(expected = "is a helper process, not a test: the caller runs it with")]
    fn a_helper_run_as_a_test_fails_naming_its_spawner() {
        helper_env("PERFLAB_TESTKIT_NEVER_SET", "the caller");
    }

    #[test]
    fn which_finds_sh_and_not_a_made_up_tool() {
        assert!(which("sh").is_some());
        assert!(which("perflab-no-such-tool").is_none());
    }
}
