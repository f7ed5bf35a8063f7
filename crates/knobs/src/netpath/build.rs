//! The objects one network path created, each journaled before it is made, and removed
//! newest first: on restore, on drop, and when building fails part way.

use perflab_sys::SysRoot;

use super::undo;
use crate::error::KnobError;
use crate::journal::{Created, EntryId, Journal};

pub(crate) struct Built {
    sys: SysRoot,
    journal: Journal,
    knob: String,
    created: Vec<(EntryId, Created)>,
    /// For tests: fail as if the kernel refused the object with this index.
    fail_at: Option<usize>,
}

impl Built {
    pub(crate) fn new(
        sys: &SysRoot,
        journal: &Journal,
        knob: &str,
        fail_at: Option<usize>,
    ) -> Self {
        Self {
            sys: sys.clone(),
            journal: journal.clone(),
            knob: knob.to_string(),
            created: Vec::new(),
            fail_at,
        }
    }

    /// Journals `object`, then runs `make` to create it. The object counts as created from
    /// the moment it is journaled: a failed `make` may have made it anyway.
    pub(crate) fn create(
        &mut self,
        object: Created,
        make: impl FnOnce() -> Result<(), KnobError>,
    ) -> Result<(), KnobError> {
        let id = self.journal.save_created(&self.sys, &object, &self.knob)?;
        let index = self.created.len();
        self.created.push((id, object.clone()));
        if self.fail_at == Some(index) {
            return Err(KnobError::Command {
                cmd: format!("create {object}"),
                why: "injected failure".into(),
            });
        }
        make()
    }

    /// Journals an object that exists already (a process: its pid is known only once it
    /// runs); from now on it is removed with the rest.
    pub(crate) fn record(&mut self, object: Created) -> Result<(), KnobError> {
        let id = self.journal.save_created(&self.sys, &object, &self.knob)?;
        self.created.push((id, object));
        Ok(())
    }

    /// Removes everything, newest first, going on past failures; entries of objects that
    /// could not be removed stay in the journal for `perflab restore`.
    pub(crate) fn teardown(&mut self) -> Result<(), KnobError> {
        let mut removed = Vec::new();
        let mut failures = Vec::new();
        while let Some((id, object)) = self.created.pop() {
            match undo::remove(&object) {
                Ok(()) => removed.push(id),
                Err(why) => failures.push(format!("{object}: {why}")),
            }
        }
        if let Err(e) = self.journal.forget_all(&removed) {
            failures.push(e.to_string());
        }
        if failures.is_empty() {
            Ok(())
        } else {
            Err(KnobError::Restore { failures })
        }
    }

    /// Undoes what was built and returns `apply`'s error, with any failure to undo added.
    pub(crate) fn abandon(mut self, apply: KnobError) -> KnobError {
        match self.teardown() {
            Ok(()) => apply,
            Err(restore) => KnobError::ApplyAndRestore {
                apply: Box::new(apply),
                restore: Box::new(restore),
            },
        }
    }
}

impl Drop for Built {
    fn drop(&mut self) {
        if !self.created.is_empty() {
            if let Err(e) = self.teardown() {
                eprintln!("perflab: {e}");
            }
        }
    }
}
