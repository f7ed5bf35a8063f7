//! A failed write to standard output ends perflab as an error, not a panic's backtrace
//! nor a SIGPIPE death (exit 141, and a run left as it was). SIGPIPE is ignored (see
//! `main`), so `println!` meets EPIPE or ENOSPC as an error, which std turns into a panic
//! "failed printing to stdout"; that panic unwinds like any other (a run's knobs are put
//! back by their guards on the way), and here it becomes exit 1: quietly for a reader that
//! went away (`perflab ls | head -1`, as a Unix filter ends), with one line otherwise.

use std::panic::{self, AssertUnwindSafe};

/// How std words the panic of a failed `print!`.
const FAILED_PRINT: &str = "failed printing to stdout";

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

/// Runs `f`, turning a failed print into exit 1.
pub fn run(f: impl FnOnce() -> i32) -> i32 {
    match panic::catch_unwind(AssertUnwindSafe(f)) {
        Ok(code) => code,
        Err(payload) => match text(&*payload) {
            Some(t) if t.starts_with(FAILED_PRINT) => {
                let why = t.trim_start_matches(FAILED_PRINT).trim_start_matches(": ");
                if !why.starts_with("Broken pipe") {
                    eprintln!("perflab: cannot write to standard output: {why}");
                }
                crate::exit::FAILURE
            }
            _ => panic::resume_unwind(payload),
        },
    }
}
