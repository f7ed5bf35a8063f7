//! System-wide ownership of what knobs change.
//!
//! A journal only sees the changes recorded in it. Two perflab processes with different
//! journals (`--journal`, `$PERFLAB_JOURNAL`) changing the same file would each journal
//! the other's temporary value as the original, and whichever restores last makes that
//! value permanent. So before a knob journals a target's original (a sysfs or procfs
//! file, the PM-QoS device it holds a request on), it locks the target, system wide and
//! whatever the journal: an flock on a file named after the target's canonical path in
//! one fixed directory ([`lock_dir`]). A perflab that needs a target another live one
//! holds is refused at once with [`KnobError::InUse`], naming the holder and the target.
//! A claim does not wait, not even briefly for a holder about to finish: its measurements
//! would then run under the other's settings, or its fingerprint record the other's
//! temporary value. Only a sweeper's moment on a lock whose holder is gone is waited out.
//! A caller that would rather wait (`run --wait-lock`) drops everything it claimed and
//! claims again later, before anything is measured: see [`crate::Knob::targets`].
//!
//! Readers that describe the machine (the fingerprint) take a held target's value from
//! its holder's journal ([`machine_value`]): the value found before any perflab changed it.
//!
//! A journal handle (and its clones) keeps every target it claimed until the last clone is
//! dropped, so a run owns what it changed until it ends and nobody changes it between
//! its variants. The kernel drops the flock when the holder dies, so a SIGKILL never
//! leaves a target locked.
//!
//! The lock file holds a record of its holder (pid, command line with its secrets masked,
//! run, journal, knob), readable by its owner only (0600): it outlives a kill. A
//! clean release deletes the file while still holding the lock, so a lock file that is
//! present and unlocked was left by a holder that did not finish (killed, or its restore
//! failed). While the journal its record names still holds that holder's original of the
//! target, a new claim is refused with the `perflab restore` to run first; otherwise the
//! record is stale and is replaced.
//!
//! On a test tree (a SysRoot that is not `/`) the target's canonical path lies inside the
//! tree, so tests on separate trees never contend, and need no privilege.

mod holder;
mod lock;
mod original;
mod paths;
mod targets;

pub(crate) use holder::command_line;
pub use holder::Holder;
pub(crate) use lock::clear_left;
pub use lock::sweep_left;
pub use original::{journaled_original, machine_value};
pub use paths::{lock_dir, lock_file, target_key, LOCK_DIR};
pub(crate) use targets::Targets;
