//! A writable fake sysfs tree: 4 online CPUs, each with POLL, C1, C1E and C6 idle states,
//! the fake knob's file and a PM-QoS device stand-in.

#![allow(dead_code)] // each test file uses its own part of this

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use perflab_knobs::{parse_setting, Journal, KnobGuard};
use perflab_sys::SysRoot;

pub const STATES: [&str; 4] = ["POLL", "C1", "C1E", "C6"];

pub struct Tree {
    pub dir: tempfile::TempDir,
    pub sys: SysRoot,
    pub journal_path: PathBuf,
}

impl Tree {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        let put = |rel: &str, content: &[u8]| {
            let p = root.join(rel);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, content).unwrap();
        };
        put("sys/devices/system/cpu/online", b"0-3\n");
        put(
            "sys/devices/system/cpu/cpuidle/current_driver",
            b"intel_idle\n",
        );
        for cpu in 0..4 {
            for (k, name) in STATES.iter().enumerate() {
                let d = format!("sys/devices/system/cpu/cpu{cpu}/cpuidle/state{k}");
                let desc = if *name == "POLL" {
                    "CPUIDLE CORE POLL IDLE"
                } else {
                    "MWAIT"
                };
                put(&format!("{d}/name"), format!("{name}\n").as_bytes());
                put(&format!("{d}/desc"), format!("{desc}\n").as_bytes());
                put(&format!("{d}/latency"), format!("{}\n", k * 10).as_bytes());
                put(
                    &format!("{d}/residency"),
                    format!("{}\n", k * 30).as_bytes(),
                );
                // One state starts disabled, so restore must bring back a non-default value.
                let disabled = cpu == 3 && *name == "C6";
                put(
                    &format!("{d}/disable"),
                    if disabled { b"1\n" } else { b"0\n" },
                );
                put(&format!("{d}/usage"), format!("{}\n", 100 + k).as_bytes());
                put(&format!("{d}/time"), format!("{}\n", 1000 + k).as_bytes());
            }
        }
        put("sys/kernel/perflab_fake", b"0\n");
        put("dev/cpu_dma_latency", &2_000_000_000i32.to_ne_bytes());
        let journal_path = dir.path().join("state/journal.json");
        Self {
            sys: SysRoot::at(&root),
            dir,
            journal_path,
        }
    }

    pub fn journal(&self) -> Journal {
        Journal::open(&self.journal_path).unwrap()
    }

    pub fn disable(&self, cpu: u32, state: usize) -> PathBuf {
        self.sys.path(&format!(
            "sys/devices/system/cpu/cpu{cpu}/cpuidle/state{state}/disable"
        ))
    }

    pub fn disabled(&self, cpu: u32, state: usize) -> bool {
        fs::read_to_string(self.disable(cpu, state)).unwrap().trim() == "1"
    }

    /// Every file under the root with its bytes (symlinks by their target).
    pub fn snapshot(&self) -> BTreeMap<PathBuf, Vec<u8>> {
        snapshot(&self.sys)
    }
}

/// Every file under a root with its bytes (symlinks by their target), by path below it.
pub fn snapshot(sys: &SysRoot) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    walk(sys.root(), sys.root(), &mut out);
    out
}

/// The parts of the kvm-2vcpu fixture the huge page knobs read and write.
pub const MEMORY: &[&str] = &["sys/kernel/mm", "proc/meminfo"];
/// The parts of the kvm-2vcpu fixture the IRQ affinity knob reads and writes.
pub const IRQS: &[&str] = &[
    "proc/interrupts",
    "proc/irq",
    "sys/devices/system/cpu/online",
];

/// A writable copy of some parts of the kvm-2vcpu fixture, with a journal beside it.
pub struct Parts {
    pub _dir: tempfile::TempDir,
    pub sys: SysRoot,
    pub journal: Journal,
    pub journal_path: PathBuf,
}

pub fn kvm_parts(parts: &[&str]) -> Parts {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    copy_parts("kvm-2vcpu", parts, &root);
    let journal_path = dir.path().join("journal.json");
    Parts {
        sys: SysRoot::at(&root),
        journal: Journal::open(&journal_path).unwrap(),
        journal_path,
        _dir: dir,
    }
}

/// Applies a setting (`fake=1`) that the test expects to succeed, and returns its guard.
pub fn applied(sys: &SysRoot, setting: &str, journal: &Journal) -> Box<dyn KnobGuard> {
    parse_setting(setting).unwrap().apply(sys, journal).unwrap()
}

/// Why a setting that the test expects to be unavailable is.
pub fn refused(sys: &SysRoot, setting: &str) -> String {
    parse_setting(setting)
        .unwrap()
        .check(sys)
        .unwrap_err()
        .reason
}

fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let meta = fs::symlink_metadata(&path).unwrap();
        let rel = path.strip_prefix(base).unwrap().to_path_buf();
        if meta.file_type().is_symlink() {
            let target = fs::read_link(&path).unwrap();
            out.insert(rel, target.into_os_string().into_encoded_bytes());
        } else if meta.is_dir() {
            walk(base, &path, out);
        } else {
            out.insert(rel, fs::read(&path).unwrap());
        }
    }
}

/// The pid of a process that has exited and been reaped.
pub fn dead_pid() -> u32 {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

/// Rewrites the owner of every journal entry to a process that is gone, as if the perflab
/// that recorded them had been SIGKILLed.
pub fn orphan_entries(journal: &Path) {
    let pid = dead_pid();
    edit_entries(journal, |e| e["pid"] = pid.into());
}

/// Rewrites every entry of a journal file in place, as another process would have
/// recorded it.
pub fn edit_entries(journal: &Path, edit: impl Fn(&mut serde_json::Value)) {
    let mut json: serde_json::Value = serde_json::from_slice(&fs::read(journal).unwrap()).unwrap();
    for e in json["entries"].as_array_mut().unwrap() {
        edit(e);
    }
    fs::write(journal, serde_json::to_vec_pretty(&json).unwrap()).unwrap();
}

use perflab_testkit::copy_tree;
/// A fixture tree of a whole machine (`tests/fixtures/<name>`, see its README).
pub use perflab_testkit::fixture;

/// Copies the named files and directories of a fixture (those it has) under `root`.
pub fn copy_parts(name: &str, parts: &[&str], root: &Path) {
    for part in parts {
        let from = fixture(name).join(part);
        let to = root.join(part);
        if from.is_dir() {
            copy_tree(&from, &to);
        } else if from.exists() {
            fs::create_dir_all(to.parent().unwrap()).unwrap();
            fs::copy(&from, &to).unwrap();
        }
    }
}
