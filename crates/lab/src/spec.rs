//! Experiment specs as people write them (TOML files, presets, CLI flags): the types are
//! the shared vocabulary in `perflab_core::spec`; this crate expands them against a
//! machine (`crate::expand`).

pub use perflab_core::spec::*;
