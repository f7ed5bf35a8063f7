use std::path::PathBuf;

use perflab_core::Unavailable;
use perflab_sys::SysError;

/// Why a knob could not be parsed, applied or restored. Each variant names the knob, file or
/// journal involved, so the message alone tells a person what to look at.
#[derive(Debug, thiserror::Error)]
pub enum KnobError {
    #[error("hook `{cmd}` failed: {why}")]
    Hook { cmd: String, why: String },
    /// A system command a knob runs (`ip`, `ovs-vsctl`) failed or could not start.
    #[error("`{cmd}` failed: {why}")]
    Command { cmd: String, why: String },
    #[error("unknown knob {name:?} (valid: {valid})")]
    UnknownKnob { name: String, valid: String },

    #[error("{knob}={value:?}: {reason}")]
    InvalidValue {
        knob: String,
        value: String,
        reason: String,
    },

    #[error("{knob} is unavailable: {source}")]
    Unavailable {
        knob: String,
        #[source]
        source: Unavailable,
    },

    #[error(transparent)]
    Sys(#[from] SysError),

    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// The kernel accepted the write but reads back something else (some idle states
    /// cannot be disabled, some values are clamped).
    #[error("{path}: wrote {wrote:?} but it reads {reads:?}; the kernel did not take the value")]
    NotTaken {
        path: PathBuf,
        wrote: String,
        reads: String,
    },

    /// The kernel found fewer free huge pages than asked for (memory too fragmented for
    /// pages that size, or taken meanwhile).
    #[error(
        "{path}: the kernel allocated {got} of the {asked} {page} huge pages asked for{}",
        short_advice(*.compactions, page)
    )]
    ShortAllocation {
        path: PathBuf,
        page: String,
        got: u64,
        asked: u64,
        /// Times perflab compacted memory and asked again before giving up.
        compactions: u32,
    },

    #[error(
        "journal {path} is unreadable: {reason}; it was left in place: restore by hand what it \
         lists, then remove it"
    )]
    CorruptJournal { path: PathBuf, reason: String },

    /// Another perflab changed the file and has not restored it.
    #[error("{path}: {reason}")]
    Busy { path: PathBuf, reason: String },

    /// A perflab that did not finish left the target changed (see [`crate::target_lock`]):
    /// `perflab restore` must put it back first.
    #[error("{target}: {why}")]
    Held { target: PathBuf, why: String },

    /// Another live perflab holds the target system wide (see [`crate::target_lock`]):
    /// busy, not wrong; it is free again once that one has finished.
    #[error("{target}: {why}")]
    InUse { target: PathBuf, why: String },

    /// Some originals could not be written back; their journal entries were kept.
    #[error(
        "could not restore {}: {}; the journal keeps them: run `perflab restore`",
        plural(failures.len()),
        failures.join("; ")
    )]
    Restore { failures: Vec<String> },

    /// Applying failed, and undoing what had already been applied failed as well.
    #[error("{apply}; undoing the settings already made also failed: {restore}")]
    ApplyAndRestore {
        apply: Box<KnobError>,
        restore: Box<KnobError>,
    },

    #[error("cannot install signal handlers: {0}")]
    Signal(#[source] std::io::Error),
}

fn plural(n: usize) -> String {
    if n == 1 {
        "1 setting".to_string()
    } else {
        format!("{n} settings")
    }
}

impl KnobError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        KnobError::Io {
            path: path.into(),
            source,
        }
    }

    pub(crate) fn unavailable(knob: impl Into<String>, source: Unavailable) -> Self {
        KnobError::Unavailable {
            knob: knob.into(),
            source,
        }
    }

    /// True when another perflab has, or left changed, what the knob changes: nothing was
    /// changed, and the person must let it finish (or run `perflab restore`) first.
    pub fn is_busy(&self) -> bool {
        // Not ApplyAndRestore: there, undoing the knobs applied before failed, so
        // something stays changed.
        matches!(
            self,
            KnobError::Held { .. } | KnobError::Busy { .. } | KnobError::InUse { .. }
        )
    }

    /// True when another live perflab holds what the knob needs: nothing was changed, and
    /// the same run succeeds once that one has finished (`run --wait-lock` waits for it).
    pub fn is_in_use(&self) -> bool {
        matches!(self, KnobError::InUse { .. })
    }

    /// True when the error only says the machine lacks what the knob needs.
    pub fn is_unavailable(&self) -> bool {
        matches!(self, KnobError::Unavailable { .. })
    }
}

/// The rest of a short allocation's message: what was tried, and what is left to try.
fn short_advice(compactions: u32, page: &str) -> String {
    let boot =
        format!("reserve them at boot (hugepagesz={page} hugepages=N on the kernel command line)");
    match compactions {
        0 => format!(
            " (free memory is too fragmented); compact it (echo 1 > /proc/sys/vm/compact_memory) \
             and retry, or {boot}"
        ),
        n => format!(
            ", even after compacting memory {n} times (free memory is too fragmented, or \
             held by the page cache or other processes); {boot}"
        ),
    }
}
