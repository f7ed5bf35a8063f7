//! Replaying the journal after its owner died without restoring (SIGKILL, power loss).

use std::collections::HashMap;
use std::path::Path;

use perflab_sys::SysRoot;

use crate::error::KnobError;
use crate::journal::{self, Action, Created, Entry};
use crate::owner::{booted_since, Owner};
use crate::target_lock::{clear_left, target_key};

/// What [`restore_pending`] did with each entry.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RestoreReport {
    /// Originals written back.
    pub restored: Vec<Entry>,
    /// Holds (PM-QoS) whose owner is gone: the kernel dropped them with its descriptor.
    pub released: Vec<Entry>,
    /// Kernel settings recorded before the last reboot, which reset them; writing the old
    /// values back would undo whatever this boot set.
    pub reset_by_reboot: Vec<Entry>,
    /// Entries that could not be restored, with the reason; they stay in the journal.
    pub failed: Vec<(Entry, String)>,
    /// Entries of a perflab that is still running; it restores them itself.
    pub live: Vec<Entry>,
}

impl RestoreReport {
    /// True when nothing that needed restoring was left behind.
    pub fn is_clean(&self) -> bool {
        self.failed.is_empty()
    }

    /// Lines for a person, one per entry, failures first.
    pub fn lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (e, why) in &self.failed {
            out.push(format!("FAILED {}: {why}", e.describe()));
        }
        for e in &self.restored {
            out.push(format!("restored {}", e.describe()));
        }
        for e in &self.released {
            out.push(format!("released {}", e.describe()));
        }
        for e in &self.reset_by_reboot {
            out.push(format!("reset by reboot {}", e.describe()));
        }
        for e in &self.live {
            out.push(format!("left to running perflab {}", e.describe()));
        }
        out
    }
}

/// Entries whose owner is no longer running: what `perflab restore` would replay. Every
/// perflab start warns while this is not empty.
pub fn pending(path: &Path) -> Result<Vec<Entry>, KnobError> {
    let mut alive = Liveness::default();
    Ok(journal::entries(path)?
        .into_iter()
        .filter(|e| !alive.check(e))
        .collect())
}

/// The warning every perflab start prints while [`pending`] is not empty, or `None`.
pub fn pending_warning(path: &Path) -> Result<Option<String>, KnobError> {
    let entries = pending(path)?;
    if entries.is_empty() {
        return Ok(None);
    }
    let mut text = format!(
        "{} change(s) by a perflab that did not finish are still in effect (journal {}); \
         run `perflab restore`:",
        entries.len(),
        path.display()
    );
    const SHOWN: usize = 5;
    for e in entries.iter().take(SHOWN) {
        text.push_str("\n  ");
        text.push_str(&e.describe());
    }
    if entries.len() > SHOWN {
        text.push_str(&format!("\n  ... and {} more", entries.len() - SHOWN));
    }
    Ok(Some(text))
}

/// Writes back the originals of every entry whose owner is gone, newest first (so a file
/// changed twice ends with its oldest value), and forgets each one restored. A failure is
/// reported per entry and never stops the others.
pub fn restore_pending(path: &Path) -> Result<RestoreReport, KnobError> {
    if !path.exists() {
        return Ok(RestoreReport::default());
    }
    let mut alive = Liveness::default();
    let mut cleared = Vec::new();
    let report = journal::modify(path, |file| {
        let mut report = RestoreReport::default();
        let mut keep = Vec::new();
        for entry in file.entries.drain(..).rev() {
            if alive.check(&entry) {
                report.live.push(entry.clone());
                keep.push(entry);
                continue;
            }
            if !matches!(entry.action, Action::Remove { .. }) {
                // Whatever happens to the entry below, its owner is gone: once the entry
                // is gone too, the record its owner left on the target means nothing.
                let target = target_key(&SysRoot::at(&entry.root), &entry.path);
                cleared.push((target, entry.owner()));
            }
            match &entry.action {
                Action::Hold { .. } => report.released.push(entry),
                Action::Write { .. } | Action::Remove { .. } if reset_by_reboot(&entry) => {
                    report.reset_by_reboot.push(entry)
                }
                Action::Remove { object } => match remove_created(&entry, object) {
                    Ok(()) => report.restored.push(entry),
                    Err(why) => {
                        report.failed.push((entry.clone(), why));
                        keep.push(entry);
                    }
                },
                Action::Write { original } => {
                    match SysRoot::at(&entry.root).write(&entry.path, original.as_bytes()) {
                        Ok(()) => report.restored.push(entry),
                        Err(e) => {
                            report.failed.push((entry.clone(), e.to_string()));
                            keep.push(entry);
                        }
                    }
                }
            }
        }
        keep.reverse();
        file.entries = keep;
        Ok(report)
    })?;
    // Only the records of entries no longer journaled: a failed one keeps refusing others.
    for (target, owner) in cleared {
        if !report.failed.iter().any(|(e, _)| {
            e.owner() == owner && target_key(&SysRoot::at(&e.root), &e.path) == target
        }) {
            clear_left(&target, &owner);
        }
    }
    // The files of targets the dead only claimed (nothing journaled) are no entry's.
    crate::target_lock::sweep_left();
    Ok(report)
}

/// Removes what `entry` created: an ftrace instance through the tracefs under the entry's
/// root (mounted for the purpose where it is not), anything else as its guard does.
fn remove_created(entry: &Entry, object: &Created) -> Result<(), String> {
    match object {
        Created::TraceInstance { name } => {
            perflab_sys::tracefs_mount::remove_instance_on(&SysRoot::at(&entry.root), name)
        }
        _ => crate::netpath::undo::remove(object),
    }
}

/// sysfs, procfs and device settings of the live machine do not survive a reboot, nor do
/// network namespaces, links and processes. An OVS bridge does (ovsdb keeps it), and so
/// may a directory on a disk, so those are always removed.
fn reset_by_reboot(entry: &Entry) -> bool {
    let volatile = match &entry.action {
        Action::Remove { object } => {
            !matches!(object, Created::OvsBridge { .. } | Created::Dir { .. })
        }
        _ => ["sys/", "proc/", "dev/"]
            .iter()
            .any(|p| entry.path.starts_with(p)),
    };
    volatile && entry.root == Path::new("/") && booted_since(entry.boot_id.as_deref())
}

/// Caches liveness per owner: a journal of thousands of entries has one or two owners.
#[derive(Default)]
struct Liveness(HashMap<Owner, bool>);

impl Liveness {
    fn check(&mut self, entry: &Entry) -> bool {
        *self
            .0
            .entry(entry.owner())
            .or_insert_with_key(Owner::is_alive)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::Journal;

    /// An ftrace instance a killed perflab journaled is removed by the replay, through
    /// the tracefs under the entry's root, and its entry forgotten.
    #[test]
    fn a_journaled_ftrace_instance_of_a_dead_perflab_is_removed() {
        let t = tempfile::tempdir().unwrap();
        let sys = SysRoot::at(t.path());
        let tracing = t.path().join("sys/kernel/tracing");
        std::fs::create_dir_all(tracing.join("events")).unwrap();
        std::fs::create_dir_all(tracing.join("instances/perflab-7-0")).unwrap();
        let path = t.path().join("journal.json");
        let journal = Journal::open(&path).unwrap();
        let object = Created::TraceInstance {
            name: "perflab-7-0".into(),
        };
        journal.save_created(&sys, &object, "trace").unwrap();
        // Its owner killed: a pid no process has now.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let mut json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        json["entries"][0]["pid"] = dead.into();
        std::fs::write(&path, serde_json::to_vec(&json).unwrap()).unwrap();

        let report = restore_pending(&path).unwrap();
        assert!(report.is_clean(), "{:?}", report.lines());
        assert_eq!(report.restored.len(), 1, "{:?}", report.lines());
        assert!(
            report.lines()[0].contains("created ftrace instance perflab-7-0"),
            "{:?}",
            report.lines()
        );
        assert!(!tracing.join("instances/perflab-7-0").exists());
        assert!(journal::entries(&path).unwrap().is_empty());
    }
}
