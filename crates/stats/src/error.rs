//! Errors of the statistics crate.

/// Why a sample, a configuration or a bucket specification was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StatsError {
    #[error("a sample needs at least one value, got none")]
    Empty,
    #[error("sample value #{index} is {value}, but every value must be a finite number")]
    NotFinite { index: usize, value: f64 },
    #[error("invalid statistics setting {name}={value}: {reason}")]
    Config {
        name: &'static str,
        value: f64,
        reason: &'static str,
    },
    #[error("bucket edges {text:?}: {reason} (write strictly increasing positive numbers, e.g. \"1,2,5,10\")")]
    BadEdges { text: String, reason: String },
}
