use perflab_core::ParamError;

/// Errors of experiment preparation and running.
///
/// `Input` errors are the user's to fix (exit code 2, nothing was changed); the others
/// happened while running.
#[derive(Debug, thiserror::Error)]
pub enum LabError {
    #[error("{0}")]
    Input(String),
    #[error(transparent)]
    Param(#[from] ParamError),
    #[error(transparent)]
    SpecFile(#[from] perflab_core::SpecFileError),
    #[error(transparent)]
    Sys(#[from] perflab_sys::SysError),
    #[error(transparent)]
    Store(#[from] perflab_store::StoreError),
    #[error(transparent)]
    Knob(#[from] perflab_knobs::KnobError),
    #[error("{0}")]
    Runtime(String),
}

impl LabError {
    /// Whether the user gave something perflab cannot accept (exit code 2). A knob refused
    /// because another perflab holds (or left changed) what it changes counts too: nothing
    /// was changed, and the person must let that one finish first.
    pub fn is_input(&self) -> bool {
        match self {
            LabError::Input(_) | LabError::SpecFile(_) => true,
            // A workload reading a parameter it does not declare is its own bug.
            LabError::Param(p) => !p.is_programming_error(),
            LabError::Knob(k) => k.is_busy(),
            _ => false,
        }
    }
}

pub type Result<T, E = LabError> = std::result::Result<T, E>;
