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
