//! The targets one journal handle holds.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use super::holder::Holder;
use super::lock::TargetLock;
use crate::error::KnobError;
use crate::journal::EntryId;

/// The targets one journal handle holds, with the entries it journaled for each and has
/// not restored yet. Dropped with the handle's last clone: a target whose originals are
/// all back is released cleanly; one still changed keeps its record for the next claimer.
#[derive(Debug, Default)]
pub(crate) struct Targets {
    held: HashMap<PathBuf, Held>,
}

#[derive(Debug)]
struct Held {
    lock: TargetLock,
    unrestored: BTreeSet<EntryId>,
}

impl Targets {
    /// Locks the target unless this handle holds it already.
    pub(crate) fn claim(&mut self, me: Holder) -> Result<(), KnobError> {
        if self.held.contains_key(&me.target) {
            return Ok(());
        }
        let lock = TargetLock::acquire(&me)?;
        self.held.insert(
            me.target,
            Held {
                lock,
                unrestored: BTreeSet::new(),
            },
        );
        Ok(())
    }

    pub(crate) fn journaled(&mut self, target: &Path, id: EntryId) {
        if let Some(h) = self.held.get_mut(target) {
            h.unrestored.insert(id);
        }
    }

    pub(crate) fn restored(&mut self, ids: &[EntryId]) {
        for h in self.held.values_mut() {
            h.unrestored.retain(|id| !ids.contains(id));
        }
    }
}

impl Drop for Targets {
    fn drop(&mut self) {
        for (_, held) in self.held.drain() {
            if held.unrestored.is_empty() {
                held.lock.release();
            }
            // Else the lock closes with its record in place: see `left_changed`.
        }
    }
}
