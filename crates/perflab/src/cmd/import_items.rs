//! What an export's readers hand over (`import_stream` for any JSON, `import_lines` for the
//! layout `export` writes): the document's small fields, each list entry, which lists to
//! parse, and why a read stopped. In a file of their own so the two readers share them
//! without importing each other.

use perflab_store::{MeasurementRecord, PlannedMeasurement, RunInfo};

/// The document's fields other than its two lists. `plan`, `format` and
/// `format_version` came later: an export without them is read as docs/export.md says.
#[derive(Debug, Default)]
pub struct Head {
    pub format: Option<String>,
    pub format_version: Option<u32>,
    pub run: Option<RunInfo>,
    /// Version 2: the fields each telemetry row (an array) lists, in order.
    pub telemetry_columns: Option<Vec<String>>,
    /// Whether the document has a `plan` (not `null`).
    pub has_plan: bool,
    /// Whether `plan` comes before `measurements` in the document.
    pub plan_first: bool,
}

/// One entry of either list, or the document's fields read before its first list.
pub enum Item {
    /// Before the first list, whichever it is: the fields read so far (`run` left out),
    /// so a document of another format is told as that before its lists are parsed.
    Head(Box<Head>),
    Plan(PlannedMeasurement),
    Measurement(MeasurementRecord),
}

/// Which lists to parse into [`Item`]s; the other is skipped unread.
#[derive(Clone, Copy)]
pub struct Lists {
    pub plan: bool,
    pub measurements: bool,
}

impl Lists {
    pub const BOTH: Lists = Lists {
        plan: true,
        measurements: true,
    };
    pub const PLAN: Lists = Lists {
        plan: true,
        measurements: false,
    };
    pub const MEASUREMENTS: Lists = Lists {
        plan: false,
        measurements: true,
    };
}

/// How the document is read (see the module's documentation).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Layout {
    Lines,
    Any,
}

/// Why a read stopped: the document is not an export (`Parse`, serde's words with the
/// line and column), it is not laid out as `export` writes it (with [`Layout::Lines`]),
/// or `each` said so.
pub enum Stop<E> {
    Parse(serde_json::Error),
    NotLines,
    Each(E),
}
