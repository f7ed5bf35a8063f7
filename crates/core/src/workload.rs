//! The Workload and Monitor plug-in contracts.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::descriptor::Descriptor;
use crate::error::{MonitorError, ParamError, WorkloadError};
use crate::output::WorkloadOutput;
use crate::params::Params;
use crate::sysroot::SysRoot;
use crate::telemetry::TelemetryRow;
use crate::threads::ThreadTracker;

/// A workload described as data: the plug-in [`Descriptor`] of kind `Workload`, whose
/// report hints carry the metric comparisons use by default.
pub type WorkloadInfo = Descriptor;

/// What a measurement runs with: the machine's root, the stop flag set by signals, the
/// thread records, the CPUs the workload uses (monitors report those per CPU), and the
/// facts the variant's applied knobs published.
#[derive(Clone, Debug)]
pub struct MeasureCtx {
    pub sys: SysRoot,
    pub stop: Arc<AtomicBool>,
    pub threads: Arc<ThreadTracker>,
    pub cpus: Vec<u32>,
    /// What the applied knobs built for this variant and the workload must use, such as a
    /// network path's namespaces and addresses (`net.server_ns`, `net.server_addr`). Knobs
    /// publish them because a workload cannot know what a knob built, and names are not
    /// guessable (they carry the perflab pid).
    pub facts: BTreeMap<String, String>,
    /// The workload being measured (empty where none is known), for monitors that trace
    /// what a workload does (the `trace` monitor picks its span set by it).
    pub workload: &'static str,
}

impl MeasureCtx {
    pub fn new(sys: SysRoot, cpus: Vec<u32>) -> Self {
        Self {
            sys,
            stop: Arc::new(AtomicBool::new(false)),
            threads: Arc::new(ThreadTracker::new()),
            cpus,
            facts: BTreeMap::new(),
            workload: "",
        }
    }

    /// The same context for `workload`.
    pub fn with_workload(mut self, workload: &'static str) -> Self {
        self.workload = workload;
        self
    }

    /// A fact published by an applied knob, if any.
    pub fn fact(&self, key: &str) -> Option<&str> {
        self.facts.get(key).map(String::as_str)
    }

    /// True once the user asked perflab to stop (SIGINT/SIGTERM/SIGHUP).
    pub fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}

/// A benchmark that produces samples.
pub trait Workload: Send + Sync {
    fn info(&self) -> &'static WorkloadInfo;

    /// The CPUs this measurement will run on (empty: the scheduler decides). The runner
    /// checks they are online before anything is changed on the system. `Err` only when
    /// the workload's code reads a parameter it does not declare (or as another type).
    fn cpus(&self, params: &Params) -> Result<Vec<u32>, ParamError>;

    /// Peak memory a measurement holds, in bytes (buffers, not code). The runner skips
    /// points that would not fit in the machine's available memory, saying so, and sizes
    /// huge page pools from it. `Err` as for [`Workload::cpus`].
    fn memory_bytes(&self, _params: &Params) -> Result<u64, ParamError> {
        Ok(0)
    }

    /// The hugetlb pool (its page size in kB) a point maps its `memory_bytes` from, when
    /// it does. The runner refuses such a point before anything runs when the pool cannot
    /// hold them and the variant sets no `hugepages` knob of that size to fill it: every
    /// measurement would fail on its mmap. `Err` as for [`Workload::cpus`].
    fn hugetlb_page_kb(&self, _params: &Params) -> Result<Option<u64>, ParamError> {
        Ok(None)
    }

    /// Bytes one process of a measurement locks in memory (mlock'd, pinned buffers). The
    /// runner leaves out points that need more than this process may lock
    /// (RLIMIT_MEMLOCK), saying so and how to raise it: each would fail on its mlock, or
    /// kill a helper process. `Err` as for [`Workload::cpus`].
    fn locked_bytes(&self, _params: &Params) -> Result<u64, ParamError> {
        Ok(0)
    }

    /// Checks a point's parameters together, before anything runs (a grid point whose
    /// counts do not divide a total, a mode one engine does not support). Single
    /// parameters are checked by their `ParamSpec`; this is for combinations.
    fn validate(&self, _params: &Params) -> Result<(), String> {
        Ok(())
    }

    /// Whether this machine can run the workload at all (the device or kernel module it
    /// drives is there), checked before a run is created: a workload that would fail every
    /// measurement for the machine's sake is refused with the reason, never stored as a
    /// run of nothing but failures.
    fn available(&self, _sys: &SysRoot) -> Result<(), crate::error::Unavailable> {
        Ok(())
    }

    /// What parameter `param` is meant to move when two variants set it differently
    /// (xfer's `backing`: the share of its buffers on huge pages), so that a comparison
    /// in which it moved nothing reads `void` ([`crate::intent`]). `None`: nothing the
    /// run records can tell.
    fn intent(&self, _param: &str) -> Option<crate::intent::Intent> {
        None
    }

    /// Runs one measurement. Long runs poll `ctx.stopping()` and end early with
    /// `WorkloadError::Interrupted`.
    fn run(&self, params: &Params, ctx: &MeasureCtx) -> Result<WorkloadOutput, WorkloadError>;
}

/// Telemetry around a measurement: `start` snapshots, `finish` returns deltas.
pub trait Monitor: Send {
    fn name(&self) -> &'static str;

    /// Takes the before-snapshot. `MonitorError::Unavailable` means the machine lacks the
    /// source: the runner reports it once and drops the monitor for the rest of the run.
    fn start(&mut self, ctx: &MeasureCtx) -> Result<(), MonitorError>;

    /// Returns deltas since `start`: one row per key per involved CPU, plus totals
    /// (`cpu: None`) over all CPUs.
    fn finish(&mut self, ctx: &MeasureCtx) -> Result<Vec<TelemetryRow>, MonitorError>;

    /// Whether this machine has the monitor's source, asked once before a run is planned
    /// so that the run can say why a section of its report will be empty. The default
    /// takes a trial snapshot and ends it; a monitor whose `start` makes kernel objects
    /// (an ftrace instance, BPF programs) answers without them.
    fn available(&mut self, ctx: &MeasureCtx) -> Result<(), crate::error::Unavailable> {
        match self.start(ctx) {
            Ok(()) => {
                let _ = self.finish(ctx);
                Ok(())
            }
            Err(MonitorError::Unavailable(u)) => Err(u),
            Err(MonitorError::Failed(_)) => Ok(()),
        }
    }

    /// True when the monitor does work *while* the workload runs that can change what it
    /// measures (per-task perf counters are switched at every context switch; tracing
    /// writes every event). Such a monitor never runs in a headline repetition: the runner
    /// plans telemetry repetitions for it, whose figures are never used as results.
    /// Monitors that only read counters at `start` and `finish` (outside the workload's
    /// timed window) return false; `perflab crosscheck monitors` checks that they do not
    /// move the figures.
    fn disturbs(&self) -> bool {
        false
    }

    /// What a person should know about the rows (events this machine cannot count, a
    /// fallback the monitor took). The runner reports each note once and stores it with
    /// the measurement it first appeared in.
    fn notes(&self) -> Vec<String> {
        Vec::new()
    }
}
