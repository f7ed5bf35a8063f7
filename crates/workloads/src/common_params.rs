//! Parameters several workloads declare alike.

use perflab_core::{ParamKind, ParamSpec};

/// The timed window of a workload that runs for a duration (ctxsw, netrr).
pub(crate) const TIMED_WINDOW: ParamSpec = ParamSpec {
    name: "duration",
    role: perflab_core::ParamRole::Plain,
    help: "length of the timed window",
    kind: ParamKind::Duration {
        min_s: 0.05,
        max_s: 86_400.0,
    },
    default: Some("10s"),
};
