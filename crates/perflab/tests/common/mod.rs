//! Helpers for end-to-end tests of the perflab binary: every test gets its own database,
//! journal and (where knobs are involved) a writable copy of a fixture tree.

#![allow(dead_code)]

pub mod peak_rss;
pub mod ssh_hosts;

pub use perflab_testkit::{copy_tree, fixtures};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub struct Lab {
    pub dir: tempfile::TempDir,
}

/// How long a test's run waits for a setting another perflab holds (`run --wait-lock`).
pub const WAIT_LOCK: &str = "10m";

impl Lab {
    pub fn new() -> Self {
        Self {
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }

    pub fn db(&self) -> PathBuf {
        self.dir.path().join("results.db")
    }

    pub fn journal(&self) -> PathBuf {
        self.dir.path().join("journal.json")
    }

    /// The key this lab's perflab fingerprints secrets with (made on first use).
    pub fn fingerprint_key(&self) -> PathBuf {
        self.dir.path().join("fingerprint.key")
    }

    /// `secret`'s fingerprint as this lab's perflab makes it.
    pub fn fingerprint(&self, secret: &str) -> String {
        let key = perflab_core::secret_key::load_or_create(&self.fingerprint_key(), None)
            .expect("the lab's fingerprint key");
        perflab_core::secret::fingerprint_with(&key, secret)
    }

    /// perflab with this lab's database and journal. A run that meets another perflab
    /// holding a setting it changes (another test's, on the real machine) waits for it,
    /// up to [`WAIT_LOCK`], instead of failing the test with exit 6; the tests of the
    /// refusal itself remove the variable. No measurement is marked disturbed: the tests
    /// run beside other builds, and cli_disturbed removes the variable.
    pub fn cmd(&self) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_perflab"));
        c.env("PERFLAB_DB", self.db())
            .env("PERFLAB_JOURNAL", self.journal())
            .env("PERFLAB_FINGERPRINT_KEY", self.fingerprint_key())
            .env("PERFLAB_WAIT_LOCK", WAIT_LOCK)
            // Other builds keep a CI machine's CPUs busy; only the tests of disturbed
            // measurements (cli_disturbed) hold runs to the default share.
            .env("PERFLAB_DISTURBED_ABOVE", "100")
            .current_dir(self.dir.path());
        c
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.cmd().args(args).output().expect("run perflab")
    }

    /// `perflab ARGS` on the database `db` (an SQLite path or a `postgres://` URL), set
    /// through PERFLAB_DB as a user would set it once.
    pub fn run_on(&self, db: &str, args: &[&str]) -> Output {
        self.cmd()
            .env("PERFLAB_DB", db)
            .args(args)
            .output()
            .expect("run perflab")
    }

    /// `perflab export RUN` as JSON.
    pub fn export(&self, id: &str) -> serde_json::Value {
        let o = self.run(&["export", id]);
        assert!(o.status.success(), "{:?}", text(&o));
        serde_json::from_slice(&o.stdout).expect("export prints JSON")
    }

    /// `perflab export RUN` with each telemetry row an object keyed by the head's
    /// `telemetry_columns` (the export writes rows as arrays; tests read fields by name).
    pub fn export_named(&self, id: &str) -> serde_json::Value {
        let mut doc = self.export(id);
        name_telemetry_fields(&mut doc);
        doc
    }

    /// `perflab --db DB import --parser perflab-json FILE`, asserted to succeed: the run id
    /// it names and its stderr.
    pub fn import_export_file(&self, db: &str, file: &Path) -> (String, String) {
        let o = self.run(&[
            "--db",
            db,
            "import",
            "--parser",
            "perflab-json",
            file.to_str().expect("a UTF-8 path"),
        ]);
        let (_, err) = text(&o);
        assert!(o.status.success(), "{err}");
        (run_id(&err), err)
    }

    /// A writable copy of `tests/fixtures/<name>` inside this lab.
    pub fn fixture_copy(&self, name: &str) -> PathBuf {
        let src = fixtures().join(name);
        let dst = self.dir.path().join(format!("root-{name}"));
        copy_tree(&src, &dst);
        dst
    }
}

/// Turns every measurement's telemetry rows from arrays into objects named by the
/// document's `telemetry_columns`; panics on a row whose length differs from the columns.
pub fn name_telemetry_fields(doc: &mut serde_json::Value) {
    let columns: Vec<String> = serde_json::from_value(doc["telemetry_columns"].clone())
        .expect("the export names its telemetry columns");
    for m in doc["measurements"].as_array_mut().into_iter().flatten() {
        for row in m["telemetry"].as_array_mut().into_iter().flatten() {
            let fields = row.as_array().expect("a telemetry row is an array").clone();
            assert_eq!(fields.len(), columns.len(), "telemetry row {row}");
            *row = columns.iter().cloned().zip(fields).collect();
        }
    }
}

/// Every regular file's bytes, by path relative to `root`.
pub fn snapshot(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let ft = e.file_type().unwrap();
        if ft.is_dir() {
            walk(root, &e.path(), out);
        } else if ft.is_file() {
            out.insert(
                e.path().strip_prefix(root).unwrap().to_path_buf(),
                std::fs::read(e.path()).unwrap(),
            );
        }
    }
}

pub fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The run number a `perflab run` printed on stderr (`run 3: ...`).
pub fn run_id(stderr: &str) -> String {
    stderr
        .lines()
        .find_map(|l| l.strip_prefix("run ").and_then(|r| r.split(':').next()))
        .expect("a run id on stderr")
        .to_string()
}

/// A finished run of `null` with two variants, `a` and `b`, over two points (sleep 1 and
/// 2 ms, 0.5% noise), 5 repetitions, plus `extra` flags; returns its run number.
pub fn two_variant_null_run(lab: &Lab, extra: &[&str]) -> String {
    let mut args = vec![
        "run",
        "--workload",
        "null",
        "-p",
        "noise_pct=0.5",
        "-p",
        "sleep=0.001,0.002",
        "--variant",
        "a:",
        "--variant",
        "b:",
        "--reps",
        "5",
    ];
    args.extend_from_slice(extra);
    let o = lab.run(&args);
    let (out, err) = text(&o);
    assert!(o.status.success(), "stdout: {out}\nstderr: {err}");
    run_id(&err)
}

/// A long null-workload run whose one variant sets the fake knob in a writable copy of
/// the kvm fixture tree; returns once the knob is applied, with the tree's state before.
pub struct FakeKnobRun {
    pub root: PathBuf,
    pub before: BTreeMap<PathBuf, Vec<u8>>,
    pub child: std::process::Child,
}

impl Lab {
    pub fn start_fake_knob_run(&self, stderr: std::process::Stdio) -> FakeKnobRun {
        let root = self.fixture_copy("kvm-2vcpu");
        std::fs::create_dir_all(root.join("sys/kernel")).unwrap();
        let fake = root.join("sys/kernel/perflab_fake");
        std::fs::write(&fake, "0\n").unwrap();
        let before = snapshot(&root);
        let child = self
            .cmd()
            .args([
                "--sysroot",
                root.to_str().unwrap(),
                "run",
                "--workload",
                "null",
            ])
            .args([
                "-p",
                "sleep=100ms",
                "--reps",
                "100",
                "--variant",
                "on:fake=1",
            ])
            .stderr(stderr)
            .spawn()
            .unwrap();
        // Only against a hang: a loaded machine may take seconds to start perflab.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while std::fs::read_to_string(&fake).unwrap().trim() != "1" {
            assert!(
                std::time::Instant::now() < deadline,
                "the knob was never applied"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        FakeKnobRun {
            root,
            before,
            child,
        }
    }
}

/// `perflab --sysroot ROOT run idle-ipi --quick --partners 0 --variant poll-only`.
pub fn poll_only_args(root: &Path) -> Vec<String> {
    let root = root.to_str().unwrap();
    [
        "--sysroot",
        root,
        "run",
        "idle-ipi",
        "--quick",
        "--partners",
        "0",
        "--variant",
        "poll-only",
    ]
    .map(String::from)
    .to_vec()
}

/// Held by the tests that change this machine's own settings (idle states, IRQ affinity,
/// the huge page pool) or read them as the machine's defaults: since the crate's tests
/// share one process (one test binary), they would otherwise run at once, and one test's
/// `poll-only` would be another's "machine as it is" (an unprivileged idle-ipi saw state1
/// disabled by a concurrent root run, and measured the wrong variant). Knob locks keep two
/// runs from journalling each other's values; this keeps tests from observing them.
pub fn host_settings() -> std::sync::MutexGuard<'static, ()> {
    static HOST: std::sync::Mutex<()> = std::sync::Mutex::new(());
    HOST.lock().unwrap_or_else(|e| e.into_inner())
}
