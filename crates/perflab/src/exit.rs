//! Mapping errors to one-line messages and exit codes.

/// Exit code for input the user must fix; nothing was changed on the system or in the
/// results database.
pub const INPUT: i32 = 2;
/// A failure while running; also a run none of whose measurements succeeded.
pub const FAILURE: i32 = 1;
/// A run that finished with some of its measurements failed: the others are stored and
/// compared, and the last line says how many failed.
pub const SOME_FAILED: i32 = 3;
/// A cross-check whose ratio or target is outside its stated tolerance: it ran, and its
/// numbers are printed, but they do not hold.
pub const OUTSIDE_TOLERANCE: i32 = 4;
/// A run that compares variants completed, but a variant it compares was unavailable on
/// this machine (a knob needs root, a device is missing): what it measured is stored, but
/// the comparison with that variant never happened, and the last line says which.
pub const NOT_COMPARED: i32 = 5;
pub const INTERRUPTED: i32 = 130;

/// A user input error raised by the binary itself.
#[derive(Debug)]
pub struct InputError(pub String);

pub fn input(msg: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(InputError(msg.into()))
}

/// The error chain on one line: `outer: inner: root cause`, without repeats.
pub fn message(err: &anyhow::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    for cause in err.chain() {
        let s = cause.to_string();
        if !parts.iter().any(|p| p.contains(&s)) {
            parts.push(s);
        }
    }
    parts.join(": ").replace('\n', " ")
}

pub fn code(err: &anyhow::Error) -> i32 {
    for cause in err.chain() {
        // An experiment file that does not parse or check is the person's to fix.
        if cause.downcast_ref::<InputError>().is_some()
            || cause
                .downcast_ref::<perflab_core::SpecFileError>()
                .is_some()
        {
            return INPUT;
        }
        if let Some(e) = cause.downcast_ref::<perflab_lab::LabError>() {
            return match e {
                perflab_lab::LabError::Store(s) if s.is_input() => INPUT,
                e if e.is_input() => INPUT,
                _ => FAILURE,
            };
        }
        if let Some(r) = cause.downcast_ref::<perflab_report::ReportError>() {
            use perflab_report::ReportError::*;
            return match r {
                Write { .. } | Json(_) => FAILURE,
                _ => INPUT,
            };
        }
        if let Some(s) = cause.downcast_ref::<perflab_store::StoreError>() {
            return if s.is_input() { INPUT } else { FAILURE };
        }
    }
    FAILURE
}

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InputError {}
