//! Why a netrr measurement ended without a result. A stop request is a variant of its
//! own, so the workload reports an interruption, not a failure, without reading words.

/// A netrr measurement's error: stopped, or failed with a one-line reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum NetrrError {
    /// The stop flag was raised while the client ran.
    #[error("interrupted")]
    Interrupted,
    #[error("{0}")]
    Failed(String),
}

impl From<String> for NetrrError {
    fn from(why: String) -> Self {
        NetrrError::Failed(why)
    }
}
