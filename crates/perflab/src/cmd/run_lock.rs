//! What a run refused a setting says to do next. The knob's error names the setting and
//! who holds it (or left it changed); only the binary knows the database a resume must
//! reach, so the next step is added here, with `--db` when one was given.

use perflab_lab::LabError;

use crate::cli::Global;
use crate::cmd::hint;

/// `err` with the next step added when a knob was refused because another perflab holds
/// (or left changed) its setting; any other error as it is. `run` is the stored run the
/// refusal stopped, `None` before one was created.
pub fn refused(err: LabError, run: Option<i64>, g: &Global) -> anyhow::Error {
    let LabError::Knob(k) = &err else {
        return err.into();
    };
    if !k.is_busy() {
        return err.into();
    }
    let resume = run.map(|id| format!("`perflab run --resume {id}{}`", hint::db_flag(g)));
    let next = match (k.is_in_use(), resume) {
        (true, Some(resume)) => format!(
            ": resume this run with {resume} once it has finished, or wait for it with \
             --wait-lock TIME"
        ),
        (true, None) => {
            ": run again once it has finished, or wait for it with --wait-lock TIME".to_string()
        }
        // Left changed by a perflab that did not finish: its message says to restore.
        (false, Some(resume)) => format!(", then resume this run with {resume}"),
        (false, None) => String::new(),
    };
    anyhow::Error::new(Refused { err, next })
}

/// A refusal and the next step; the refusal stays its source, for the exit code.
#[derive(Debug)]
struct Refused {
    err: LabError,
    next: String,
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}{}", self.err, self.next)
    }
}

impl std::error::Error for Refused {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use perflab_knobs::KnobError;
    use std::path::PathBuf;

    fn g(db: Option<&str>) -> Global {
        Global {
            db: db.map(PathBuf::from),
            sysroot: None,
            journal: None,
        }
    }

    fn in_use() -> LabError {
        LabError::Knob(KnobError::InUse {
            target: "/sys/x".into(),
            why: "in use by perflab pid 7".into(),
        })
    }

    #[test]
    fn the_next_step_names_the_database_and_the_code_is_busy() {
        let e = refused(in_use(), Some(4), &g(Some("/tmp/a b.db")));
        assert_eq!(
            crate::exit::message(&e),
            "/sys/x: in use by perflab pid 7: resume this run with `perflab run --resume 4 \
             --db '/tmp/a b.db'` once it has finished, or wait for it with --wait-lock TIME"
        );
        assert_eq!(crate::exit::code(&e), crate::exit::BUSY);
        let e = refused(in_use(), None, &g(None));
        assert_eq!(
            crate::exit::message(&e),
            "/sys/x: in use by perflab pid 7: run again once it has finished, or wait for it \
             with --wait-lock TIME"
        );
        // Left changed by a killed perflab: restore first, a state to fix (exit 2).
        let left = LabError::Knob(KnobError::Held {
            target: "/sys/x".into(),
            why: "run `perflab restore` first".into(),
        });
        let e = refused(left, Some(4), &g(Some("r.db")));
        assert_eq!(
            crate::exit::message(&e),
            "/sys/x: run `perflab restore` first, then resume this run with `perflab run \
             --resume 4 --db r.db`"
        );
        assert_eq!(crate::exit::code(&e), crate::exit::INPUT);
    }
}
