//! Errors of the driver: a library that does not load, and a call that failed, with the
//! driver's own name and text for the code.

/// The driver library could not be used at all: absent, or not a CUDA driver.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LoadError {
    /// `dlopen` failed; `dlerror`'s text says why (usually "No such file").
    #[error("no CUDA driver: cannot load {library}: {reason}")]
    Absent { library: String, reason: String },
    #[error("{library} is not a usable CUDA driver: {reason}")]
    Unusable { library: String, reason: String },
    /// The driver loaded and initialised, and `cuInit` reported no GPU.
    #[error("no GPU: {0}")]
    NoDevice(String),
}

/// A driver call that returned an error code.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{call} failed: {name} ({code}): {text}")]
pub struct CudaError {
    /// The entry point, as exported (`cuMemcpyHtoDAsync_v2`).
    pub call: &'static str,
    pub code: i32,
    /// `cuGetErrorName`: `CUDA_ERROR_OUT_OF_MEMORY`.
    pub name: String,
    /// `cuGetErrorString`: "out of memory".
    pub text: String,
}
