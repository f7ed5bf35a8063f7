//! `xfer`: transfer bandwidth by buffer size, page backing and buffer state — the CPU
//! side of seed 002's host↔device scan and seed 003's memfill.
//!
//! Engines: `memcpy` (glibc memcpy between two buffers of this process), `pvm`
//! (process_vm_readv / process_vm_writev against a forked peer process: on every call the
//! kernel walks and pins the peer's pages, as a driver does for an unpinned DMA buffer),
//! and `fill` (glibc memset of one buffer). Buffers are mapped with the requested backing
//! (`4k`, `thp`, `2m`, `1g`), whole pages of it, and the backing obtained is checked in
//! smaps and reported as `huge_fraction`; a hugetlb mapping the pool cannot serve is an
//! error that names the pool, never a silent fall-back to 4 KiB pages.
//!
//! # Timed region
//!
//! Only transfers are timed (see [`timing`] for calibration, batching and the clock
//! reads). With `state=pinned` every buffer is mapped, written and mlock'd once before
//! timing, and reused. With `state=unpinned` the destination is a fresh mapping for every
//! transfer: mapped (mmap + madvise) before the first clock read and unmapped after the
//! second, so the timed region holds the transfer *including* the page faults on the new
//! destination (for pvm write, the faults the kernel takes on the peer's new pages while
//! pinning them), but not the mmap and munmap calls. [`engine`] tables which buffers
//! are kept and which are fresh.
//!
//! Before timing, one transfer is checked byte for byte against its source (memcpy, pvm
//! both directions), so a wrong engine can never report a bandwidth. Sources hold that
//! position-dependent pattern while timed, or zeros with `data=zero` (what perf bench
//! mem copies; zeros copy measurably faster on some machines, see crosscheck_mem).

pub mod backing;
pub mod buffer;
pub mod channels;
pub mod engine;
mod failure;
pub mod irq;
mod peer;
pub mod placement;
pub mod shape;
mod threaded;
pub mod timing;

use perflab_core::{
    Better, HistogramData, MeasureCtx, Metric, Needs, ParamError, ParamKind, ParamSpec, Params,
    SysRoot, Unit, Workload, WorkloadError, WorkloadInfo, WorkloadOutput,
};
use perflab_core::{Kind, Need, ReportHints, WorkloadHints};

pub use buffer::Backing;
use buffer::MapError;
pub use engine::{peak_bytes, Direction, Engine, Setup};
use engine::{Seen, Xfer as Buffers};
use failure::{failed, map_failure};
use timing::Timed;

/// The xfer workload.
#[derive(Debug, Default)]
pub struct Xfer;

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "engine",
        role: perflab_core::ParamRole::Plain,
        help: "memcpy (two buffers in this process), pvm (process_vm_readv/writev against a \
               second process) or fill (memset of one buffer)",
        kind: ParamKind::Choice(Engine::NAMES),
        default: Some("memcpy"),
    },
    ParamSpec {
        name: "direction",
        role: perflab_core::ParamRole::Plain,
        help: "pvm only: read (peer → here, like ve2vh) or write (here → peer, like vh2ve)",
        kind: ParamKind::Choice(Direction::NAMES),
        default: Some("read"),
    },
    ParamSpec {
        name: "size",
        role: perflab_core::ParamRole::SizeAxis,
        help: "bytes moved per transfer",
        kind: ParamKind::Size {
            min: 4 << 10,
            max: 64 << 30,
        },
        default: Some("1M"),
    },
    ParamSpec {
        name: "backing",
        role: perflab_core::ParamRole::Plain,
        help: "pages of every buffer: 4k, thp (MADV_HUGEPAGE), 2m or 1g (hugetlb pools)",
        kind: ParamKind::Choice(Backing::NAMES),
        default: Some("4k"),
    },
    ParamSpec {
        name: "state",
        role: perflab_core::ParamRole::Plain,
        help: "pinned (mlock'd, faulted in once, reused) or unpinned (a fresh destination \
               mapping per transfer: its page faults are timed)",
        kind: ParamKind::Choice(&["pinned", "unpinned"]),
        default: Some("pinned"),
    },
    ParamSpec {
        name: "data",
        role: perflab_core::ParamRole::Plain,
        help: "what the source holds while timed: pattern (position-dependent bytes) or \
               zero (as perf bench mem memcpy copies; zeros copy faster on some machines, \
               5-7% at 256M on the KVM guests here). Ignored by fill",
        kind: ParamKind::Choice(&["pattern", "zero"]),
        default: Some("pattern"),
    },
    ParamSpec {
        name: "duration",
        role: perflab_core::ParamRole::Plain,
        help: "minimum timed window; transfers repeat until it is reached",
        kind: ParamKind::Duration {
            min_s: 0.01,
            max_s: 86_400.0,
        },
        default: Some("1s"),
    },
    ParamSpec {
        name: "cpu",
        role: perflab_core::ParamRole::Cpu,
        help: "CPU the transferring thread is pinned to (-1: not pinned); single-thread \
               xfer only (the channel model uses placement)",
        kind: ParamKind::Int { min: -1, max: 4095 },
        default: Some("-1"),
    },
    ParamSpec {
        name: "irq",
        role: perflab_core::ParamRole::Plain,
        help: "none (the transfer raises no interrupt of its own: a CPU copy or fill is no \
               device) or timer (each transfer waits, untimed, for a periodic timerfd \
               expiration on its CPU: an hrtimer interrupt, LOC on x86; single-thread xfer \
               only)",
        kind: ParamKind::Choice(irq::Irq::NAMES),
        default: Some("none"),
    },
    ParamSpec {
        name: "irq_period",
        role: perflab_core::ParamRole::Plain,
        help: "irq=timer: the timer's period; transfers shorter than it are paced at one \
               interrupt each",
        kind: ParamKind::Duration {
            min_s: 0.000_01,
            max_s: 1.0,
        },
        default: Some("50us"),
    },
    ParamSpec {
        name: "channels",
        role: perflab_core::ParamRole::Plain,
        help: "channel model: channels, each a descriptor list behind one lock (0: not \
               given: derived from total_buffers and buffers_per_thread, else 1; all \
               channel counts 0 and placement=free: the single-thread xfer)",
        kind: ParamKind::Int { min: 0, max: 4096 },
        default: Some("0"),
    },
    ParamSpec {
        name: "threads_per_channel",
        role: perflab_core::ParamRole::Plain,
        help: "channel model: threads taking descriptors from each channel (0: 1)",
        kind: ParamKind::Int { min: 0, max: 4096 },
        default: Some("0"),
    },
    ParamSpec {
        name: "buffers_per_thread",
        role: perflab_core::ParamRole::Plain,
        help: "channel model: buffer sets of `size` each thread cycles through (0: not \
               given: total_buffers / (channels × threads_per_channel), else 1)",
        kind: ParamKind::Int {
            min: 0,
            max: 65_536,
        },
        default: Some("0"),
    },
    ParamSpec {
        name: "total_buffers",
        role: perflab_core::ParamRole::Plain,
        help: "channel model: channels × threads_per_channel × buffers_per_thread held \
               constant (seed 000: 192); with channels given, buffers_per_thread is \
               derived from it, with buffers_per_thread given, channels; a grid point \
               that does not divide it is an error (0: not used)",
        kind: ParamKind::Int {
            min: 0,
            max: 1 << 20,
        },
        default: Some("0"),
    },
    ParamSpec {
        name: "transfers_per_thread",
        role: perflab_core::ParamRole::Plain,
        help: "channel model: each thread makes this many transfers, like dmatest's \
               iterations, so stragglers show (0: all threads run until `duration`)",
        kind: ParamKind::Int {
            min: 0,
            max: i64::MAX,
        },
        default: Some("0"),
    },
    ParamSpec {
        name: "placement",
        role: perflab_core::ParamRole::Plain,
        help: "channel model threads: free (the scheduler decides), spread (pinned \
               round-robin over the allowed CPUs), isolated (pinned round-robin over the \
               kernel's isolated CPUs) or a CPU list such as 0,2-3 (round-robin; more \
               threads than CPUs share them)",
        kind: ParamKind::Text { max_len: 1024 },
        default: Some("free"),
    },
];

static INFO: WorkloadInfo = WorkloadInfo {
    kind: Kind::Workload,
    name: "xfer",
    help: "Transfer bandwidth of memcpy, process_vm_readv/writev (pvm) or memset (fill) by \
           buffer size, page backing (4k, thp, 2m, 1g) and buffer state (pinned, unpinned). \
           Reports bandwidth_mib_s (2^20 bytes/s over the timed transfers), bytes, \
           iterations, huge_fraction (share of the buffers found on huge pages) and the \
           iteration_ns histogram. With channels/threads_per_channel/buffers_per_thread \
           (the channel model of seed 000) many threads copy at once: bandwidth_mib_s is \
           then the aggregate over the threads' union window, with the parallelism \
           verdict (summed_mib_s, overlap, parallelism, sum_valid), per-thread records \
           and the lock_wait_ns histogram.",
    params: PARAMS,
    // Only the 2m and 1g page backings need the hugetlb pool.
    needs: Needs {
        all: &[],
        some: &[Need::HugePages, Need::LockedMemory],
    },
    report: ReportHints::Workload(WorkloadHints {
        primary_metric: "bandwidth_mib_s",
        result_title: None,
        latency_table: None,
        workers: perflab_core::note::Workers::Threads,
    }),
};

/// The parameters with every missing one at its default, so a caller that built Params
/// by hand (without `resolve`) cannot get CPU 0 or a zero size by omission.
fn complete(params: &Params) -> Params {
    let mut out = params.clone();
    for spec in PARAMS {
        if out.get(spec.name).is_none() {
            if let Some(v) = spec.default.and_then(|d| spec.parse(d).ok()) {
                out.0.insert(spec.name.to_string(), v);
            }
        }
    }
    out
}

/// The setup the parameters describe (missing ones at their defaults).
pub fn setup(params: &Params) -> Result<Setup, WorkloadError> {
    let params = &complete(params);
    let engine = params.str("engine")?;
    let engine = Engine::from_name(engine)
        .ok_or_else(|| failed(format!("xfer: unknown engine {engine:?}")))?;
    let direction = params.str("direction")?;
    let direction = Direction::from_name(direction)
        .ok_or_else(|| failed(format!("xfer: unknown direction {direction:?}")))?;
    let backing = params.str("backing")?;
    let backing = Backing::from_name(backing)
        .ok_or_else(|| failed(format!("xfer: unknown backing {backing:?}")))?;
    let pinned = match params.str("state")? {
        "pinned" => true,
        "unpinned" => false,
        other => return Err(failed(format!("xfer: unknown state {other:?}"))),
    };
    let zero_data = match params.str("data")? {
        "pattern" => false,
        "zero" => true,
        other => return Err(failed(format!("xfer: unknown data {other:?}"))),
    };
    let size = params.int("size")?;
    if size <= 0 {
        return Err(failed(format!("xfer: size {size} is not a buffer size")));
    }
    Ok(Setup {
        engine,
        direction,
        size: size as u64,
        backing,
        pinned,
        zero_data,
    })
}

impl Workload for Xfer {
    fn info(&self) -> &'static WorkloadInfo {
        &INFO
    }

    /// Two backings are meant to differ in the share of the buffers on huge pages.
    fn intent(&self, param: &str) -> Option<perflab_core::Intent> {
        (param == "backing").then_some(perflab_core::Intent::HugePages)
    }

    fn cpus(&self, params: &Params) -> Result<Vec<u32>, ParamError> {
        let params = &complete(params);
        // A shape the parameters do not make is reported by validate() and run().
        if let Ok(Some(shape)) = shape::shape(params)? {
            return plan_cpus(params, &shape);
        }
        Ok(u32::try_from(params.int("cpu")?).into_iter().collect())
    }

    fn hugetlb_page_kb(&self, params: &Params) -> Result<Option<u64>, ParamError> {
        Ok(match setup(params) {
            Ok(s) => s.backing.pool_kb(),
            Err(WorkloadError::Param(e)) => return Err(e),
            Err(_) => None,
        })
    }

    fn memory_bytes(&self, params: &Params) -> Result<u64, ParamError> {
        // A setup or shape the parameters do not make is reported by validate() and run().
        let per_set = match setup(params) {
            Ok(s) => peak_bytes(&s),
            Err(WorkloadError::Param(e)) => return Err(e),
            Err(_) => 0,
        };
        Ok(match shape::shape(&complete(params))? {
            Ok(Some(shape)) => per_set.saturating_mul(shape.buffers()),
            _ => per_set,
        })
    }

    fn locked_bytes(&self, params: &Params) -> Result<u64, ParamError> {
        // A setup or shape the parameters do not make is reported by validate() and run().
        let locked = match setup(params) {
            Ok(s) => engine::locked_bytes(&s),
            Err(WorkloadError::Param(e)) => return Err(e),
            Err(_) => 0,
        };
        Ok(match shape::shape(&complete(params))? {
            Ok(Some(shape)) => locked.saturating_mul(shape.buffers()),
            _ => locked,
        })
    }

    fn validate(&self, params: &Params) -> Result<(), String> {
        let params = &complete(params);
        let s = setup(params).map_err(|e| e.to_string())?;
        let text = |e: ParamError| e.to_string();
        placement::Placement::parse(params.str("placement").map_err(text)?)?;
        if let Some(shape) = shape::shape(params).map_err(text)?? {
            if irq_of(params).map_err(text)? != irq::Irq::None {
                return Err(format!(
                    "irq={} drives the single-thread xfer; the channel model ({} threads) \
                     takes no interrupt source",
                    params.str("irq").map_err(text)?,
                    shape.threads()
                ));
            }
            if s.engine == Engine::Pvm {
                return Err(format!(
                    "engine=pvm runs one thread against one peer process; the channel model \
                     ({} threads) supports engine=memcpy and engine=fill",
                    shape.threads()
                ));
            }
        }
        Ok(())
    }

    fn run(&self, params: &Params, ctx: &MeasureCtx) -> Result<WorkloadOutput, WorkloadError> {
        let params = &complete(params);
        let s = setup(params)?;
        let cpu = self.cpus(params)?.first().copied();
        let duration_ns = (params.seconds("duration")? * 1e9).max(1.0) as u64;
        if ctx.stopping() {
            return Err(WorkloadError::Interrupted);
        }
        if let Some(shape) = shape::shape(params)?.map_err(|e| failed(format!("xfer: {e}")))? {
            self.validate(params)
                .map_err(|e| failed(format!("xfer: {e}")))?;
            let slots = slots(params, &shape, &ctx.sys)?;
            return threaded::run(s, shape, slots, duration_ns, ctx);
        }
        let irq = irq_of(params)?;
        // A thread of its own, so pinning it leaves the caller's affinity alone.
        let result = std::thread::scope(|scope| {
            scope
                .spawn(|| measure(s, cpu, irq, duration_ns, ctx))
                .join()
                .unwrap_or_else(|_| Err(failed("xfer: the transfer thread panicked".into())))
        });
        result.map_err(|e| {
            if ctx.stopping() {
                WorkloadError::Interrupted
            } else {
                e
            }
        })
    }
}

/// The interrupt source the parameters ask for.
fn irq_of(params: &Params) -> Result<irq::Irq, ParamError> {
    Ok(match params.str("irq")? {
        "timer" => irq::Irq::Timer {
            period_ns: (params.seconds("irq_period")? * 1e9).max(1_000.0) as u64,
        },
        _ => irq::Irq::None,
    })
}

/// The CPUs a channel-model measurement is known to use before it runs: an explicit
/// list (checked online by the planner) or, for `spread`, this process's allowed CPUs.
/// `isolated` needs the machine's root and is resolved at run time.
fn plan_cpus(params: &Params, shape: &shape::Shape) -> Result<Vec<u32>, ParamError> {
    use placement::Placement;
    let mut cpus = match Placement::parse(params.str("placement")?) {
        Ok(Placement::List(l)) => l,
        Ok(Placement::Spread) => placement::allowed_cpus().unwrap_or_default(),
        _ => Vec::new(),
    };
    cpus.truncate(shape.threads());
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

/// The threads of a channel-model measurement with the CPU each is pinned to.
fn slots(
    params: &Params,
    shape: &shape::Shape,
    sys: &SysRoot,
) -> Result<Vec<threaded::Slot>, WorkloadError> {
    use placement::{CpuSets, Placement};
    let bad = |e: String| failed(format!("xfer: {e}"));
    let place = Placement::parse(params.str("placement")?).map_err(bad)?;
    let cpus = if place.is_free() {
        CpuSets::default()
    } else {
        let topo = perflab_sys::Topology::read(sys)
            .map_err(|e| bad(format!("placement needs the online CPUs: {e}")))?;
        let isolated = perflab_sys::isolation::Isolation::read(sys)
            .map(|i| i.isolated_cpus())
            .unwrap_or_default();
        CpuSets {
            online: topo.online,
            allowed: placement::allowed_cpus().map_err(bad)?,
            isolated,
        }
    };
    let assigned = place.assign(shape.threads(), &cpus).map_err(bad)?;
    let per = shape.threads_per_channel as usize;
    Ok(assigned
        .into_iter()
        .enumerate()
        .map(|(i, cpu)| threaded::Slot {
            channel: i / per.max(1),
            index: (i % per.max(1)) as u32,
            cpu,
        })
        .collect())
}

fn measure(
    s: Setup,
    cpu: Option<u32>,
    irq: irq::Irq,
    duration_ns: u64,
    ctx: &MeasureCtx,
) -> Result<WorkloadOutput, WorkloadError> {
    let map_failed =
        |label: &str, e: MapError, held: u64| map_failure(&s, &ctx.sys, label, e, held);
    let pin = || match cpu {
        Some(c) => crate::affinity::pin(0, &[c])
            .map_err(|e| failed(format!("xfer: cannot pin to CPU {c}: {e}"))),
        None => Ok(()),
    };
    let mut x = Buffers::new(s, &ctx.stop, &map_failed, pin)?;
    let mut probe = ctx.threads.begin("xfer", cpu);
    x.check_content()?;
    x.zero_sources()?;
    let stopping = || ctx.stopping();
    let (timed, driven) = match irq {
        irq::Irq::None => (
            timing::measure(&mut x, duration_ns, &stopping, &mut probe)?,
            None,
        ),
        irq::Irq::Timer { period_ns } => {
            let mut t = irq::TimerDriven::new(&mut x, period_ns)?;
            let timed = timing::measure(&mut t, duration_ns, &stopping, &mut probe)?;
            (timed, Some((period_ns, t.waits, t.expirations)))
        }
    };
    let bytes = timed.iterations.saturating_mul(s.size);
    probe.finish(&ctx.threads, Some(bytes));
    let seen = std::mem::take(&mut x.seen);
    drop(x);
    let mut out = output(&s, &timed, &seen);
    match driven {
        Some((period_ns, waits, expirations)) => {
            out.metrics.extend([
                Metric::new("timer_waits", waits as f64, Unit::Count, Better::Neither),
                Metric::new(
                    "timer_expirations",
                    expirations as f64,
                    Unit::Count,
                    Better::Neither,
                ),
            ]);
            out.notes.push(format!(
                "interrupt-driven: each of the {waits} transfers (calibration included) waited, \
                 untimed, for an expiration of a {} timerfd on {}: an hrtimer interrupt (LOC \
                 on x86, arch_timer on arm64), no device interrupt",
                crate::parallel::duration_text(period_ns),
                cpu.map_or("the thread's CPU".into(), |c| format!("CPU {c}"))
            ));
        }
        None if s.engine == Engine::Fill => out.notes.push(
            "this fill raises no device interrupts: memset by the CPU, no DMA engine; the \
             interrupt deltas are the machine's own (timer ticks, IPIs, other devices). \
             irq=timer paces it by timer interrupts on its CPU"
                .into(),
        ),
        None => {}
    }
    Ok(out)
}

fn output(s: &Setup, t: &Timed, seen: &Seen) -> WorkloadOutput {
    let bytes = t.iterations.saturating_mul(s.size);
    let secs = t.timed_ns as f64 / 1e9;
    let mib_s = if secs > 0.0 {
        bytes as f64 / secs / (1u64 << 20) as f64
    } else {
        0.0
    };
    let mut out = WorkloadOutput {
        metrics: vec![
            Metric::new("bandwidth_mib_s", mib_s, Unit::MibPerSecond, Better::Higher),
            Metric::new("bytes", bytes as f64, Unit::Bytes, Better::Neither),
            Metric::new(
                "iterations",
                t.iterations as f64,
                Unit::Count,
                Better::Neither,
            ),
            Metric::new("timed_s", secs, Unit::Seconds, Better::Neither),
        ],
        ..Default::default()
    };
    if let Some(f) = seen.min() {
        out.metrics.push(Metric::new(
            "huge_fraction",
            f,
            Unit::Ratio,
            Better::Neither,
        ));
    }
    seen.notes(s.backing, &mut out);
    match &t.histogram {
        Some(h) => out.histograms.push(HistogramData::from_hdr(
            "iteration_ns",
            Unit::Nanoseconds,
            h,
        )),
        None => out.notes.push(format!(
            "transfers of about {:.0} ns timed in batches of {} (no iteration_ns histogram)",
            t.estimate_ns, t.batch
        )),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::buffer::MapStep;
    use super::*;
    use perflab_core::resolve;

    pub(super) fn params(pairs: &[(&str, &str)]) -> Params {
        let given = pairs
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        resolve("xfer", PARAMS, &given).unwrap()
    }

    #[test]
    fn memory_bytes_counts_every_buffer_in_whole_pages() {
        let m = |p: &[(&str, &str)]| Xfer.memory_bytes(&params(p)).unwrap();
        assert_eq!(m(&[]), 2 << 20);
        assert_eq!(m(&[("engine", "pvm")]), 2 << 20);
        assert_eq!(m(&[("engine", "pvm"), ("direction", "write")]), 2 << 20);
        assert_eq!(m(&[("engine", "fill")]), 1 << 20);
        assert_eq!(m(&[("size", "64K"), ("backing", "thp")]), 4 << 20);
        assert_eq!(m(&[("size", "3M"), ("backing", "2m")]), 8 << 20);
        assert_eq!(m(&[("engine", "fill"), ("backing", "1g")]), 1 << 30);
        assert_eq!(m(&[("size", "64G")]), 128 << 30);
    }

    #[test]
    fn cpus_follow_the_cpu_parameter() {
        assert_eq!(Xfer.cpus(&params(&[])), Ok(vec![]));
        // Hand-built parameters without `cpu` mean "not pinned", not CPU 0.
        assert_eq!(Xfer.cpus(&Params::default()), Ok(vec![]));
        assert_eq!(Xfer.memory_bytes(&Params::default()), Ok(2 << 20));
        assert_eq!(Xfer.cpus(&params(&[("cpu", "1")])), Ok(vec![1]));
    }

    #[test]
    fn hugetlb_failures_name_the_pool_and_the_fix() {
        let s = setup(&params(&[("backing", "2m"), ("size", "3M")])).unwrap();
        let fixture = format!(
            "{}/../../tests/fixtures/x86-intel-idle",
            env!("CARGO_MANIFEST_DIR")
        );
        let e = MapError {
            step: MapStep::Map,
            errno: libc::ENOMEM,
        };
        // The fixture's pool: 64 pages, all free; pretend the 8 M pool holds only 2.
        let dir = tempfile::tempdir().unwrap();
        let pool = dir.path().join("sys/kernel/mm/hugepages/hugepages-2048kB");
        std::fs::create_dir_all(&pool).unwrap();
        for (f, v) in [
            ("nr_hugepages", "6"),
            ("free_hugepages", "0"),
            ("resv_hugepages", "0"),
            ("surplus_hugepages", "0"),
        ] {
            std::fs::write(pool.join(f), v).unwrap();
        }
        // The source (2 pages) is mapped, the destination fails: the pool had 2 free.
        let msg = map_failure(
            &s,
            &SysRoot::at(dir.path()),
            "destination buffer",
            e,
            4 << 20,
        )
        .to_string();
        assert!(
            msg.contains("destination buffer (3M with 2m backing)"),
            "{msg}"
        );
        assert!(
            msg.contains("2M hugetlb pool (hugepages-2048kB) had 2 free of 6"),
            "{msg}"
        );
        assert!(msg.contains("needs 4"), "{msg}");
        assert!(msg.contains("vm.nr_hugepages=8`"), "{msg}");
        let msg = map_failure(&s, &SysRoot::at(&fixture), "source buffer", e, 0).to_string();
        assert!(msg.contains("had 64 free of 64"), "{msg}");
        assert!(msg.contains("hugepages=2M:auto"), "{msg}");
        assert!(msg.contains("sysctl vm.nr_hugepages="), "{msg}");

        let s = setup(&params(&[("backing", "1g")])).unwrap();
        let msg = map_failure(&s, &SysRoot::at("/nonexistent"), "buffer", e, 0).to_string();
        assert!(msg.contains("no 1G hugetlb pool"), "{msg}");
        assert!(msg.contains("hugepages=1G:auto"), "{msg}");
        assert!(msg.contains("hugepages-1048576kB/nr_hugepages"), "{msg}");
    }
}

#[cfg(test)]
mod channel_tests {
    use super::tests::params;
    use super::*;

    #[test]
    fn the_study_grid_derives_buffers_per_thread_and_refuses_what_does_not_divide() {
        let s = |p: &[(&str, &str)]| shape::shape(&params(p)).unwrap();
        assert_eq!(s(&[]).unwrap(), None);
        // Seed 000: 4 channels fixed, 192 buffers, buffers per thread from the threads.
        for (t, b) in [("1", 48), ("2", 24), ("4", 12), ("8", 6), ("16", 3)] {
            let got = s(&[
                ("channels", "4"),
                ("total_buffers", "192"),
                ("threads_per_channel", t),
            ])
            .unwrap()
            .unwrap();
            assert_eq!((got.channels, got.buffers_per_thread), (4, b));
            assert_eq!(got.buffers(), 192);
        }
        let e = s(&[
            ("channels", "4"),
            ("total_buffers", "192"),
            ("threads_per_channel", "5"),
        ])
        .unwrap_err();
        assert!(
            e.contains("total_buffers=192 does not divide among channels=4 × threads_per_channel=5 = 20 threads")
                && e.contains("give buffers_per_thread"),
            "{e}"
        );
        // Given buffers per thread, the seed's 6×6 (144 buffers) runs without a total.
        let got = s(&[
            ("channels", "4"),
            ("threads_per_channel", "6"),
            ("buffers_per_thread", "6"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(got.buffers(), 144);
        // Channels are still derived when buffers per thread are given instead.
        for (t, c) in [("1", 48), ("16", 3)] {
            let got = s(&[
                ("total_buffers", "192"),
                ("buffers_per_thread", "4"),
                ("threads_per_channel", t),
            ])
            .unwrap()
            .unwrap();
            assert_eq!(got.channels, c);
        }
        let e = s(&[
            ("total_buffers", "192"),
            ("buffers_per_thread", "4"),
            ("threads_per_channel", "5"),
        ])
        .unwrap_err();
        assert!(e.contains("does not divide"), "{e}");
        let e = s(&[("total_buffers", "192")]).unwrap_err();
        assert!(e.contains("needs channels"), "{e}");
        let e = Xfer
            .validate(&params(&[
                ("channels", "2"),
                ("buffers_per_thread", "2"),
                ("total_buffers", "5"),
            ]))
            .unwrap_err();
        assert!(e.contains("but total_buffers=5"), "{e}");
        let e = Xfer
            .validate(&params(&[("channels", "2"), ("engine", "pvm")]))
            .unwrap_err();
        assert!(e.contains("engine=pvm runs one thread"), "{e}");
        let e = Xfer
            .validate(&params(&[("channels", "2"), ("cpu", "0")]))
            .unwrap_err();
        assert!(e.contains("placement="), "{e}");
        assert!(Xfer.validate(&params(&[])).is_ok());
        let e = Xfer.validate(&params(&[("placement", "x")])).unwrap_err();
        assert!(e.contains("not free, spread"), "{e}");
    }

    #[test]
    fn channel_memory_counts_every_thread_buffer() {
        let p = params(&[
            ("channels", "2"),
            ("threads_per_channel", "3"),
            ("buffers_per_thread", "4"),
            ("size", "64K"),
        ]);
        assert_eq!(Xfer.memory_bytes(&p), Ok(24 * 2 * (64 << 10)));
        assert_eq!(Xfer.cpus(&p), Ok(Vec::<u32>::new()));
        let p = params(&[("threads_per_channel", "4"), ("placement", "0")]);
        assert_eq!(Xfer.cpus(&p), Ok(vec![0]));
    }

    fn run(pairs: &[(&str, &str)]) -> WorkloadOutput {
        let ctx = MeasureCtx::new(SysRoot::host(), Vec::new());
        let out = Xfer.run(&params(pairs), &ctx).unwrap();
        let threads = ctx.threads.take();
        let per = params(pairs);
        let shape = shape::shape(&per).unwrap().unwrap().unwrap();
        assert_eq!(threads.len(), shape.threads());
        out
    }

    #[test]
    fn channel_threads_are_recorded_with_the_verdict_and_lock_waits() {
        let out = run(&[
            ("channels", "2"),
            ("threads_per_channel", "2"),
            ("buffers_per_thread", "2"),
            ("size", "64K"),
            ("duration", "50ms"),
        ]);
        for name in crate::parallel::METRIC_NAMES {
            assert!(out.metric(name).is_some(), "{name}");
        }
        assert_eq!(out.metric("threads").unwrap().value, 4.0);
        let agg = out.metric("aggregate_mib_s").unwrap().value;
        assert!(agg > 0.0);
        assert_eq!(out.metric("bandwidth_mib_s").unwrap().value, agg);
        let w = out
            .histograms
            .iter()
            .find(|h| h.name == "lock_wait_ns")
            .unwrap();
        // Two acquisitions per transfer.
        assert_eq!(
            w.count as f64,
            2.0 * out.metric("iterations").unwrap().value
        );
        // Every acquisition waits at least 1 ns, so each thread's total is positive, and
        // the longest is at least the mean.
        let per = out.metric("lock_wait_ms_per_thread").unwrap().value;
        let max = out.metric("lock_wait_ms_thread_max").unwrap().value;
        assert!(per > 0.0 && max >= per, "{per} {max}");
        assert!(out
            .notes
            .iter()
            .any(|n| n.starts_with("summing per-thread")));
    }

    #[test]
    fn threads_pinned_to_one_cpu_are_judged_not_summable() {
        let out = run(&[
            ("threads_per_channel", "4"),
            ("placement", "0"),
            ("size", "64K"),
            ("duration", "200ms"),
        ]);
        assert_eq!(
            out.metric("sum_valid").unwrap().value,
            0.0,
            "{:?}",
            out.notes
        );
        assert!(
            out.notes
                .iter()
                .any(|n| n.contains("4 threads pinned to CPU 0 shared it")),
            "{:?}",
            out.notes
        );
    }

    #[test]
    fn a_fixed_quota_per_thread_is_honoured() {
        let out = run(&[
            ("channels", "1"),
            ("threads_per_channel", "2"),
            ("transfers_per_thread", "7"),
            ("size", "4K"),
        ]);
        assert_eq!(out.metric("iterations").unwrap().value, 14.0);
        assert_eq!(out.metric("bytes").unwrap().value, 14.0 * 4096.0);
    }
}
