//! The errors of a cross-check, and which of them are the person's input to fix (exit
//! code 2 in the binary).

use perflab_lab::LabError;
use perflab_store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Something the person gave that the check cannot accept.
    #[error("{0}")]
    Input(String),
    /// The check could not finish (a failed measurement, a child that did not run).
    #[error("{0}")]
    Failed(String),
    #[error(transparent)]
    Lab(#[from] LabError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Report(#[from] perflab_report::ReportError),
    #[error(transparent)]
    Sys(#[from] perflab_sys::SysError),
    #[error(transparent)]
    Knob(#[from] perflab_knobs::KnobError),
    #[error(transparent)]
    Ctxsw(#[from] crate::ctxsw::CrossError),
    #[error(transparent)]
    Mem(#[from] crate::mem::MemCrossError),
    #[error(transparent)]
    Net(#[from] crate::net::NetCrossError),
    #[error(transparent)]
    LabSide(#[from] crate::lab_side::LabSideError),
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl Error {
    /// Whether the person gave something the check cannot accept (exit code 2); nothing
    /// was measured then.
    pub fn is_input(&self) -> bool {
        match self {
            Error::Input(_) => true,
            Error::Lab(e) => e.is_input(),
            Error::Store(e) => e.is_input(),
            Error::LabSide(crate::lab_side::LabSideError::Lab(e)) => e.is_input(),
            _ => false,
        }
    }
}

pub(crate) fn input(msg: impl Into<String>) -> Error {
    Error::Input(msg.into())
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
