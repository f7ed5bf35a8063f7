//! The [`ParamRole`] a [`super::ParamSpec`] declares, alone in its module: the declaration
//! needs only the names, while reading a role (its unit, the roles of a run) needs the
//! parameters' kinds and values, in [`crate::param_role`].

use serde::{Deserialize, Serialize};

/// The role of one parameter. Kept small: a role exists only where some view treats the
/// parameter differently from any other.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ParamRole {
    /// Nothing special: named `name=value`, grouped and ordered like any other.
    #[default]
    Plain,
    /// The first CPU of a CPU pair (the anchor): with [`ParamRole::CpuB`], rows are named
    /// `a-b`, drill-downs and per-CPU telemetry follow the pair.
    CpuA,
    /// The second CPU of the pair (the partner).
    CpuB,
    /// A CPU, or a CPU list (`0-3,8`), the point runs on (-1 or empty: not pinned): its
    /// CPUs' telemetry is what the point's changes are looked for in; where one such
    /// parameter holds one CPU, that CPU's interrupts are the point's.
    Cpu,
    /// A size in bytes that a scan runs along: comparisons along it become scan tables
    /// (one row per size, in KiB) and figures plot against it. Printed as [`Bytes`].
    ///
    /// [`Bytes`]: ParamRole::Bytes
    SizeAxis,
    /// A size in bytes, printed in binary units (`64 KiB`, `2 MiB`).
    Bytes,
    /// A duration in seconds, printed with its unit (`50 µs`).
    Seconds,
}
