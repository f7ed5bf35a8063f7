//! Mapping errors to one-line messages and exit codes.
//!
//! Every exit code is a `pub const NAME: i32` below, its doc comment what it means: the
//! first clause (up to the first `: ` or `. `) is its summary in `perflab --help`, the
//! whole comment its entry in the manual's EXIT STATUS ([`codes`] reads this file, so a
//! code added here is documented there without another edit).

/// Success: the command did what it was asked, and a run compared what it planned.
pub const SUCCESS: i32 = 0;
/// A failure while running: also a run none of whose measurements succeeded, and a write
/// to standard output that failed (one line says so).
pub const FAILURE: i32 = 1;
/// Bad input (a flag, a value, a file) the user must fix: nothing was changed on the
/// system or in the results database.
pub const INPUT: i32 = 2;
/// A run that completed with some of its measurements failed: the others are stored and
/// compared, and the last line says how many failed.
pub const SOME_FAILED: i32 = 3;
/// A cross-check whose ratio or cost is outside its stated tolerance: it ran, and its
/// numbers are printed, but they do not hold.
pub const OUTSIDE_TOLERANCE: i32 = 4;
/// A run that could not compare as planned: a variant it compares was unavailable on
/// this machine (a knob needs root, a device is missing); what it measured is stored, but
/// the comparison with that variant never happened, and the last line says which.
pub const NOT_COMPARED: i32 = 5;
/// Busy, another perflab holds a setting the run changes: nothing was stored or changed;
/// the same command succeeds once that one has finished, and `run --wait-lock TIME`
/// waits for it.
pub const BUSY: i32 = 6;
/// A row of `compare --fail-on` read a verdict the gate fails on: the tables printed as
/// usual and the rows that tripped it are listed last.
pub const GATE: i32 = 7;
/// A run that completed with some measurements ineffective: a knob of their variant did
/// not hold (an idle driver that ignores `disable`, an IRQ that did not move), so they are
/// stored but not their variant's numbers, and no verdict uses them; the last line says
/// how many. A script must not read such a run as a clean comparison.
pub const INEFFECTIVE: i32 = 8;
/// A run that completed, but tested nothing of a variant: at every point, the variant's
/// settings changed nothing its telemetry can see (no idle entries in either variant, no
/// interrupt moved, no huge page used), so its comparisons read `void`, with the reason,
/// listed at the end of the run (a void point among others is listed, not an exit). Takes
/// precedence over [`INEFFECTIVE`], which is often its cause. `compare` exits 9 too when
/// a variant it compares tested nothing at every row it has (two variants of one run, or
/// one variant of two runs whose settings for it differ), the void rows listed after the
/// tables; a gate of `compare --fail-on` ([`GATE`]) comes first.
pub const VOID: i32 = 9;
/// A run that completed with some measurements disturbed: other work took more of their
/// CPUs than the run allows (10%, `--disturbed-above`; the `disturbance` monitor), so they
/// are stored and shown but no verdict uses them, and the last line says how many.
/// Failures (3), unavailable variants (5), void comparisons (9) and ineffective
/// measurements (8) take precedence; `run --quiet-machine` waits for the CPUs to be quiet
/// first (docs/METHODOLOGY.md, "A disturbed machine").
pub const DISTURBED: i32 = 10;
/// Stopped by a signal (Ctrl-C, SIGTERM): everything measured so far is kept, and `run
/// --resume RUN` (or the same `bisect`) goes on from there.
pub const INTERRUPTED: i32 = 130;

/// One exit code as this file defines it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExitCode {
    pub code: i32,
    /// The constant's name (`SOME_FAILED`).
    pub name: String,
    /// Its doc comment, one paragraph, intra-doc links to other codes written as their
    /// numbers.
    pub doc: String,
}

impl ExitCode {
    /// The doc's first clause: up to its first `: ` or `. `.
    pub fn summary(&self) -> &str {
        let end = [": ", ". "]
            .iter()
            .filter_map(|p| self.doc.find(p))
            .min()
            .unwrap_or(self.doc.len());
        self.doc[..end].trim_end_matches('.')
    }
}

/// Every exit code, read from this file's `pub const NAME: i32 = N;` lines and the doc
/// comments above them, in code order: the one list `--help` and the manual show.
pub fn codes() -> Vec<ExitCode> {
    let mut out: Vec<ExitCode> = Vec::new();
    let mut doc: Vec<&str> = Vec::new();
    for line in include_str!("exit.rs").lines().map(str::trim) {
        if let Some(d) = line.strip_prefix("///") {
            doc.push(d.trim());
            continue;
        }
        let def = line
            .strip_prefix("pub const ")
            .and_then(|l| l.split_once(": i32 = "))
            .and_then(|(name, v)| Some((name, v.strip_suffix(';')?.parse::<i32>().ok()?)));
        if let Some((name, code)) = def {
            out.push(ExitCode {
                code,
                name: name.to_string(),
                doc: doc.join(" "),
            });
        }
        if !line.starts_with("#[") {
            doc.clear();
        }
    }
    let names: Vec<(String, i32)> = out.iter().map(|c| (c.name.clone(), c.code)).collect();
    for c in &mut out {
        for (name, code) in &names {
            c.doc = c
                .doc
                .replace(&format!("[`{name}`]"), &format!("exit code {code}"));
        }
    }
    out.sort_by_key(|c| c.code);
    out
}

/// `perflab --help`'s last paragraph: each code and its summary.
pub fn help_text() -> String {
    let list: Vec<String> = codes()
        .iter()
        .map(|c| {
            let s = c.summary();
            let mut first = s.chars();
            let lower = first
                .next()
                .map(|f| f.to_lowercase().chain(first).collect::<String>())
                .unwrap_or_default();
            format!("{} {lower}", c.code)
        })
        .collect();
    format!(
        "Exit codes: {}. `perflab man` says more of each.",
        list.join("; ")
    )
}

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
        // clap's own exit ignores a failed write (`perflab --help > /dev/full` exited 0).
        let printed = e
            .print()
            .and_then(|()| std::io::Write::flush(&mut crate::stdout_guard::Stdout));
        if let Err(why) = printed {
            eprintln!("perflab: {}", crate::stdout_guard::WriteFailed::from(why));
            std::process::exit(FAILURE);
        }
        std::process::exit(e.exit_code());
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
    fn every_code_is_read_with_its_doc() {
        let codes = super::codes();
        let find = |n: i32| codes.iter().find(|c| c.code == n).expect("defined");
        assert_eq!(find(super::SOME_FAILED).name, "SOME_FAILED");
        assert_eq!(
            find(super::INPUT).summary(),
            "Bad input (a flag, a value, a file) the user must fix"
        );
        assert_eq!(find(super::SUCCESS).summary(), "Success");
        assert!(
            codes
                .iter()
                .all(|c| !c.doc.is_empty() && !c.doc.contains("[`")),
            "{codes:?}"
        );
        assert!(codes.windows(2).all(|w| w[0].code < w[1].code), "{codes:?}");
        let help = super::help_text();
        assert!(
            help.starts_with("Exit codes: 0 success; 1 a failure while running; 2 bad input"),
            "{help}"
        );
        assert!(
            help.contains("130 stopped by a signal (Ctrl-C, SIGTERM)"),
            "{help}"
        );
    }

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
