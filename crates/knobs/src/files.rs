//! Changing kernel attribute files with a journal: the machinery every file-writing knob
//! shares. Every file is claimed system wide first (see [`crate::target_lock`]), those
//! already holding the value too, since the knob relies on them keeping it; originals are
//! journaled durably before the first write; each write is read back; on any failure,
//! whatever was already written is put back before the error returns.

use perflab_sys::hugepages::{parse_choice, Choice};
use perflab_sys::SysRoot;

use crate::error::KnobError;
use crate::journal::{EntryId, Journal, Saved};
use crate::knob::KnobGuard;

/// How an attribute shows its value, compared with how it takes one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// Reads back as written, give or take a trailing newline: `0\n`. Its original bytes
    /// are journaled and written back verbatim.
    Plain,
    /// Reads as a choice list with the selected word bracketed (`always [madvise] never`)
    /// but takes only the bare word: the selected word is journaled and written back.
    Choice,
}

impl Form {
    /// The file's current value in the form a write takes.
    pub fn current(self, sys: &SysRoot, rel: &str) -> Result<Vec<u8>, KnobError> {
        match self {
            Form::Plain => Ok(sys.read_bytes(rel)?),
            Form::Choice => Ok(read_choice(sys, rel)?.selected.into_bytes()),
        }
    }
}

/// Reads a choice-list attribute. A file holding one bare word counts as that word
/// selected among itself alone: the kernel never shows that form, but a test tree holds
/// exactly what was last written to it, and a knob must read back its own write there.
pub fn read_choice(sys: &SysRoot, rel: &str) -> Result<Choice, KnobError> {
    let bytes = sys.read_bytes(rel)?;
    match parse_choice(bytes.as_slice()) {
        Ok(choice) => Ok(choice),
        Err(e) => {
            let text = String::from_utf8_lossy(&bytes);
            let mut words = text.split_whitespace();
            match (words.next(), words.next()) {
                (Some(word), None) if !word.contains(['[', ']']) => Ok(Choice {
                    selected: word.to_string(),
                    options: vec![word.to_string()],
                }),
                _ => Err(e.at(sys.path(rel)).into()),
            }
        }
    }
}

/// One attribute to set: its path relative to the root, the value to write, and how the
/// file shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttrWrite {
    pub path: String,
    pub value: Vec<u8>,
    pub form: Form,
}

/// Writes `value` to each file (relative to `sys`), skipping files that already hold it,
/// and returns a guard that writes the originals back. Every file is [`Form::Plain`].
pub fn write_files(
    sys: &SysRoot,
    journal: &Journal,
    knob: &str,
    writes: &[(String, Vec<u8>)],
) -> Result<FileGuard, KnobError> {
    let writes: Vec<Pending> = writes
        .iter()
        .map(|(rel, value)| (rel.as_str(), value.as_slice(), Form::Plain))
        .collect();
    write_pending(sys, journal, knob, &writes, None)
}

/// [`write_files`] for attributes of any [`Form`].
pub fn write_attrs(
    sys: &SysRoot,
    journal: &Journal,
    knob: &str,
    writes: &[AttrWrite],
) -> Result<FileGuard, KnobError> {
    let writes: Vec<Pending> = writes
        .iter()
        .map(|w| (w.path.as_str(), w.value.as_slice(), w.form))
        .collect();
    write_pending(sys, journal, knob, &writes, None)
}

type Pending<'a> = (&'a str, &'a [u8], Form);

/// Claims and journals the current bytes of each file (relative to `sys`) and returns a
/// guard that writes them all back, for a caller that then makes its own writes (a
/// workload driving a kernel module through its parameter files).
pub fn journal_files(
    sys: &SysRoot,
    journal: &Journal,
    knob: &str,
    rels: &[&str],
) -> Result<FileGuard, KnobError> {
    let saved = journal.save_originals(sys, rels, knob)?;
    let mut guard = FileGuard::new(sys, journal);
    for s in saved {
        guard.track(s, Form::Plain);
    }
    Ok(guard)
}

/// `fail_at` makes the write with that index fail as if the kernel refused it: running as
/// root, a test has no other way to make one file of a writable tree refuse a write.
#[cfg(test)]
pub(crate) fn write_files_failing_at(
    sys: &SysRoot,
    journal: &Journal,
    knob: &str,
    writes: &[(String, Vec<u8>)],
    fail_at: Option<usize>,
) -> Result<FileGuard, KnobError> {
    let writes: Vec<Pending> = writes
        .iter()
        .map(|(rel, value)| (rel.as_str(), value.as_slice(), Form::Plain))
        .collect();
    write_pending(sys, journal, knob, &writes, fail_at)
}

fn write_pending(
    sys: &SysRoot,
    journal: &Journal,
    knob: &str,
    writes: &[Pending],
    fail_at: Option<usize>,
) -> Result<FileGuard, KnobError> {
    let all: Vec<&str> = writes.iter().map(|(rel, _, _)| *rel).collect();
    journal.claim(sys, &all, knob)?;
    let mut todo = Vec::with_capacity(writes.len());
    for &(rel, value, form) in writes {
        if !same_value(&form.current(sys, rel)?, value) {
            todo.push((rel, value, form));
        }
    }
    let rels: Vec<&str> = todo.iter().map(|(rel, _, _)| *rel).collect();
    let forms: std::collections::HashMap<&str, Form> =
        todo.iter().map(|&(rel, _, form)| (rel, form)).collect();
    let saved = journal.save_values(sys, &rels, knob, |rel| {
        forms
            .get(rel)
            .copied()
            .unwrap_or(Form::Plain)
            .current(sys, rel)
    })?;
    let mut guard = FileGuard::new(sys, journal);
    let mut saved = saved.into_iter();
    for (i, ((rel, value, form), entry)) in todo.iter().zip(saved.by_ref()).enumerate() {
        // Counted as changed before the write: a failed write may still have changed the
        // file, and restoring an unchanged file is harmless.
        guard.track(entry, *form);
        let result = if fail_at == Some(i) {
            Err(KnobError::io(
                sys.path(rel),
                std::io::Error::other("injected failure"),
            ))
        } else {
            write_verified(sys, rel, value, *form)
        };
        if let Err(apply) = result {
            let unwritten: Vec<EntryId> = saved.map(|s| s.id).collect();
            let undone = guard
                .restore_all()
                .and_then(|()| journal.forget_all(&unwritten));
            return Err(match undone {
                Ok(()) => apply,
                Err(restore) => KnobError::ApplyAndRestore {
                    apply: Box::new(apply),
                    restore: Box::new(restore),
                },
            });
        }
    }
    Ok(guard)
}

/// sysfs shows values with a trailing newline and takes them without one.
fn same_value(current: &[u8], wanted: &[u8]) -> bool {
    current.trim_ascii() == wanted.trim_ascii()
}

fn write_verified(sys: &SysRoot, rel: &str, value: &[u8], form: Form) -> Result<(), KnobError> {
    sys.write(rel, value)?;
    let reads = form.current(sys, rel)?;
    if same_value(&reads, value) {
        Ok(())
    } else {
        Err(KnobError::NotTaken {
            path: sys.path(rel),
            wrote: String::from_utf8_lossy(value).into_owned(),
            reads: String::from_utf8_lossy(&reads).trim_end().to_string(),
        })
    }
}

/// Holds the originals of the files a knob changed; writes them back on `restore` or drop.
#[derive(Debug)]
pub struct FileGuard {
    sys: SysRoot,
    journal: Journal,
    changes: Vec<(Saved, Form)>,
    done: bool,
}

impl FileGuard {
    /// A guard of no changes yet, for a knob that journals and writes by itself.
    pub(crate) fn new(sys: &SysRoot, journal: &Journal) -> Self {
        Self {
            sys: sys.clone(),
            journal: journal.clone(),
            changes: Vec::new(),
            done: false,
        }
    }

    /// Takes charge of a journaled file, before it is written.
    pub(crate) fn track(&mut self, saved: Saved, form: Form) {
        self.changes.push((saved, form));
    }

    /// The files changed, relative to the root, in order of change.
    pub fn paths(&self) -> Vec<&str> {
        self.changes.iter().map(|(c, _)| c.path.as_str()).collect()
    }

    /// Writes every original back, newest first, without stopping at a failure, then
    /// forgets the entries restored. Entries that failed stay in the journal.
    pub(crate) fn restore_all(&mut self) -> Result<(), KnobError> {
        self.done = true;
        let mut restored = Vec::new();
        let mut failures = Vec::new();
        for (change, form) in self.changes.iter().rev() {
            match self.sys.write(&change.path, &change.original) {
                Ok(()) => restored.push(change.id),
                // A write that was refused may have left the file as it was.
                Err(e) => match form.current(&self.sys, &change.path) {
                    Ok(now) if same_value(&now, &change.original) => restored.push(change.id),
                    _ => failures.push(e.to_string()),
                },
            }
        }
        if let Err(e) = self.journal.forget_all(&restored) {
            failures.push(e.to_string());
        }
        self.changes.clear();
        if failures.is_empty() {
            Ok(())
        } else {
            Err(KnobError::Restore { failures })
        }
    }
}

impl KnobGuard for FileGuard {
    fn restore(mut self: Box<Self>) -> Result<(), KnobError> {
        self.restore_all()
    }
}

impl Drop for FileGuard {
    fn drop(&mut self) {
        if !self.done {
            if let Err(e) = self.restore_all() {
                eprintln!("perflab: {e}");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn tree(n: usize) -> (tempfile::TempDir, SysRoot, Journal, Vec<(String, Vec<u8>)>) {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("root/sys/k")).unwrap();
        let mut writes = Vec::new();
        for i in 0..n {
            fs::write(
                dir.path().join(format!("root/sys/k/f{i}")),
                format!("{i}\n"),
            )
            .unwrap();
            writes.push((format!("sys/k/f{i}"), b"x".to_vec()));
        }
        let sys = SysRoot::at(dir.path().join("root"));
        let journal = Journal::open(dir.path().join("journal.json")).unwrap();
        (dir, sys, journal, writes)
    }

    fn contents(sys: &SysRoot, n: usize) -> Vec<String> {
        (0..n)
            .map(|i| sys.read_string(&format!("sys/k/f{i}")).unwrap())
            .collect()
    }

    #[test]
    fn a_failure_midway_puts_back_what_was_written_and_empties_the_journal() {
        let (_dir, sys, journal, writes) = tree(5);
        let before = contents(&sys, 5);
        let err = write_files_failing_at(&sys, &journal, "t=x", &writes, Some(3)).unwrap_err();
        assert!(err.to_string().contains("injected failure"), "{err}");
        assert!(err.to_string().contains("sys/k/f3"), "{err}");
        assert_eq!(contents(&sys, 5), before);
        assert_eq!(journal.entries().unwrap(), vec![]);
    }

    #[test]
    fn unchanged_files_are_neither_written_nor_journaled() {
        let (_dir, sys, journal, mut writes) = tree(3);
        writes[1].1 = b"1".to_vec();
        let guard = write_files(&sys, &journal, "t=x", &writes).unwrap();
        assert_eq!(guard.paths(), vec!["sys/k/f0", "sys/k/f2"]);
        assert_eq!(journal.entries().unwrap().len(), 2);
        assert_eq!(contents(&sys, 3), vec!["x", "1\n", "x"]);
        Box::new(guard).restore().unwrap();
        assert_eq!(contents(&sys, 3), vec!["0\n", "1\n", "2\n"]);
        assert!(journal.entries().unwrap().is_empty());
    }

    #[test]
    fn a_failed_restore_keeps_its_entry_and_names_the_file() {
        let (dir, sys, journal, writes) = tree(2);
        let guard = write_files(&sys, &journal, "t=x", &writes).unwrap();
        // Replacing the file by a directory makes the write back fail, even for root.
        let f1 = dir.path().join("root/sys/k/f1");
        fs::remove_file(&f1).unwrap();
        fs::create_dir(&f1).unwrap();
        let err = Box::new(guard).restore().unwrap_err();
        assert!(err.to_string().contains("sys/k/f1"), "{err}");
        assert!(err.to_string().contains("perflab restore"), "{err}");
        assert_eq!(sys.read_string("sys/k/f0").unwrap(), "0\n");
        let left = journal.entries().unwrap();
        assert_eq!(left.len(), 1);
        assert_eq!(left[0].path, "sys/k/f1");
    }
}
