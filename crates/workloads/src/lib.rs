//! perflab's built-in workloads: `ctxsw` (the CPU-pair context-switch ping-pong of the
//! idle/IPI study), `xfer` (transfer bandwidth by size, page backing and pinning) and
//! `exec` (any benchmark command, its number taken from its output), `null` (a
//! deterministic fake for tests), listed in one registry. The cross-checks against peer
//! tools live in `perflab-crosscheck`, above this crate.

pub mod affinity;
mod common_params;
pub mod ctxsw;
pub mod dmatest;
pub mod exec;
pub mod gpuxfer;
pub mod netrr;
pub mod null;
pub mod parallel;
pub mod xfer;

use perflab_core::{Registry, Workload};

pub use ctxsw::{Ctxsw, Mechanism};
pub use dmatest::Dmatest;
pub use exec::Exec;
pub use gpuxfer::GpuXfer;
pub use netrr::Netrr;
pub use null::NullWorkload;
pub use xfer::Xfer;

/// The registry: one line per workload, in the order `perflab list` shows them. Each
/// workload's descriptor (`info()`) is declared in its own file.
static REGISTRY: Registry<&'static dyn Workload> =
    Registry::new(&[&Ctxsw, &Xfer, &GpuXfer, &Exec, &Netrr, &Dmatest, &NULL]);
// The fake keeps a call counter (interior mutability), so it is a static of its own.
static NULL: NullWorkload = NullWorkload::new();

/// Every built-in workload, in the order `perflab list` shows them.
pub fn registry() -> &'static [&'static dyn Workload] {
    REGISTRY.entries()
}

/// Makes the built-in workloads' descriptors known to the crates that present runs
/// without linking the workloads (the report, through [`perflab_core::catalog`]).
pub fn install_catalog() {
    perflab_core::catalog::install_workloads(REGISTRY.descriptors().collect());
}

/// The names of the built-in workloads.
pub fn names() -> Vec<&'static str> {
    REGISTRY.names()
}

/// A workload asked for by a name perflab does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no workload named {name:?} (known: {known})")]
pub struct UnknownWorkload {
    pub name: String,
    pub known: String,
}

/// The built-in workload of this name.
pub fn by_name(name: &str) -> Option<&'static dyn Workload> {
    REGISTRY.get(name).copied()
}

/// Like [`by_name`], with an error that lists the known names.
pub fn lookup(name: &str) -> Result<&'static dyn Workload, UnknownWorkload> {
    by_name(name).ok_or_else(|| UnknownWorkload {
        name: name.to_string(),
        known: names().join(", "),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_lists_each_workload_once_by_name() {
        assert_eq!(
            names(),
            vec!["ctxsw", "xfer", "gpuxfer", "exec", "netrr", "dmatest", "null"]
        );
        assert_eq!(by_name("ctxsw").map(|w| w.info().name), Some("ctxsw"));
        let e = lookup("ctxswitch")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            e.contains("ctxswitch")
                && e.contains("ctxsw, xfer, gpuxfer, exec, netrr, dmatest, null"),
            "{e}"
        );
    }

    #[test]
    fn declared_defaults_parse_and_primary_metric_is_named() {
        for w in registry() {
            let info = w.info();
            // Required parameters (exec's cmd) get a value every kind accepts.
            let given = info
                .params
                .iter()
                .filter(|s| s.default.is_none())
                .map(|s| (s.name.to_string(), "1".to_string()))
                .collect();
            let p = perflab_core::resolve(info.name, info.params, &given)
                .unwrap_or_else(|e| panic!("{}: {e}", info.name));
            assert_eq!(p.0.len(), info.params.len());
            assert!(!info.help.is_empty() && !info.primary_metric().is_empty());
            assert_eq!(info.kind, perflab_core::Kind::Workload);
        }
    }
}
