//! Standard output, and what a failed write to it does: every command ends with one line
//! and exit 1 ("perflab: cannot write to standard output: No space left on device"),
//! never a panic's backtrace, a SIGPIPE death (exit 141, a run left as it was), a
//! second line from whatever the failed write broke next, or exit 0 with the output
//! lost (issue 34 item 5).
//!
//! Commands write through [`Stdout`] ([`print`]), which records the first failure; after
//! the command, [`finish`] flushes and, when a write failed, says so in place of the
//! command's own outcome, whatever error (or success: a check that ignores its closed
//! output) the failure turned into on its way up. A write that went around [`Stdout`]
//! (`println!` in another crate) fails as std makes it fail, with a panic; that panic
//! unwinds like any other (a run's knobs are put back by their guards on the way) and is
//! caught here as the same failure. A reader that went away (`perflab ls | head -1`, as
//! a Unix filter ends) is exit 1 without a line: SIGPIPE is ignored (see `main`).

use std::io::{self, Write};
use std::panic::{self, AssertUnwindSafe};
use std::sync::OnceLock;

/// How std words the panic of a failed `print!`.
const FAILED_PRINT: &str = "failed printing to stdout";

/// The first failed write to standard output: its kind and std's words for it.
static FAILED: OnceLock<(io::ErrorKind, String)> = OnceLock::new();

/// perflab's standard output: std's, with a failure recorded for [`finish`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Stdout;

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        io::stdout().lock().write(buf).map_err(failed)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        io::stdout().lock().write_all(buf).map_err(failed)
    }

    fn flush(&mut self) -> io::Result<()> {
        io::stdout().lock().flush().map_err(failed)
    }
}

/// The failure as the error a command returns: its text is the line [`finish`] prints.
#[derive(Debug)]
pub struct WriteFailed(String);

impl std::fmt::Display for WriteFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot write to standard output: {}", self.0)
    }
}

impl std::error::Error for WriteFailed {}

impl From<io::Error> for WriteFailed {
    fn from(e: io::Error) -> Self {
        WriteFailed(e.to_string())
    }
}

fn failed(e: io::Error) -> io::Error {
    let why = e.to_string();
    let _ = FAILED.set((e.kind(), why.clone()));
    io::Error::new(e.kind(), WriteFailed(why))
}

/// Writes `text` to standard output.
pub fn print(text: impl AsRef<str>) -> io::Result<()> {
    Stdout.write_all(text.as_ref().as_bytes())
}

/// Writes `text` and a newline to standard output.
pub fn line(text: impl AsRef<str>) -> io::Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(text.as_ref().as_bytes())
        .and_then(|()| out.write_all(b"\n"))
        .map_err(failed)
}

fn text(payload: &(dyn std::any::Any + Send)) -> Option<&str> {
    payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
}

/// Keeps the default panic message for every panic but a failed print, which [`run`]
/// reports in one line.
pub fn install() {
    let default = panic::take_hook();
    panic::set_hook(Box::new(move |info| {
        if !text(info.payload()).is_some_and(|t| t.starts_with(FAILED_PRINT)) {
            default(info);
        }
    }));
}

/// Runs a command, turning a failed print's panic into its recorded failure, and
/// flushes what std still buffers (a last line without its newline), so that its failure
/// is recorded too before anything is said.
pub fn run<T>(f: impl FnOnce() -> anyhow::Result<T>) -> anyhow::Result<T> {
    let result = panic::catch_unwind(AssertUnwindSafe(f));
    let _ = Stdout.flush();
    match result {
        Ok(result) => result,
        Err(payload) => match text(&*payload) {
            Some(t) if t.starts_with(FAILED_PRINT) => {
                let why = t.trim_start_matches(FAILED_PRINT).trim_start_matches(": ");
                // std's words end in the io::Error's own; its kind is what `finish` needs.
                let kind = if why.starts_with("Broken pipe") {
                    io::ErrorKind::BrokenPipe
                } else {
                    io::ErrorKind::Other
                };
                let _ = FAILED.set((kind, why.to_string()));
                Err(WriteFailed(why.to_string()).into())
            }
            _ => panic::resume_unwind(payload),
        },
    }
}

/// When a write to standard output failed: its one line (none for a reader that went
/// away), to be said in place of the command's own outcome, and exit 1.
pub fn failure() -> Option<Option<String>> {
    FAILED.get().map(|(kind, why)| {
        (*kind != io::ErrorKind::BrokenPipe).then(|| WriteFailed(why.clone()).to_string())
    })
}
