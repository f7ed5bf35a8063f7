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
/// Busy, not wrong: another live perflab holds a setting the run changes. Nothing was
/// stored or changed; the same command succeeds once that one has finished, and
/// `run --wait-lock TIME` waits for it.
pub const BUSY: i32 = 6;
/// `compare --fail-on`: a row read a verdict the gate fails on; the tables printed as
/// usual and the rows that tripped it are listed last.
pub const GATE: i32 = 7;
/// A run that completed with some measurements ineffective: a knob of their variant did
/// not hold (an idle driver that ignores `disable`, an IRQ that did not move), so they are
/// stored but not their variant's numbers, and no verdict uses them; the last line says
/// how many. A script must not read such a run as a clean comparison (issue 32).
pub const INEFFECTIVE: i32 = 8;
/// A run that completed, but a comparison it makes tested nothing: a knob or variant
/// changed nothing its telemetry can see (no idle entries in either variant, no interrupt
/// moved, no huge page used), so that comparison reads `void`, with the reason, listed at
/// the end of the run. Takes precedence over [`INEFFECTIVE`], which is often its cause.
pub const VOID: i32 = 9;
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
        // A cause that repeats its context and says more ("results database X is
        // damaged" under "results database X") stands alone.
        if parts
            .last()
            .is_some_and(|last| s.starts_with(last.as_str()))
        {
            parts.pop();
        }
        if !parts.iter().any(|p| p.contains(&s)) {
            parts.push(s);
        }
    }
    parts.join(": ").replace('\n', " ")
}

/// Ends perflab on a command line clap refused: help and version print as clap prints
/// them; a bad flag or value is one line and exit 2 like every other input error (clap's
/// usage block and "For more information" tip would make it five).
pub fn clap_error(e: clap::Error) -> ! {
    use clap::error::ErrorKind::*;
    if matches!(
        e.kind(),
        DisplayHelp | DisplayVersion | DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        e.exit();
    }
    eprintln!("perflab: {}", one_line(&e.render().to_string()));
    std::process::exit(INPUT);
}

/// clap's message without its usage block and closing tip, on one line.
fn one_line(rendered: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    let mut in_usage = false;
    for line in rendered.lines().map(str::trim) {
        if line.is_empty() {
            in_usage = false;
        } else if line.starts_with("Usage:") {
            in_usage = true;
        } else if !in_usage && !line.starts_with("For more information") {
            parts.push(line.strip_prefix("error: ").unwrap_or(line));
        }
    }
    parts.join(" ")
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
                perflab_lab::LabError::Knob(k) if k.is_in_use() => BUSY,
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

#[cfg(test)]
mod tests {
    #[test]
    fn clap_messages_become_one_line() {
        let rendered = "error: the following required arguments were not provided:\n  \
                        --parser <PARSER>\n\nUsage: perflab import --parser <PARSER> <FILE>\n\n\
                        For more information, try '--help'.\n";
        assert_eq!(
            super::one_line(rendered),
            "the following required arguments were not provided: --parser <PARSER>"
        );
        let tip = "error: unexpected argument '-1' found\n\n  tip: to pass '-1' as a value, \
                   use '-- -1'\n\nUsage: perflab run\n\nFor more information, try '--help'.\n";
        assert_eq!(
            super::one_line(tip),
            "unexpected argument '-1' found tip: to pass '-1' as a value, use '-- -1'"
        );
    }
}
