//! `gpuxfer`: host ↔ GPU transfer bandwidth by buffer size, host memory kind and
//! direction — seed 002's scan on today's accelerators.
//!
//! Directions: `h2d`, `d2h`, `d2d` (device to device, no host memory), and `bidir` (one
//! stream each way at once, asking seed 000's question of the copy engines: did they
//! really run at once, may the two bandwidths be summed). Host memory ([`host`]):
//! pageable `4k` or `thp`, hugetlb `2m`/`1g` registered with the driver, or `pinned`
//! (allocated by the driver); perflab's own mappings are checked in smaps and reported as
//! `huge_fraction`, as in `xfer`.
//!
//! The driver is loaded at run time ([`perflab_cuda`]); copies are timed by its events
//! ([`chain`]). Before timing, one copy of up to [`CHECK_BYTES`] is checked byte for byte
//! on its way through the device, so a broken copy never reports a bandwidth.

mod chain;
pub mod host;
mod output;
mod plan;

use perflab_core::{
    Kind, MeasureCtx, Need, Needs, ParamError, ParamKind, ParamSpec, Params, ReportHints, Workload,
    WorkloadError, WorkloadHints, WorkloadInfo, WorkloadOutput,
};
use perflab_cuda::{CudaError, DeviceBuf, Driver, Gpu, Stream};

use chain::{Copy, Lane};
pub use host::HostKind;
use host::{check, fill, HostBuf};
pub use plan::{Direction, Setup};

/// The gpuxfer workload.
#[derive(Debug, Default)]
pub struct GpuXfer;

/// Most bytes of the content check: a bigger copy is checked over its first 64 MiB, so
/// the check's scratch buffer stays small next to the measured ones.
pub const CHECK_BYTES: usize = 64 << 20;

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "direction",
        role: perflab_core::ParamRole::Plain,
        help: "h2d (host → device), d2h (device → host), d2d (device → device, no host \
               memory) or bidir (h2d and d2h at once on two streams)",
        kind: ParamKind::Choice(Direction::NAMES),
        default: Some("h2d"),
    },
    ParamSpec {
        name: "size",
        role: perflab_core::ParamRole::SizeAxis,
        help: "bytes moved per copy",
        kind: ParamKind::Size {
            min: 4 << 10,
            max: 64 << 30,
        },
        default: Some("1M"),
    },
    ParamSpec {
        name: "backing",
        role: perflab_core::ParamRole::Plain,
        help: "host memory: 4k or thp (pageable; the driver stages it), 2m or 1g (hugetlb, \
               registered with cuMemHostRegister), pinned (cuMemAllocHost)",
        kind: ParamKind::Choice(HostKind::NAMES),
        default: Some("4k"),
    },
    ParamSpec {
        name: "duration",
        role: perflab_core::ParamRole::Plain,
        help: "minimum GPU time of the timed copies; copies repeat until it is reached",
        kind: ParamKind::Duration {
            min_s: 0.001,
            max_s: 86_400.0,
        },
        default: Some("1s"),
    },
    ParamSpec {
        name: "device",
        role: perflab_core::ParamRole::Plain,
        help: "CUDA device ordinal",
        kind: ParamKind::Int { min: 0, max: 1023 },
        default: Some("0"),
    },
];

static INFO: WorkloadInfo = WorkloadInfo {
    kind: Kind::Workload,
    name: "gpuxfer",
    help: "Host ↔ GPU copy bandwidth by size, host memory (4k, thp, 2m, 1g, pinned) and \
           direction (h2d, d2h, d2d, bidir), timed by CUDA events. Reports \
           bandwidth_mib_s, bytes, iterations, huge_fraction, link_mib_s (the PCIe \
           link's theoretical bandwidth, where sysfs shows it) and the iteration_ns \
           histogram (one copy each); bidir adds per-direction and solo bandwidths and \
           the parallelism verdict (overlap, parallelism, sum_valid) on the two copy \
           engines. Loads libcuda.so.1 (or PERFLAB_LIBCUDA) at run time.",
    params: PARAMS,
    // Only the 2m and 1g host memory kinds need the hugetlb pool.
    needs: Needs {
        all: &[Need::Gpu],
        some: &[Need::HugePages],
    },
    report: ReportHints::Workload(WorkloadHints {
        primary_metric: "bandwidth_mib_s",
        result_title: None,
        latency_table: None,
        workers: perflab_core::note::Workers::CopyEngines,
    }),
};

fn failed(msg: String) -> WorkloadError {
    WorkloadError::Failed(msg)
}

fn cuda(e: CudaError) -> WorkloadError {
    failed(format!("gpuxfer: {e}"))
}

impl Workload for GpuXfer {
    fn info(&self) -> &'static WorkloadInfo {
        &INFO
    }

    fn cpus(&self, _params: &Params) -> Result<Vec<u32>, ParamError> {
        Ok(Vec::new())
    }

    fn memory_bytes(&self, params: &Params) -> Result<u64, ParamError> {
        Ok(match plan::setup(&plan::complete(params, PARAMS)) {
            Ok(s) => s.host_bytes(),
            Err(WorkloadError::Param(e)) => return Err(e),
            Err(_) => 0,
        })
    }

    fn hugetlb_page_kb(&self, params: &Params) -> Result<Option<u64>, ParamError> {
        Ok(match plan::setup(&plan::complete(params, PARAMS)) {
            Ok(s) if s.host_bytes() > 0 => s.host.pool_kb(),
            Ok(_) => None,
            Err(WorkloadError::Param(e)) => return Err(e),
            Err(_) => None,
        })
    }

    fn validate(&self, params: &Params) -> Result<(), String> {
        let s = plan::setup(&plan::complete(params, PARAMS)).map_err(|e| e.to_string())?;
        plan::check_device(&s)
    }

    fn run(&self, params: &Params, ctx: &MeasureCtx) -> Result<WorkloadOutput, WorkloadError> {
        let s = plan::setup(&plan::complete(params, PARAMS))?;
        let duration_ns = (params.seconds("duration")? * 1e9).max(1.0) as u64;
        if ctx.stopping() {
            return Err(WorkloadError::Interrupted);
        }
        let driver = Driver::load().map_err(|e| failed(format!("gpuxfer: {e}")))?;
        measure(driver, &s, duration_ns, ctx)
    }
}

/// One measurement. Locals drop in reverse order: lanes (streams wait for their copies),
/// host buffers, device buffers, then the context, so an error anywhere frees all.
fn measure(
    driver: &'static Driver,
    s: &Setup,
    duration_ns: u64,
    ctx: &MeasureCtx,
) -> Result<WorkloadOutput, WorkloadError> {
    let stopping = &|| ctx.stopping();
    let gpu = Gpu::open(driver, s.device).map_err(cuda)?;
    let (free, _) = gpu.memory().map_err(cuda)?;
    if s.device_bytes() > free {
        return Err(failed(plan::too_big(s, free)));
    }
    let len = s.size as usize;
    let devs = (0..s.direction.device_buffers())
        .map(|_| DeviceBuf::alloc(&gpu, len))
        .collect::<Result<Vec<_>, _>>()
        .map_err(cuda)?;
    let labels = ["source host buffer", "destination host buffer"];
    let mut hosts = Vec::new();
    for i in 0..s.direction.host_buffers() {
        let label = match s.direction {
            Direction::DtoH => labels[1],
            _ => labels[i],
        };
        hosts.push(
            HostBuf::new(&gpu, s.host, s.size, label)
                .map_err(|e| failed(format!("gpuxfer: {e}")))?,
        );
    }
    check_content(&gpu, s, &devs, &mut hosts)?;
    let ptrs: Vec<*mut u8> = hosts.iter_mut().map(HostBuf::ptr).collect();
    let mut lanes = lanes(&gpu, s.direction, &devs, &ptrs).map_err(cuda)?;
    let started_ns = perflab_core::monotonic_ns();
    let timed = chain::measure(&gpu, &mut lanes, len, duration_ns, stopping)?;
    // Each direction alone, for what the copy engines give without the other: the
    // reference that says whether running both at once overlapped or took turns.
    let solo = if s.direction == Direction::Bidir {
        let each = (duration_ns / 4).max(1);
        let mut out = Vec::new();
        for lane in lanes.chunks_mut(1) {
            out.push(chain::measure(&gpu, lane, len, each, stopping)?);
        }
        Some(out)
    } else {
        None
    };
    let names: Vec<&'static str> = lanes.iter().map(|l| l.name).collect();
    drop(lanes);
    let fractions: Vec<f64> = hosts.iter().filter_map(HostBuf::huge_fraction).collect();
    let mut out = output::output(
        s,
        &names,
        &timed,
        solo.as_deref(),
        &fractions,
        &ctx.threads,
        started_ns,
    );
    out.metrics
        .extend(output::link_metric(link_mib_s(driver, s.device, &ctx.sys)));
    Ok(out)
}

/// One lane (a stream and its copy) per direction the measurement copies in.
fn lanes<'a, 'g>(
    gpu: &'g Gpu,
    direction: Direction,
    devs: &'a [DeviceBuf<'g>],
    ptrs: &[*mut u8],
) -> Result<Vec<Lane<'a, 'g>>, CudaError> {
    match direction {
        Direction::HtoD => vec![Lane::new(
            gpu,
            "h2d",
            Copy::HtoD {
                dst: &devs[0],
                src: ptrs[0],
            },
        )],
        Direction::DtoH => vec![Lane::new(
            gpu,
            "d2h",
            Copy::DtoH {
                dst: ptrs[0],
                src: &devs[0],
            },
        )],
        Direction::DtoD => vec![Lane::new(
            gpu,
            "d2d",
            Copy::DtoD {
                dst: &devs[1],
                src: &devs[0],
            },
        )],
        Direction::Bidir => vec![
            Lane::new(
                gpu,
                "h2d",
                Copy::HtoD {
                    dst: &devs[0],
                    src: ptrs[0],
                },
            ),
            Lane::new(
                gpu,
                "d2h",
                Copy::DtoH {
                    dst: ptrs[1],
                    src: &devs[1],
                },
            ),
        ],
    }
    .into_iter()
    .collect()
}

/// The theoretical bandwidth per direction of the PCIe link device `ordinal` sits on,
/// MiB/s; `None` when the driver gives no PCI address or sysfs no link. Asked after the
/// copies, and never an error: a report only draws it.
fn link_mib_s(driver: &'static Driver, ordinal: u32, sys: &perflab_core::SysRoot) -> Option<f64> {
    let address = perflab_cuda::devices(driver)
        .ok()?
        .into_iter()
        .find(|d| d.ordinal == ordinal)?
        .pci_address?;
    let link = perflab_cuda::pcie::nvidia_links(sys)
        .into_iter()
        .find(|l| l.address == address)?;
    Some(link.gb_s() * 1e9 / (1u64 << 20) as f64)
}

/// One copy of up to [`CHECK_BYTES`] through the device, checked byte for byte: into the
/// device from a host buffer and back out into another, by the same calls the timed
/// copies use.
fn check_content(
    gpu: &Gpu,
    s: &Setup,
    devs: &[DeviceBuf<'_>],
    hosts: &mut [HostBuf<'_>],
) -> Result<(), WorkloadError> {
    let n = (s.size as usize).min(CHECK_BYTES);
    let seed = s.size ^ 0x6770_7578;
    let stream = Stream::new(gpu).map_err(cuda)?;
    let mut scratch = vec![0u8; n];
    let bad = |what: &str, off: usize| {
        failed(format!(
            "gpuxfer: the {what} copy of {} delivered wrong data at byte {off}: the driver \
             or device is broken; no bandwidth is reported",
            perflab_core::format_size(n as u64)
        ))
    };
    let run = |f: &dyn Fn() -> Result<(), CudaError>| -> Result<(), WorkloadError> {
        f().map_err(cuda)?;
        stream.synchronize().map_err(cuda)
    };
    // Host → device → host, from the source host buffer where there is one.
    let (src, back) = match s.direction {
        Direction::HtoD | Direction::Bidir => {
            fill(hosts[0].bytes(n), seed);
            (hosts[0].ptr() as *const u8, &devs[0])
        }
        Direction::DtoH => {
            fill(&mut scratch, seed);
            (scratch.as_ptr(), &devs[0])
        }
        Direction::DtoD => {
            fill(&mut scratch, seed);
            (scratch.as_ptr(), &devs[1])
        }
    };
    // SAFETY: `src` holds `n` bytes and lives past the synchronize in `run`.
    run(&|| unsafe { stream.copy_htod(&devs[0], src, n) })?;
    if s.direction == Direction::DtoD {
        // SAFETY: `devs` outlive the synchronize in `run`.
        run(&|| unsafe { stream.copy_dtod(&devs[1], &devs[0], n) })?;
    }
    // Out into the destination host buffer where the direction has one.
    let dst = match s.direction {
        Direction::DtoH => 0,
        Direction::Bidir => 1,
        _ => usize::MAX,
    };
    if dst == usize::MAX {
        scratch.fill(0);
        // SAFETY: `scratch` holds `n` bytes, untouched until the synchronize in `run`.
        let p = scratch.as_mut_ptr();
        run(&|| unsafe { stream.copy_dtoh(p, back, n) })?;
        return match check(&scratch, seed) {
            Some(off) => Err(bad(s.direction.name(), off)),
            None => Ok(()),
        };
    }
    if s.direction == Direction::Bidir {
        // The d2h lane reads devs[1]: give it the pattern too.
        // SAFETY: `devs` outlive the synchronize in `run`.
        run(&|| unsafe { stream.copy_dtod(&devs[1], &devs[0], n) })?;
    }
    let out = &mut hosts[dst];
    out.bytes(n).fill(0);
    let p = out.ptr();
    // SAFETY: the host buffer holds `n` bytes, untouched until the synchronize in `run`.
    run(&|| unsafe { stream.copy_dtoh(p, &devs[dst.min(1)], n) })?;
    match check(out.bytes(n), seed) {
        Some(off) => Err(bad(s.direction.name(), off)),
        None => Ok(()),
    }
}
