//! Secrets given to a run (an exec `env` item named like a token, a URL with a password)
//! and what another user of the host can get at: while the run holds a knob, its lock
//! file; after it, the data directory perflab made, the database, its side files, the
//! journal, and every output (`ls`, `show`, `report`, `export` in each format, the
//! refusal another run prints). Nothing readable holds a secret, and the database, its
//! directory and the lock file cannot be read by another user at all.

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::{text, Lab};

/// The secrets of the test, each a word found nowhere else.
const SECRETS: &[&str] = &["SECRETenvB2", "SECRETpwC3"];
const ENV: &str = "HUGE=1;API_TOKEN=SECRETenvB2;DB_URL=postgres://u:SECRETpwC3@h/d";
/// An unprivileged user to read as: `nobody`.
const NOBODY: u32 = 65534;
const FAKE: &str = "sys/kernel/perflab_fake";

fn assert_no_secret(what: &str, bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    for s in SECRETS {
        assert!(!text.contains(s), "{s} in {what}: {text}");
    }
}

/// `argv` run as `nobody`, without its supplementary groups (std drops them with the uid).
fn as_nobody(argv: &[&str], env: &[(&str, &Path)]) -> Output {
    let mut c = Command::new(argv[0]);
    c.args(&argv[1..]).uid(NOBODY).gid(NOBODY).current_dir("/");
    for (k, v) in env {
        c.env(k, v);
    }
    c.env_remove("PERFLAB_DB").output().unwrap()
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

/// A lab whose directory others may enter, as a home is, so that only the modes perflab
/// gives its own files keep them out; and its home there.
fn open_lab() -> (Lab, PathBuf) {
    let lab = Lab::new();
    let home = lab.dir.path().join("home");
    std::fs::create_dir(&home).unwrap();
    for d in [lab.dir.path(), &home] {
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    (lab, home)
}

/// perflab with the default database of `home` (no PERFLAB_DB).
fn cmd(lab: &Lab, home: &Path) -> Command {
    let mut c = lab.cmd();
    c.env_remove("PERFLAB_DB")
        .env_remove("PERFLAB_FINGERPRINT_KEY")
        .env_remove("XDG_DATA_HOME")
        .env("HOME", home);
    c
}

#[test]
fn another_user_reads_no_secret_and_none_of_the_results() {
    if !perflab_testkit::have_root("reading as another user needs setuid to nobody") {
        return;
    }
    let (lab, home) = open_lab();
    let root = lab.fixture_copy("kvm-2vcpu");
    std::fs::create_dir_all(root.join("sys/kernel")).unwrap();
    std::fs::write(root.join(FAKE), "0\n").unwrap();
    let root_s = root.to_str().unwrap();
    let run_args = [
        "--sysroot",
        root_s,
        "run",
        "--workload",
        "exec",
        "-p",
        "cmd=sleep 0.1; echo 5",
        "-p",
        "regex=(\\d+)",
        "-p",
        &format!("env={ENV}"),
        "--reps",
        "300",
        "--variant",
        "on:fake=1",
    ];
    let mut child = cmd(&lab, &home)
        .args(run_args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Only against a hang: a loaded machine may take seconds to start perflab.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while std::fs::read_to_string(root.join(FAKE)).unwrap().trim() != "1" {
        assert!(std::time::Instant::now() < deadline, "fake=1 never applied");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }

    // The lock file: the command line masked, and private.
    let sys = perflab_sys::SysRoot::at(&root);
    let lock =
        perflab_knobs::target_lock::lock_file(&perflab_knobs::target_lock::target_key(&sys, FAKE))
            .unwrap();
    let record = std::fs::read(&lock).unwrap();
    assert_no_secret("the lock file", &record);
    let record = String::from_utf8_lossy(&record);
    assert!(
        record.contains("API_TOKEN=hmac:") && record.contains("postgres://u:***@h/d"),
        "{record}"
    );
    assert_eq!(mode(&lock), 0o600, "{}", lock.display());
    let o = as_nobody(&["cat", lock.to_str().unwrap()], &[]);
    assert!(!o.status.success(), "nobody read the lock file");
    assert_no_secret("nobody's read of the lock file", &o.stdout);

    // Another run refused the knob prints the holder's command, masked.
    let other = lab.dir.path().join("other-journal.json");
    let o = cmd(&lab, &home)
        .env_remove("PERFLAB_WAIT_LOCK")
        .args(["--journal", other.to_str().unwrap()])
        .args(run_args)
        .output()
        .unwrap();
    let (out, err) = text(&o);
    assert!(!o.status.success(), "{out}{err}");
    assert!(err.contains("in use by perflab pid"), "{err}");
    assert_no_secret("the refusal", err.as_bytes());

    // SAFETY: sending a signal to our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    child.wait().unwrap();

    // What perflab made: private directory, database, side files and key.
    let data = home.join(".local/share/perflab");
    let db = data.join("results.db");
    assert_eq!(mode(&data), 0o700);
    assert_eq!(mode(&db), 0o600);
    assert_eq!(mode(&data.join("fingerprint.key")), 0o600);
    for entry in std::fs::read_dir(&data).unwrap() {
        let path = entry.unwrap().path();
        assert_eq!(mode(&path), 0o600, "{}", path.display());
        assert_no_secret(&path.display().to_string(), &std::fs::read(&path).unwrap());
    }
    let journal = lab.journal();
    if journal.exists() {
        assert_no_secret("the journal", &std::fs::read(&journal).unwrap());
        let o = as_nobody(&["cat", journal.to_str().unwrap()], &[]);
        assert_no_secret("nobody's read of the journal", &o.stdout);
    }
    for path in [&db, &data.join("fingerprint.key")] {
        let o = as_nobody(&["cat", path.to_str().unwrap()], &[]);
        assert!(!o.status.success(), "nobody read {}", path.display());
    }
    let o = as_nobody(&["ls", data.to_str().unwrap()], &[]);
    assert!(!o.status.success(), "nobody listed the data directory");
    let o = as_nobody(
        &[env!("CARGO_BIN_EXE_perflab"), "show", "1"],
        &[("HOME", &home)],
    );
    assert!(!o.status.success(), "nobody's perflab showed the run");
    assert_no_secret("nobody's perflab show", &[o.stdout, o.stderr].concat());

    // Every output of the run, to its owner: fingerprints, never the values.
    let outputs: &[&[&str]] = &[
        &["ls"],
        &["ls", "--format", "json"],
        &["show", "1"],
        &["show", "1", "--format", "json"],
        &["report", "1"],
        &["report", "1", "--format", "markdown"],
        &["export", "1"],
        &["export", "1", "--format", "csv"],
        &["export", "1", "--format", "benchstat"],
    ];
    let mut seen_fingerprint = false;
    for args in outputs {
        let o = cmd(&lab, &home).args(*args).output().unwrap();
        let all = [o.stdout.as_slice(), o.stderr.as_slice()].concat();
        let what = format!("perflab {}", args.join(" "));
        assert!(
            o.status.success(),
            "{what}: {}",
            String::from_utf8_lossy(&all)
        );
        assert_no_secret(&what, &all);
        seen_fingerprint |= String::from_utf8_lossy(&all).contains("API_TOKEN=hmac:");
    }
    assert!(seen_fingerprint, "no output showed the env's fingerprint");
}
