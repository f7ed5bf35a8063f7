//! A measurement's metrics and notes; for bidir, the parallelism verdict on the two copy
//! engines.

use perflab_core::note::Workers;
use perflab_core::{
    Better, HistogramData, Metric, ThreadRecord, ThreadTracker, Unit, WorkloadOutput,
};

use super::chain::Timed;
use super::host::HostKind;
use super::plan::{Direction, Setup};
use crate::parallel::{self, Criteria, Span};

const MIB: f64 = (1u64 << 20) as f64;

fn mib_s(bytes: f64, ns: f64) -> f64 {
    if ns > 0.0 {
        bytes / (ns / 1e9) / MIB
    } else {
        0.0
    }
}

/// The measurement's output. `started_ns` (CLOCK_MONOTONIC) is when the timed copies
/// were first queued: bidir's per-direction records are stored as thread records on
/// that clock, so reports judge the stored run by the same rules as threads.
pub fn output(
    s: &Setup,
    names: &[&'static str],
    t: &Timed,
    solo: Option<&[Timed]>,
    fractions: &[f64],
    threads: &ThreadTracker,
    started_ns: u64,
) -> WorkloadOutput {
    let copies: u64 = t.lanes.iter().map(|l| l.copies).sum();
    let bytes = copies.saturating_mul(s.size);
    let mut out = WorkloadOutput::default();
    match solo {
        Some(solo) => {
            for span in bidir(s, names, t, solo, &mut out) {
                threads.add(ThreadRecord {
                    role: span.name,
                    tid: perflab_core::current_tid(),
                    // The event clock, anchored where the copies were first queued.
                    start_ns: started_ns + span.start_ns,
                    end_ns: started_ns + span.end_ns,
                    bytes: Some(span.bytes),
                    ..Default::default()
                });
            }
        }
        None => out.metrics.extend([
            Metric::new(
                "bandwidth_mib_s",
                mib_s(bytes as f64, t.window_ns),
                Unit::MibPerSecond,
                Better::Higher,
            ),
            Metric::new("bytes", bytes as f64, Unit::Bytes, Better::Neither),
        ]),
    }
    out.metrics.extend([
        Metric::new("iterations", copies as f64, Unit::Count, Better::Neither),
        Metric::new("timed_s", t.window_ns / 1e9, Unit::Seconds, Better::Neither),
    ]);
    if let Some(f) = fractions.iter().copied().reduce(f64::min) {
        out.metrics.push(Metric::new(
            "huge_fraction",
            f,
            Unit::Ratio,
            Better::Neither,
        ));
        if s.host == HostKind::Mapped(crate::xfer::Backing::Thp) && f < 1.0 {
            out.notes.push(format!(
                "thp: the kernel backed {:.0}% of the host buffers with huge pages",
                f * 100.0
            ));
        }
    }
    out.histograms.push(HistogramData::from_hdr(
        "iteration_ns",
        Unit::Nanoseconds,
        &t.histogram,
    ));
    out.notes.push(host_note(s));
    if t.group > 1 {
        out.notes.push(format!(
            "copies this short were timed in groups of {} (an event after each group: one \
             per copy would cost the host as much as the copies); iteration_ns holds each \
             group's mean per copy",
            t.group
        ));
    }
    out
}

fn host_note(s: &Setup) -> String {
    if s.direction == Direction::DtoD {
        return "d2d: device memory only; the host memory kind plays no part".into();
    }
    match s.host {
        HostKind::Pinned => "host memory pinned by the driver (cuMemAllocHost)".into(),
        HostKind::Mapped(b) if b.is_hugetlb() => format!(
            "host memory on {} hugetlb pages, registered with the driver \
             (cuMemHostRegister): copied by DMA directly",
            b.name()
        ),
        HostKind::Mapped(b) => format!(
            "pageable host memory ({}): the driver stages each copy through its own pinned \
             buffers, and that staging is inside the timed copies",
            b.name()
        ),
    }
}

/// Both directions at once. The verdict reuses the thread-parallelism rules: a span per
/// direction on the gap-free event clock, and as its busy time the time its bytes take at
/// that direction's solo bandwidth. Event intervals cannot tell a copy waiting for an
/// engine from a copy moving bytes; the solo reference can: if the engines overlapped,
/// both directions' solo-equivalent times fit in the window together (parallelism near
/// 2); if they took turns, they add up to it (parallelism near 1).
fn bidir(
    s: &Setup,
    names: &[&'static str],
    t: &Timed,
    solo: &[Timed],
    out: &mut WorkloadOutput,
) -> Vec<Span> {
    let spans: Vec<Span> = names
        .iter()
        .zip(&t.lanes)
        .zip(solo)
        .map(|((name, l), alone)| {
            let bytes = l.copies.saturating_mul(s.size);
            let alone_bytes = alone.lanes[0].copies.saturating_mul(s.size) as f64;
            let alone_rate = alone_bytes / alone.window_ns.max(1.0);
            Span {
                name: name.to_string(),
                start_ns: l.start_ns.max(0.0) as u64,
                end_ns: l.end_ns.max(0.0) as u64,
                bytes,
                busy_ns: Some((bytes as f64 / alone_rate.max(f64::MIN_POSITIVE)) as u64),
                ..Default::default()
            }
        })
        .collect();
    let v = parallel::judge(&spans, &Criteria::default());
    out.metrics.extend(parallel::bandwidth_metrics(&v));
    for ((name, l), alone) in names.iter().zip(&t.lanes).zip(solo) {
        let bytes = l.copies.saturating_mul(s.size) as f64;
        out.metrics.push(Metric::new(
            format!("{name}_mib_s"),
            mib_s(bytes, l.end_ns - l.start_ns),
            Unit::MibPerSecond,
            Better::Higher,
        ));
        let alone_bytes = alone.lanes[0].copies.saturating_mul(s.size) as f64;
        out.metrics.push(Metric::new(
            format!("{name}_solo_mib_s"),
            mib_s(alone_bytes, alone.window_ns),
            Unit::MibPerSecond,
            Better::Higher,
        ));
    }
    out.metrics.extend(parallel::metrics(&v));
    out.notes.push(
        "bidir: parallelism is the two directions' solo-equivalent copy time over the \
         shared window (2: the copy engines overlapped fully; 1: they took turns); \
         bandwidth_mib_s is the aggregate, which may always be quoted"
            .into(),
    );
    out.notes.push(engine_note(&v));
    spans
}

/// The verdict in copy-engine words. The judge speaks of threads and of time on a CPU,
/// which a copy engine has no part of: here a "thread" is one direction's chain of
/// copies on its stream, and its busy time the time its bytes take at its solo bandwidth.
fn engine_note(v: &parallel::Verdict) -> String {
    let head = format!(
        "2 copy engines (h2d, d2h): aggregate {:.0} MiB/s, summed {:.0} MiB/s, overlap \
         {:.0}%, parallelism {:.2} of 2",
        v.aggregate_mib_s,
        v.summed_mib_s,
        v.overlap * 100.0,
        v.parallelism
    );
    if v.sum_valid {
        return format!("summing the two directions' bandwidths is valid: {head}");
    }
    // The judge's reasons, worded for copy engines from the same values the threads'
    // words come from (perflab_core::note).
    let reasons: Vec<String> = v
        .reasons
        .iter()
        .map(|r| r.text(Workers::CopyEngines))
        .collect();
    format!(
        "summing the two directions' bandwidths is NOT valid: {head}; {}",
        reasons.join("; ")
    )
}

/// The link's theoretical bandwidth per direction in MiB/s, for the line a plot draws
/// (`link_mib_s`); nothing where the device's link cannot be read (the stand-in).
pub fn link_metric(mib_s: Option<f64>) -> Option<Metric> {
    mib_s
        .filter(|m| m.is_finite() && *m > 0.0)
        .map(|m| Metric::new("link_mib_s", m, Unit::MibPerSecond, Better::Neither))
}
