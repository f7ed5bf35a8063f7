//! Shared types of perflab: units, metrics, parameters, telemetry rows, thread records,
//! the [`SysRoot`] every kernel access goes through (re-exported by `perflab-sys`),
//! the plug-in [`Descriptor`] and the [`Workload`] and [`Monitor`] traits. Knobs live in `perflab-knobs` with the
//! journal they need; registries live beside their plug-ins.

pub mod adaptive_target;
pub mod catalog;
pub mod censored;
pub mod clocks;
pub mod cpu_path;
pub mod descriptor;
pub mod error;
pub mod fingerprint;
pub mod ineffective;
pub mod intent;
pub mod knob_settings;
pub mod limits;
pub mod metric_names;
pub mod net_facts;
pub mod note;
pub mod output;
pub mod parallel_metrics;
pub mod param_role;
pub mod params;
pub mod perf_event;
pub mod plausible;
pub mod quantity_text;
pub mod record;
pub mod registry;
pub mod run_spec;
pub mod sched;
pub mod secret;
pub mod secret_key;
pub mod serde_base64;
pub mod serde_nan;
pub mod span_outline;
pub mod spec;
pub mod sys_error;
pub mod sysroot;
pub mod telemetry;
pub mod thread_accounting;
pub mod threads;
pub mod timing_probe;
pub mod units;
pub mod workload;

pub use censored::Quantile;
pub use cpu_path::{CpuPath, Stay};
pub use descriptor::{
    Descriptor, KeyMatch, Kind, LatencyTableHints, Need, Needs, NoCpu, PerCpuFigure, PerCpuLayout,
    PerCpuTable, ReportHints, RowHints, Wording, WorkloadHints,
};
pub use error::{MonitorError, ParamError, Unavailable, WorkloadError};
pub use fingerprint::{FieldDiff, Fingerprint};
pub use ineffective::IneffectiveCount;
pub use intent::{Intent, IrqSet, VoidComparison};
pub use knob_settings::KnobSettings;
pub use net_facts::{GuestPeer, NetEnd, NetPathFacts, NetServer};
pub use output::{AboveRange, HistogramData, Metric, ThreadCount, ThreadRecord, WorkloadOutput};
pub use parallel_metrics::ParallelMetrics;
pub use param_role::{ParamRole, ParamRoles};
pub use params::{
    format_bytes, format_duration, format_size, parse_duration, parse_size, resolve, ParamKind,
    ParamSpec, ParamValue, Params, SecretValue,
};
pub use registry::{Registered, Registry};
pub use run_spec::{Grid, Imported, RunSpec, SkippedPoint, ToolSummary};
pub use spec::{ExperimentSpec, SpecFileError};
pub use sys_error::{ParseError, SysError};
pub use sysroot::SysRoot;
pub use telemetry::TelemetryRow;
pub use threads::{
    current_cpu, current_tid, monotonic_ns, thread_cpu_ns, ThreadEvent, ThreadProbe, ThreadTracker,
};
pub use timing_probe::{ProbeReading, TimingProbe};
pub use units::{Better, Unit};
pub use workload::{MeasureCtx, Monitor, Workload, WorkloadInfo};

/// perflab's version, recorded in every run's fingerprint.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
