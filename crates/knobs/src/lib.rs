//! System knobs for perflab, with an on-disk journal that guarantees restore.
//!
//! A knob ([`Knob`]) changes a system setting a variant needs. Before it changes a file it
//! records the exact original bytes in the [`Journal`], durably; it returns a guard
//! ([`KnobGuard`]) that writes them back on `restore`, on drop (early return, error, panic
//! unwinding) and, through the stop flag set by [`signals::install`], on SIGINT, SIGTERM
//! and SIGHUP. After SIGKILL or power loss, [`restore_pending`] replays what the journal
//! still holds for processes that are gone; [`pending`] lists it so that every perflab start
//! can warn. Every target is also locked system wide before its original is journaled
//! ([`target_lock`]), so two perflab processes with different journals never take each
//! other's temporary values for originals.

pub mod child;
pub mod compaction;
pub mod cpuidle;
pub mod effect;
pub mod error;
pub mod fake;
pub mod files;
pub mod guest;
pub mod hooks;
pub mod hugepages;
pub mod irq_affinity;
mod irq_devices;
pub mod journal;
pub mod knob;
pub mod netpath;
pub mod owner;
pub mod pmqos;
pub mod registry;
pub mod replay;
pub mod signals;
pub mod target_lock;
pub mod thp;

pub use error::KnobError;
pub use files::{journal_files, write_attrs, write_files, AttrWrite, FileGuard, Form};
pub use journal::{Action, Created, Entry, EntryId, Journal, Original, Saved, JOURNAL_FACT};
pub use knob::{verify_effects, AppliedVariant, EffectProbe, Knob, KnobGuard, Settings};
pub use registry::{knob_names, parse_knob, parse_setting, registry};
pub use replay::{pending, pending_warning, restore_pending, RestoreReport};
pub use signals::SignalGuard;
