//! `counters` and `counters-cpu`: perf_event_open counts around a measurement, the way
//! `perf stat` takes them.
//!
//! Scope:
//! - `counters` (per process): each counter is opened on the calling thread, which is the
//!   runner thread that goes on to call `Workload::run`, with `inherit`, before the
//!   workload starts anything. Every thread and process the workload creates afterwards
//!   (an `exec`ed tool included) is counted, and so is the runner thread itself between
//!   `start` and `finish`: the workload's own setup and teardown on that thread and the
//!   start/finish work of the monitors started after this one or finished before it
//!   (small: reads of a few /proc files). Threads that existed before `start` (a pool
//!   kept across measurements) are not counted.
//! - `counters-cpu` (per CPU): everything that runs on each CPU of the measurement,
//!   system-wide on those CPUs (needs root, CAP_PERFMON or perf_event_paranoid <= 0).
//!   Rows per CPU and a total over those CPUs (with no CPUs of its own the measurement
//!   is counted on every online CPU and gets the total only). The clock is `cpu-clock`,
//!   as `perf stat -a` uses, since task-clock is a per-task notion.
//!
//! Each event has its own descriptor (no group), so when the PMU has fewer counters than
//! hardware events the kernel multiplexes them: counts are scaled by enabled/running and
//! `{event}:running_pct` says how much of the time the event actually counted.
//!
//! Kernel mode is counted when allowed. When perf_event_paranoid refuses it (an
//! unprivileged user at 2), the monitor falls back to user space only, says so in
//! [`CountersMonitor::user_only_reason`] and in every row's label, and drops
//! context-switches and cpu-migrations, which only ever happen in kernel mode and would
//! read a false 0.
//!
//! An event the machine cannot count (no PMU in a VM: ENOENT/EOPNOTSUPP/ENODEV) has no
//! row at all, never a 0; [`CountersMonitor::unsupported`] lists it with the reason, and
//! it is not tried again. `start` fails with `Unavailable` only when no event opens.

mod events;
mod perf;
mod rows;
mod scale;

use perflab_core::note::Note;
use perflab_core::{Descriptor, KeyMatch, Need, Needs, NoCpu, ReportHints, RowHints, Wording};
use perflab_core::{MeasureCtx, Monitor, MonitorError, TelemetryRow, ThreadEvent, Unavailable};
use perflab_sys::{SysRoot, Topology};

use crate::counter::not_started;
use events::{Event, Kind, CPU_CLOCK, EVENTS, TASK_CLOCK};
use perf::{EventFd, Modes, Target};

pub use rows::per_byte;
use rows::{CPU_NAME, NAME};
pub use scale::{Reading, Scaled};

/// Wording shared by both scopes: a counter is called by its perf event name.
const COUNTER_WORDING: &[Wording] = &[Wording::new(KeyMatch::Any, "{key}")];
/// A counter's multiplex share is perf's, not the machine's.
const COUNTER_BOOKKEEPING: &[KeyMatch] = &[KeyMatch::Suffix(":running_pct")];

pub static DESCRIPTOR: Descriptor = Descriptor {
    kind: perflab_core::Kind::Monitor,
    name: NAME,
    help: "perf counters of the measurement's process (cycles, instructions, cache and \
           branch misses, task-clock), with derived ipc and miss rates",
    params: &[],
    // Without a PMU only the software events (task-clock) are counted.
    needs: Needs {
        all: &[Need::PerfSoftware],
        some: &[Need::PerfHardware],
    },
    report: ReportHints::Rows(RowHints {
        wording: COUNTER_WORDING,
        // Per-process counters have no CPU by nature.
        no_cpu: NoCpu::Unattached,
        bookkeeping: COUNTER_BOOKKEEPING,
        counter_table: true,
        ..RowHints::PLAIN
    }),
};

pub static CPU_DESCRIPTOR: Descriptor = Descriptor {
    kind: perflab_core::Kind::Monitor,
    name: CPU_NAME,
    help: "perf counters of the measurement's CPUs (every task on them) and their total; \
           needs privileges",
    params: &[],
    needs: Needs {
        all: &[Need::Privileges, Need::PerfSoftware],
        some: &[Need::PerfHardware],
    },
    report: ReportHints::Rows(RowHints {
        wording: COUNTER_WORDING,
        bookkeeping: COUNTER_BOOKKEEPING,
        counter_table: true,
        ..RowHints::PLAIN
    }),
};

/// Where the counters count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// The runner thread and everything it starts (inherit).
    Process,
    /// Everything on each CPU of the measurement.
    Cpus,
}

#[derive(Debug)]
struct OpenEvent {
    event: &'static Event,
    fds: Vec<(Option<u32>, EventFd)>,
}

/// Why one event did not open.
struct Refusal {
    reason: String,
    /// Will fail the same way at every start (no such event, not allowed).
    permanent: bool,
}

#[derive(Debug)]
pub struct CountersMonitor {
    scope: Scope,
    /// Decided by the first open that succeeds or is refused for privileges.
    modes: Option<Modes>,
    user_only_reason: Option<String>,
    unsupported: Vec<(String, String)>,
    /// Events that failed permanently: not tried again.
    dead: Vec<&'static str>,
    open: Option<Vec<OpenEvent>>,
}

impl CountersMonitor {
    fn new(scope: Scope) -> Self {
        Self {
            scope,
            modes: None,
            user_only_reason: None,
            unsupported: Vec::new(),
            dead: Vec::new(),
            open: None,
        }
    }

    /// `counters`: the runner thread and every thread and process it starts.
    pub fn per_process() -> Self {
        Self::new(Scope::Process)
    }

    /// `counters-cpu`: each CPU of the measurement, system-wide.
    pub fn per_cpu() -> Self {
        Self::new(Scope::Cpus)
    }

    /// Counts user space only even where kernel mode is allowed (perf's `:u`).
    pub fn user_only(mut self) -> Self {
        self.modes = Some(Modes::UserOnly);
        self.user_only_reason = Some("user space only, as asked".into());
        self
    }

    pub fn scope(&self) -> Scope {
        self.scope
    }

    /// Events that could not be counted, with the reason, each once; they have no rows.
    pub fn unsupported(&self) -> &[(String, String)] {
        &self.unsupported
    }

    /// Why kernel mode is excluded from the counts; `None` when it is counted.
    pub fn user_only_reason(&self) -> Option<&str> {
        self.user_only_reason.as_deref()
    }

    fn source(&self) -> &'static str {
        match self.scope {
            Scope::Process => NAME,
            Scope::Cpus => CPU_NAME,
        }
    }

    fn note_unsupported(&mut self, event: &str, reason: String) {
        match self.unsupported.iter_mut().find(|(e, _)| e == event) {
            Some(entry) => entry.1 = reason,
            None => self.unsupported.push((event.to_string(), reason)),
        }
    }

    /// Opens `event` on every target, or on none.
    fn open_event(
        &mut self,
        event: &'static Event,
        targets: &[(Option<u32>, Target)],
        sys: &SysRoot,
    ) -> Result<OpenEvent, Refusal> {
        if event.kernel_only && self.modes == Some(Modes::UserOnly) {
            return Err(Refusal {
                reason: "happens only in kernel mode, which is not counted here; a user-only \
                         count would be a false 0"
                    .into(),
                permanent: true,
            });
        }
        let mut fds = Vec::with_capacity(targets.len());
        for &(cpu, target) in targets {
            let modes = self.modes.unwrap_or(Modes::UserAndKernel);
            match perf::open(event.attr, target, modes) {
                Ok(fd) => {
                    self.modes = Some(modes);
                    fds.push((cpu, fd));
                }
                Err(e) if is_denied(e) && self.modes.is_none() && self.scope == Scope::Process => {
                    self.modes = Some(Modes::UserOnly);
                    self.user_only_reason = Some(format!(
                        "kernel mode not counted: {} refuses it to this user (root, \
                         CAP_PERFMON or perf_event_paranoid <= 1 counts it)",
                        paranoid(sys)
                    ));
                    return self.open_event(event, targets, sys);
                }
                Err(e) => return Err(refusal(event, e, self.scope, sys)),
            }
        }
        Ok(OpenEvent { event, fds })
    }
}

fn is_denied(errno: i32) -> bool {
    errno == libc::EACCES || errno == libc::EPERM
}

/// perf_event_paranoid as `perflab doctor`'s perf lines say it (the same probe).
fn paranoid(sys: &SysRoot) -> String {
    perflab_sys::probe::perf_events::paranoid_text(sys)
}

fn refusal(event: &Event, errno: i32, scope: Scope, sys: &SysRoot) -> Refusal {
    let err = std::io::Error::from_raw_os_error(errno);
    let absent = [libc::ENOENT, libc::EOPNOTSUPP, libc::ENODEV, libc::EINVAL].contains(&errno);
    let reason = if absent && event.kind == Kind::Hardware {
        format!("{err}: no PMU, or the PMU lacks this event (a VM without a virtual PMU?)")
    } else if is_denied(errno) && scope == Scope::Cpus {
        format!(
            "{err}: counting a whole CPU needs root, CAP_PERFMON or perf_event_paranoid <= 0 \
             ({})",
            paranoid(sys)
        )
    } else if is_denied(errno) {
        format!("{err} ({})", paranoid(sys))
    } else {
        err.to_string()
    };
    // A CPU-wide software event refused with ENODEV names an offline CPU, which a later
    // measurement on other CPUs does not have: retried then.
    let absent_everywhere = absent && (event.kind == Kind::Hardware || scope == Scope::Process);
    Refusal {
        reason,
        permanent: absent_everywhere || is_denied(errno),
    }
}

/// The CPUs to count on: the measurement's, or every online CPU when it has none.
fn cpu_targets(ctx: &MeasureCtx) -> Result<Vec<(Option<u32>, Target)>, MonitorError> {
    let cpus = if ctx.cpus.is_empty() {
        Topology::read(&ctx.sys)
            .map_err(|e| MonitorError::Failed(format!("{CPU_NAME}: online CPUs: {e}")))?
            .online
    } else {
        ctx.cpus.clone()
    };
    Ok(cpus.iter().map(|&c| (Some(c), Target::Cpu(c))).collect())
}

impl Monitor for CountersMonitor {
    fn name(&self) -> &'static str {
        self.source()
    }

    /// Per-task counters are switched in and out at every context switch of the counted
    /// tasks: a same-CPU pipe ping-pong ran at half its rate with them (88-97k against
    /// 188-193k round trips/s here). Per-CPU counters cost less but not nothing (a
    /// software event fires at every switch), so both run in telemetry repetitions.
    fn disturbs(&self) -> bool {
        true
    }

    fn notes(&self) -> Vec<String> {
        // One line per reason: a VM without a PMU refuses all eight hardware events alike.
        let mut by_reason: Vec<(&str, Vec<&str>)> = Vec::new();
        for (event, why) in self.unsupported() {
            match by_reason.iter_mut().find(|(w, _)| w == why) {
                Some((_, events)) => events.push(event),
                None => by_reason.push((why, vec![event])),
            }
        }
        // Worded by core's note vocabulary, which reads them back for the report.
        let events = |e: Vec<&str>| e.into_iter().map(str::to_string).collect();
        let mut out: Vec<String> = by_reason
            .into_iter()
            .map(|(why, e)| Note::unsupported(self.source(), events(e), why).text())
            .collect();
        if let Some(why) = self.user_only_reason() {
            out.push(Note::user_only(self.source(), why).text());
        }
        out
    }

    fn start(&mut self, ctx: &MeasureCtx) -> Result<(), MonitorError> {
        // Closing the previous start's descriptors first keeps a failed restart from
        // reporting them at the next finish.
        self.open = None;
        let (targets, clock) = match self.scope {
            Scope::Process => (vec![(None, Target::ThisThreadAndChildren)], &TASK_CLOCK),
            Scope::Cpus => (cpu_targets(ctx)?, &CPU_CLOCK),
        };
        let mut opened = Vec::new();
        let mut refused = Vec::new();
        for event in std::iter::once(clock).chain(EVENTS) {
            if self.dead.contains(&event.name) {
                continue;
            }
            match self.open_event(event, &targets, &ctx.sys) {
                Ok(o) => opened.push(o),
                Err(r) => {
                    if r.permanent {
                        self.dead.push(event.name);
                    }
                    refused.push(format!("{}: {}", event.name, r.reason));
                    self.note_unsupported(event.name, r.reason);
                }
            }
        }
        if opened.is_empty() {
            let hint = match self.scope {
                Scope::Process => {
                    "use a kernel with CONFIG_PERF_EVENTS=y; in a container, \
                                   allow perf_event_open in seccomp"
                }
                Scope::Cpus => "run as root, or `sysctl kernel.perf_event_paranoid=0`",
            };
            let reason = if refused.is_empty() {
                "no perf event opened on an earlier measurement".to_string()
            } else {
                format!("no perf event opens: {}", refused.join("; "))
            };
            return Err(Unavailable::new(reason).with_hint(hint).into());
        }
        for o in &opened {
            for (_, fd) in &o.fds {
                fd.enable().map_err(|e| {
                    MonitorError::Failed(format!("{}: enable {}: {e}", self.source(), o.event.name))
                })?;
            }
        }
        if self.scope == Scope::Process {
            // Workload threads that begin after this count the same events on themselves,
            // so their records say which thread did what (the rows stay the process sum):
            // the software events from the kernel's accounting of each thread, at no cost
            // to a context switch (perflab_core::thread_accounting), the others as events.
            let flags = perf::mode_flags(self.modes.unwrap_or(Modes::UserAndKernel));
            ctx.threads.count_per_thread(
                opened
                    .iter()
                    .map(|o| ThreadEvent {
                        name: o.event.name,
                        type_: o.event.attr.0,
                        config: o.event.attr.1,
                        flags,
                    })
                    .collect(),
            );
        }
        self.open = Some(opened);
        Ok(())
    }

    fn finish(&mut self, ctx: &MeasureCtx) -> Result<Vec<TelemetryRow>, MonitorError> {
        let source = self.source();
        let opened = self.open.take().ok_or_else(|| not_started(source))?;
        // Stop all first, then read: the counts cover the same window.
        for o in &opened {
            for (_, fd) in &o.fds {
                fd.disable().map_err(|e| {
                    MonitorError::Failed(format!("{source}: disable {}: {e}", o.event.name))
                })?;
            }
        }
        let mut readings = Vec::with_capacity(opened.len());
        for o in &opened {
            let mut parts = Vec::with_capacity(o.fds.len());
            for (cpu, fd) in &o.fds {
                let r = fd.read().map_err(|e| {
                    MonitorError::Failed(format!("{source}: read {}: {e}", o.event.name))
                })?;
                parts.push((*cpu, r));
            }
            readings.push((o.event, parts));
        }
        let measured: &[u32] = match self.scope {
            Scope::Process => &[],
            Scope::Cpus => &ctx.cpus,
        };
        Ok(rows::rows(
            source,
            measured,
            self.modes == Some(Modes::UserOnly),
            &readings,
        ))
    }
}
