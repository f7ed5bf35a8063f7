//! Durations and shares as a person reads them in a reason: core's, which words the
//! reasons ([`perflab_core::note`]), so a figure reads the same in every crate.

pub use perflab_core::note::{duration_text, percent};
