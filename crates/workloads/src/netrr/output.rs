//! What a netrr measurement reports: the round-trip figures, the load that ran beside
//! them, and the notes a reader needs to trust them (the path and pacing, a sender that
//! fell behind, requests lost).

use std::time::{Duration, Instant};

use perflab_core::{Better, HistogramData, Metric, Unit, WorkloadOutput};

use super::client::{ClientPlan, ClientResult};

/// The load that ran beside the round trips.
pub(super) struct Load<'a> {
    pub streams: u32,
    pub hogs: &'a [u32],
    /// Byte counts of the streams at the window's start and end.
    pub marks: &'a [(Instant, u64)],
}

/// The output of one measurement; `notes` made before it (starting the sides) follow
/// the path's note and precede those about the figures.
pub(super) fn output(
    r: &ClientResult,
    plan: &ClientPlan,
    path: &str,
    load: &Load<'_>,
    notes: Vec<String>,
) -> WorkloadOutput {
    let h = HistogramData::from_hdr("rtt", Unit::Nanoseconds, &r.rtt);
    let mut metrics = round_trip_metrics(r, &h);
    let mut out_notes = vec![path_note(path, plan)];
    out_notes.extend(notes);
    if let Some(lag) = r.max_send_lag {
        metrics.push(us("send_lag_max_us", lag.as_nanos() as f64));
        if lag > Duration::from_secs_f64(1.0 / plan.rate) {
            out_notes.push(format!(
                "the sender fell behind its schedule by up to {:.0} µs; those requests' \
                 latency counts from their scheduled time",
                lag.as_secs_f64() * 1e6
            ));
        }
    }
    if load.streams > 0 {
        let mib_s = load_mib_s(load.marks);
        metrics.push(Metric::new(
            "load_mib_s",
            mib_s,
            Unit::MibPerSecond,
            Better::Neither,
        ));
        if mib_s == 0.0 {
            out_notes.push("the load streams moved no data during the timed window".into());
        }
    }
    if !load.hogs.is_empty() {
        out_notes.push(format!(
            "CPU hogs on {}",
            perflab_sys::cpulist::format_cpu_list(load.hogs)
        ));
    }
    out_notes.extend(loss_notes(r, plan));
    WorkloadOutput {
        metrics,
        histograms: vec![h],
        threads: Vec::new(),
        notes: out_notes,
    }
}

fn us(name: &str, ns: f64) -> Metric {
    Metric::new(name, ns / 1000.0, Unit::Microseconds, Better::Lower)
}

/// The rate over the timed window, the latency distribution and the counts.
fn round_trip_metrics(r: &ClientResult, h: &HistogramData) -> Vec<Metric> {
    let secs = r.window.as_secs_f64();
    let tps = if secs > 0.0 {
        r.exchanges as f64 / secs
    } else {
        0.0
    };
    vec![
        Metric::new("transactions_per_s", tps, Unit::PerSecond, Better::Higher),
        us("rtt_p50_us", h.p50),
        us("rtt_avg_us", h.mean),
        us("rtt_min_us", h.min),
        us("rtt_max_us", h.max),
        us("rtt_stddev_us", h.stddev),
        us("rtt_p90_us", h.p90),
        us("rtt_p99_us", h.p99),
        us("rtt_p99_9_us", h.p999),
        us("rtt_p99_99_us", h.p9999),
        Metric::new(
            "exchanges",
            r.exchanges as f64,
            Unit::Count,
            Better::Neither,
        ),
        Metric::new("lost", r.lost as f64, Unit::Count, Better::Lower),
    ]
}

/// The load streams' throughput between the first and last mark (0 without two).
fn load_mib_s(marks: &[(Instant, u64)]) -> f64 {
    match (marks.first(), marks.last()) {
        (Some(a), Some(b)) if b.0 > a.0 => {
            (b.1.saturating_sub(a.1)) as f64 / (1 << 20) as f64 / (b.0 - a.0).as_secs_f64()
        }
        _ => 0.0,
    }
}

/// `path veth: udp 64 B, closed loop`.
fn path_note(path: &str, plan: &ClientPlan) -> String {
    let setup = format!(
        "{} {} B, {}",
        plan.proto.name(),
        plan.size,
        if plan.rate > 0.0 {
            format!("open loop at {} req/s", plan.rate)
        } else {
            "closed loop".into()
        }
    );
    // Worded by core, which reads it back for the report's latency table.
    perflab_core::note::Note::net_path(path, &setup).text()
}

/// Requests that got no reply, in the warm-up and in the timed window.
fn loss_notes(r: &ClientResult, plan: &ClientPlan) -> Vec<String> {
    let mut notes = Vec::new();
    if r.warmup_lost > 0 {
        notes.push(format!(
            "{} warm-up requests got no reply within {} ms (not counted in lost; each \
             delayed the start by that timeout)",
            r.warmup_lost,
            plan.timeout.as_millis()
        ));
    }
    if r.lost > 0 {
        notes.push(format!(
            "{} of {} requests got no reply within {} ms (lost)",
            r.lost,
            r.lost + r.exchanges,
            plan.timeout.as_millis()
        ));
    }
    notes
}
