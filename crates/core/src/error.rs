/// A parameter the user gave that perflab cannot accept.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ParamError {
    #[error("workload {workload} has no parameter {name:?} (it has: {known})")]
    Unknown {
        workload: String,
        name: String,
        known: String,
    },
    #[error("workload {workload} needs parameter {name:?}")]
    Missing { workload: String, name: String },
    #[error("parameter {name}={value:?}: {reason}")]
    Invalid {
        name: String,
        value: String,
        reason: String,
    },
    /// A workload read a parameter it does not declare (a misspelled name in its code):
    /// resolved parameters hold every declared one, so this is never a user's mistake.
    #[error(
        "parameter {name:?} (read as {asked}) is not declared by this workload (it has: {present})"
    )]
    NotDeclared {
        name: String,
        asked: &'static str,
        present: String,
    },
    /// A workload read a parameter as another type than it holds (an integer of a
    /// `Choice`). `found` says the type only, never the text: it may be a secret.
    #[error("parameter {name:?} is read as {asked} but holds {found}")]
    WrongType {
        name: String,
        asked: &'static str,
        found: String,
    },
}

impl ParamError {
    /// True for the errors of a workload's own code reading its parameters (an
    /// undeclared name, a wrong type), as opposed to a value the user gave.
    pub fn is_programming_error(&self) -> bool {
        matches!(
            self,
            ParamError::NotDeclared { .. } | ParamError::WrongType { .. }
        )
    }
}

/// Something the machine lacks, said with the reason and how to get it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct Unavailable {
    pub reason: String,
    /// How to enable it, when perflab knows.
    pub hint: Option<String>,
}

impl Unavailable {
    pub fn new(reason: impl Into<String>) -> Self {
        Self {
            reason: reason.into(),
            hint: None,
        }
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

/// A workload measurement that failed.
#[derive(Debug, thiserror::Error)]
pub enum WorkloadError {
    #[error(transparent)]
    Param(#[from] ParamError),
    #[error("unavailable: {0}")]
    Unavailable(#[from] Unavailable),
    #[error("stopped by signal before the measurement finished")]
    Interrupted,
    #[error("{0}")]
    Failed(String),
}

/// A monitor that could not take its snapshot.
#[derive(Debug, thiserror::Error)]
pub enum MonitorError {
    /// The source does not exist on this machine; reported once and skipped.
    #[error("{0}")]
    Unavailable(#[from] Unavailable),
    #[error("{0}")]
    Failed(String),
}
