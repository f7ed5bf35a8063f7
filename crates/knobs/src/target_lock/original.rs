//! The value a target had before any perflab changed it, for readers that describe the
//! machine (the run's fingerprint): while another perflab holds the target changed, the
//! file shows that perflab's temporary value, and its journal holds the machine's.

use std::fs::File;
use std::path::PathBuf;

use perflab_sys::SysRoot;

use super::lock::read_record;
use super::paths::{lock_dir, lock_file_name, target_key, LOCK_DIR};
use crate::journal::file as journal_file;
use crate::journal::record::Action;

/// The bytes `rel` (under `sys`) held before a perflab changed it, as that perflab
/// journaled them, while it has not put them back; `None` when no perflab has it changed
/// (or its record or journal cannot be read, where the file's own value is the best left).
/// The holder is found through the record on the target's lock file, in this user's lock
/// directory and in root's (readable by root only: a user's perflab describes the
/// machine by the file's own value while a root perflab holds it changed).
pub fn journaled_original(sys: &SysRoot, rel: &str) -> Option<Vec<u8>> {
    let target = target_key(sys, rel);
    let name = lock_file_name(&target);
    let mut dirs: Vec<PathBuf> = lock_dir().into_iter().collect();
    if !dirs
        .iter()
        .any(|d| d.as_path() == std::path::Path::new(LOCK_DIR))
    {
        dirs.push(PathBuf::from(LOCK_DIR));
    }
    dirs.iter().find_map(|dir| {
        let holder = read_record(&File::open(dir.join(&name)).ok()?)?;
        let owner = holder.owner();
        // The oldest entry is the machine's value: a later one of the same holder
        // recorded its own earlier change.
        journal_file::entries(&holder.journal)
            .ok()?
            .into_iter()
            .find_map(|e| match e.action {
                Action::Write { original }
                    if e.owner() == owner
                        && target_key(&SysRoot::at(&e.root), &e.path) == target =>
                {
                    Some(original.as_bytes().to_vec())
                }
                _ => None,
            })
    })
}

/// The value of `rel` as the machine has it: the journaled original while a perflab holds
/// it changed, else the file's own, trimmed; empty when neither can be read.
pub fn machine_value(sys: &SysRoot, rel: &str) -> String {
    match journaled_original(sys, rel) {
        Some(bytes) => String::from_utf8_lossy(&bytes).trim().to_string(),
        None => sys.read_trimmed(rel).unwrap_or_default(),
    }
}
