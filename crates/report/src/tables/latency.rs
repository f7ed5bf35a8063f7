//! The network-path latency table of seed 001: one row per path (the variant) and load,
//! columns min, avg, max, stddev as the seed prints them, plus p50, p99 and p99.9, all
//! round trips in µs; with the load's measured throughput and the NET_RX / NET_TX
//! softirqs per second beside them, so every figure carries what the machine did.
//!
//! # Pooling repetitions
//!
//! The repetitions of a row are pooled into one distribution: their HDR histograms (kept
//! with every measurement) are added, and every column is read from the sum, so min is
//! the smallest round trip of any repetition, max the largest, and a percentile is the
//! percentile of all round trips together. Where a histogram cannot be decoded (a record
//! from elsewhere without one), the columns fall back to: min of minima, max of maxima,
//! count-weighted mean, pooled standard deviation, and the median across repetitions of
//! each percentile; the row then says so.
//!
//! Differences between paths, loads or runs with statistics are the comparison tables'
//! business ([`compare_latency_runs`]): they test the per-repetition medians or tails.

use std::collections::BTreeMap;

use hdrhistogram::serialization::Deserializer;
use hdrhistogram::Histogram;
use perflab_core::note::{Note, NoteKind};
use perflab_core::record::{MeasurementRecord, MeasurementStatus, RunInfo};
use perflab_core::{HistogramData, LatencyTableHints, ParamRoles, ParamValue, Params};
use perflab_stats::StatsConfig;
use serde::Serialize;

use crate::error::ReportError;
use crate::tables::compare::{compare_runs, ComparisonTable};

/// The parameter that sets the background load.
const LOAD: &str = "load_streams";
/// Parameters that name a row's load rather than its section.
const LOAD_PARAMS: &[&str] = &[LOAD, "hogs"];
/// Parameters that vary run to run without defining a point (durations).
const IGNORED: &[&str] = &["duration", "warmup", "timeout", "token"];

/// One path under one load, pooled over its repetitions. Latencies in µs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LatencyRow {
    pub path: String,
    /// `no load`, `3 streams`, `3 streams, hogs 1`.
    pub load: String,
    pub load_streams: i64,
    pub reps: u32,
    pub failed: u32,
    /// Round trips in the pooled distribution.
    pub count: u64,
    pub min: f64,
    pub avg: f64,
    pub max: f64,
    pub stddev: f64,
    pub p50: f64,
    pub p99: f64,
    pub p999: f64,
    /// Requests that got no reply, summed over repetitions.
    pub lost: f64,
    /// Median over repetitions of the load's throughput.
    pub load_mib_s: Option<f64>,
    pub net_rx_per_s: Option<f64>,
    pub net_tx_per_s: Option<f64>,
    /// Columns were combined from summaries, not from pooled histograms.
    pub approximate: bool,
    /// The first failure's message, for a row without a successful repetition.
    pub error: Option<String>,
}

/// One combination of the other varying parameters (proto, size, rate).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LatencySection {
    /// `proto=udp size=64`; empty when nothing else varies.
    pub title: String,
    pub rows: Vec<LatencyRow>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LatencyTable {
    pub run: i64,
    /// Parameters with one value throughout, said once.
    pub fixed: String,
    pub sections: Vec<LatencySection>,
    /// Variants the machine could not build, with the reason.
    pub unavailable: Vec<(String, String)>,
    /// What every measurement of a path says of it (a guest under TCG, CPU hogs), once
    /// per path: such a note changes how every figure of the row is read.
    pub path_notes: Vec<(String, String)>,
}

/// The notes every successful measurement of `variant` carries, less the first line each
/// workload writes (`path …: udp 64 B, closed loop`), which the table already says.
fn common_notes(variant: &str, ms: &[MeasurementRecord]) -> Vec<String> {
    let mut ok = ms.iter().filter(|m| m.variant == variant && m.is_result());
    let Some(first) = ok.next() else {
        return Vec::new();
    };
    let rest: Vec<&MeasurementRecord> = ok.collect();
    first
        .output
        .notes
        .iter()
        .filter(|n| !matches!(Note::from_stored(n).kind, NoteKind::NetPath { .. }))
        .filter(|n| rest.iter().all(|m| m.output.notes.contains(n)))
        .cloned()
        .collect()
}

pub(crate) fn load_name(p: &Params) -> (i64, String) {
    let streams = match p.get(LOAD) {
        Some(ParamValue::Int(n)) => *n,
        _ => 0,
    };
    // Runs recorded before netrr had `hogs` have none: no hogs.
    let hogs = p
        .get("hogs")
        .and_then(ParamValue::as_str)
        .unwrap_or("")
        .trim()
        .to_string();
    let mut name = match streams {
        0 => "no load".to_string(),
        1 => "1 stream".to_string(),
        n => format!("{n} streams"),
    };
    if !hogs.is_empty() {
        name = if streams == 0 {
            format!("hogs {hogs}")
        } else {
            format!("{name}, hogs {hogs}")
        };
    }
    (streams, name)
}

/// Parameters that define sections: those that vary, minus load and ignored ones; and
/// those fixed throughout, each value in its role's unit.
pub(crate) fn varying(roles: &ParamRoles, ms: &[MeasurementRecord]) -> (Vec<String>, String) {
    let mut values: BTreeMap<&str, Vec<&ParamValue>> = BTreeMap::new();
    for m in ms {
        for (k, v) in &m.params.0 {
            let e = values.entry(k.as_str()).or_default();
            if !e.contains(&v) {
                e.push(v);
            }
        }
    }
    let mut vary = Vec::new();
    let mut fixed = Vec::new();
    for (k, vs) in values {
        if LOAD_PARAMS.contains(&k) || IGNORED.contains(&k) {
            continue;
        }
        if vs.len() > 1 {
            vary.push(k.to_string());
        } else if let Some(v) = vs.first() {
            let text = roles.value_text(k, v);
            let unpinned = k.ends_with("_cpu") && text == "-1";
            if !text.is_empty() && !unpinned {
                fixed.push(format!("{k}={text}"));
            }
        }
    }
    (vary, fixed.join(" "))
}

/// `proto=udp size=64 B`: the point's varying parameters, each in its role's unit.
pub(crate) fn title(roles: &ParamRoles, p: &Params, vary: &[String]) -> String {
    vary.iter()
        .map(|k| match p.get(k) {
            Some(v) => roles.named_value(k, v),
            None => format!("{k}="),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The variants in the order the study lists them, then any others as measured.
pub(crate) fn variant_order(run: &RunInfo, ms: &[MeasurementRecord]) -> Vec<String> {
    let mut order: Vec<String> = run.spec.variants.iter().map(|v| v.name.clone()).collect();
    for m in ms {
        if !order.contains(&m.variant) {
            order.push(m.variant.clone());
        }
    }
    order
}

pub(crate) fn decode(h: &HistogramData) -> Option<Histogram<u64>> {
    if h.encoded.is_empty() {
        return None;
    }
    Deserializer::new().deserialize(&mut &h.encoded[..]).ok()
}

fn median(v: Vec<f64>) -> Option<f64> {
    perflab_stats::median(v)
}

fn softirq_rate(m: &MeasurementRecord, source: &str, key: &str) -> Option<f64> {
    let total = m
        .telemetry
        .iter()
        .find(|t| t.source == source && t.key == key && t.cpu.is_none())?;
    (m.elapsed_s > 0.0).then(|| total.value / m.elapsed_s)
}

/// Pools the rtt histograms of one row's successful repetitions (ns in, µs out).
fn pool(row: &mut LatencyRow, hs: &[&HistogramData]) {
    let name = hs.first().map_or("", |h| h.name.as_str());
    let us = |ns: f64| ns / 1000.0;
    let decoded: Option<Vec<Histogram<u64>>> = hs.iter().map(|h| decode(h)).collect();
    if let Some(mut list) = decoded.filter(|l| !l.is_empty()) {
        let mut sum = list.swap_remove(0);
        let mut ok = true;
        for h in &list {
            ok &= sum.add(h).is_ok();
        }
        if ok {
            let d = HistogramData::from_hdr(name, perflab_core::Unit::Nanoseconds, &sum);
            row.count = d.count;
            (row.min, row.avg, row.max, row.stddev) =
                (us(d.min), us(d.mean), us(d.max), us(d.stddev));
            (row.p50, row.p99, row.p999) = (us(d.p50), us(d.p99), us(d.p999));
            return;
        }
    }
    row.approximate = true;
    let n: u64 = hs.iter().map(|h| h.count).sum();
    row.count = n;
    if n == 0 {
        return;
    }
    let w = |f: &dyn Fn(&HistogramData) -> f64| {
        hs.iter().map(|h| f(h) * h.count as f64).sum::<f64>() / n as f64
    };
    let mean = w(&|h| h.mean);
    // Pooled variance: within-repetition variance plus the spread of the means.
    let var = w(&|h| h.stddev * h.stddev + (h.mean - mean) * (h.mean - mean));
    row.avg = us(mean);
    row.stddev = us(var.sqrt());
    row.min = us(hs.iter().map(|h| h.min).fold(f64::INFINITY, f64::min));
    row.max = us(hs.iter().map(|h| h.max).fold(0.0, f64::max));
    let med = |f: fn(&HistogramData) -> f64| {
        median(hs.iter().map(|h| f(h)).collect())
            .map(us)
            .unwrap_or(0.0)
    };
    row.p50 = med(|h| h.p50);
    row.p99 = med(|h| h.p99);
    row.p999 = med(|h| h.p999);
}

/// Builds the table of one run of `netrr`.
pub fn latency_table(run: &RunInfo, ms: &[MeasurementRecord]) -> LatencyTable {
    // Which histogram and which softirq monitor, as the workload's hints say.
    let sources = crate::hints::results(&run.workload).and_then(|r| r.latency_table.as_ref());
    let roles = crate::hints::param_roles(run);
    let (vary, fixed) = varying(&roles, ms);
    let order = variant_order(run, ms);
    // Sections in the order their first measurement was planned.
    let mut sorted: Vec<&MeasurementRecord> = ms.iter().collect();
    sorted.sort_by_key(|m| (m.point, m.seq));
    let mut titles: Vec<String> = Vec::new();
    for m in &sorted {
        let t = title(&roles, &m.params, &vary);
        if !titles.contains(&t) {
            titles.push(t);
        }
    }
    let mut sections = Vec::new();
    for t in titles {
        let mine: Vec<&MeasurementRecord> = sorted
            .iter()
            .copied()
            .filter(|m| title(&roles, &m.params, &vary) == t)
            .collect();
        let mut rows = Vec::new();
        for v in &order {
            let mut loads: Vec<(i64, String)> = mine
                .iter()
                .filter(|m| &m.variant == v)
                .map(|m| load_name(&m.params))
                .collect();
            loads.sort();
            loads.dedup();
            for (streams, load) in loads {
                let reps: Vec<&MeasurementRecord> = mine
                    .iter()
                    .copied()
                    .filter(|m| &m.variant == v && load_name(&m.params).1 == load)
                    .collect();
                rows.push(row(sources, v, streams, &load, &reps));
            }
        }
        sections.push(LatencySection { title: t, rows });
    }
    let path_notes = order
        .iter()
        .flat_map(|v| common_notes(v, ms).into_iter().map(move |n| (v.clone(), n)))
        .collect();
    LatencyTable {
        run: run.id,
        fixed,
        sections,
        path_notes,
        unavailable: run
            .unavailable
            .iter()
            .map(|u| (u.variant.clone(), u.reason.clone()))
            .collect(),
    }
}

fn row(
    sources: Option<&LatencyTableHints>,
    path: &str,
    streams: i64,
    load: &str,
    reps: &[&MeasurementRecord],
) -> LatencyRow {
    let histogram = sources.map(|s| s.histogram);
    let softirqs = sources.map_or("", |s| s.softirqs);
    let ok: Vec<&MeasurementRecord> = reps.iter().copied().filter(|m| m.is_result()).collect();
    let reps: Vec<&MeasurementRecord> = reps.iter().copied().filter(|m| m.is_headline()).collect();
    let mut r = LatencyRow {
        path: path.to_string(),
        load: load.to_string(),
        load_streams: streams,
        reps: ok.len() as u32,
        failed: (reps.len() - ok.len()) as u32,
        count: 0,
        min: 0.0,
        avg: 0.0,
        max: 0.0,
        stddev: 0.0,
        p50: 0.0,
        p99: 0.0,
        p999: 0.0,
        lost: 0.0,
        load_mib_s: None,
        net_rx_per_s: None,
        net_tx_per_s: None,
        approximate: false,
        error: reps.iter().find_map(|m| match &m.status {
            MeasurementStatus::Failed(e) => Some(e.clone()),
            MeasurementStatus::Ineffective(e) => Some(format!("ineffective: {e}")),
            MeasurementStatus::Disturbed(e) => Some(format!("disturbed: {e}")),
            MeasurementStatus::Ok => None,
        }),
    };
    let hs: Vec<&HistogramData> = ok
        .iter()
        .filter_map(|m| {
            m.output
                .histograms
                .iter()
                .find(|h| Some(h.name.as_str()) == histogram)
        })
        .collect();
    if !hs.is_empty() {
        pool(&mut r, &hs);
    }
    let metric = |name: &str| -> Vec<f64> {
        ok.iter()
            .filter_map(|m| m.output.metric(name).map(|x| x.value))
            .collect()
    };
    r.lost = metric("lost").iter().sum();
    r.load_mib_s = median(metric("load_mib_s"));
    r.net_rx_per_s = median(
        ok.iter()
            .filter_map(|m| softirq_rate(m, softirqs, "NET_RX"))
            .collect(),
    );
    r.net_tx_per_s = median(
        ok.iter()
            .filter_map(|m| softirq_rate(m, softirqs, "NET_TX"))
            .collect(),
    );
    r
}

/// Run `b` against run `a` for the latency columns a person compares (p50, p99,
/// p99.9), through the comparison tables: each path and load matched by parameters and
/// variant, the per-repetition values tested.
pub fn compare_latency_runs(
    a_run: &RunInfo,
    a_ms: &[MeasurementRecord],
    b_run: &RunInfo,
    b_ms: &[MeasurementRecord],
    cfg: &StatsConfig,
) -> Result<Vec<ComparisonTable>, ReportError> {
    ["rtt_p50_us", "rtt_p99_us", "rtt_p99_9_us"]
        .iter()
        .map(|m| compare_runs(a_run, a_ms, b_run, b_ms, Some(m), cfg))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::section::{Format, Section};
    use perflab_core::record::{RunStatus, UnavailableVariant};
    use perflab_core::{Better, Metric, TelemetryRow, Unit, WorkloadOutput};
    use perflab_core::{Descriptor, Kind, LatencyTableHints, Needs, ReportHints, WorkloadHints};

    /// netrr's hints as crates/workloads/src/netrr/mod.rs declares them: the report sees
    /// workloads only through their descriptors.
    static NETRR: Descriptor = Descriptor {
        kind: Kind::Workload,
        name: "netrr",
        help: "",
        params: &[],
        needs: Needs::NONE,
        report: ReportHints::Workload(WorkloadHints {
            primary_metric: "rtt_p50_us",
            result_title: None,
            latency_table: Some(LatencyTableHints {
                histogram: "rtt",
                softirqs: "softirqs",
            }),
            workers: perflab_core::note::Workers::Threads,
        }),
    };

    fn run() -> RunInfo {
        crate::hints::extra::declare(&NETRR);
        RunInfo {
            id: 12,
            created_at: 1_700_000_000.0,
            study: "netpaths".into(),
            workload: "netrr".into(),
            label: None,
            status: RunStatus::Complete,
            spec: serde_json::from_value(serde_json::json!({
                "primary_metric": "rtt_p50_us",
                "variants": [{"name": "loopback"}, {"name": "veth"}, {"name": "ovs"}],
            }))
            .expect("a valid run spec"),
            fingerprint: perflab_core::Fingerprint::from_json(serde_json::json!({})),
            unavailable: vec![UnavailableVariant {
                variant: "ovs".into(),
                reason: "Open vSwitch is not installed (apt-get install openvswitch-switch)".into(),
            }],
            planned: 8,
            done: 8,
            failed: 1,
            ineffective: 0,
            uid: String::new(),
        }
    }

    /// Round trips spread evenly from `lo` to `hi` µs, plus one slow outlier.
    fn hist(lo: u64, hi: u64, outlier: u64) -> HistogramData {
        let mut h = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).unwrap();
        for i in 0..1000 {
            h.record((lo + (hi - lo) * i / 1000) * 1000).unwrap();
        }
        h.record(outlier * 1000).unwrap();
        HistogramData::from_hdr("rtt", Unit::Nanoseconds, &h)
    }

    fn record(
        seq: u32,
        variant: &str,
        streams: i64,
        h: HistogramData,
        failed: bool,
    ) -> MeasurementRecord {
        let mut p = Params::default();
        p.0.insert("proto".into(), ParamValue::Str("udp".into()));
        p.0.insert("size".into(), ParamValue::Int(64));
        p.0.insert("load_streams".into(), ParamValue::Int(streams));
        p.0.insert("duration".into(), ParamValue::Float(2.0));
        p.0.insert("client_cpu".into(), ParamValue::Int(-1));
        let mut metrics = vec![Metric::new("lost", 0.0, Unit::Count, Better::Lower)];
        for (name, v) in [
            ("rtt_p50_us", h.p50),
            ("rtt_p99_us", h.p99),
            ("rtt_p99_9_us", h.p999),
        ] {
            metrics.push(Metric::new(
                name,
                v / 1000.0,
                Unit::Microseconds,
                Better::Lower,
            ));
        }
        if streams > 0 {
            metrics.push(Metric::new(
                "load_mib_s",
                1500.0 + seq as f64,
                Unit::MibPerSecond,
                Better::Neither,
            ));
        }
        MeasurementRecord {
            seq,
            point: streams as u32,
            params: p,
            variant: variant.into(),
            rep: seq / 4,
            status: if failed {
                MeasurementStatus::Failed(
                    "netrr: the peer 10.0.0.1:5000 did not answer 4 udp requests in a row".into(),
                )
            } else {
                MeasurementStatus::Ok
            },
            started_at: 0.0,
            elapsed_s: 2.0,
            output: WorkloadOutput {
                metrics,
                histograms: if failed { vec![] } else { vec![h] },
                ..Default::default()
            },
            telemetry: vec![
                TelemetryRow::new("softirqs", "NET_RX", "", None, 40_000.0, Unit::Count),
                TelemetryRow::new("softirqs", "NET_TX", "", None, 20.0, Unit::Count),
            ],
            role: Default::default(),
            monitors: Vec::new(),
        }
    }

    fn records() -> Vec<MeasurementRecord> {
        vec![
            record(0, "loopback", 0, hist(9, 12, 80), false),
            record(1, "loopback", 3, hist(12, 40, 900), false),
            record(2, "veth", 0, hist(14, 18, 120), false),
            record(3, "veth", 3, hist(20, 90, 2500), false),
            record(4, "loopback", 0, hist(10, 13, 60), false),
            record(5, "loopback", 3, hist(13, 45, 700), false),
            record(6, "veth", 0, hist(14, 19, 100), false),
            record(7, "veth", 3, hist(0, 0, 0), true),
        ]
    }

    #[test]
    fn pools_repetitions_into_one_distribution() {
        let t = latency_table(&run(), &records());
        assert_eq!(t.sections.len(), 1);
        let rows = &t.sections[0].rows;
        let names: Vec<(&str, &str)> = rows
            .iter()
            .map(|r| (r.path.as_str(), r.load.as_str()))
            .collect();
        assert_eq!(
            names,
            [
                ("loopback", "no load"),
                ("loopback", "3 streams"),
                ("veth", "no load"),
                ("veth", "3 streams")
            ]
        );
        let lo = &rows[0];
        assert_eq!(lo.count, 2002);
        assert!(
            (lo.min - 9.0).abs() < 0.01 && (lo.max - 80.0).abs() < 0.1,
            "{lo:?}"
        );
        assert!(lo.min <= lo.p50 && lo.p50 <= lo.p99 && lo.p99 <= lo.p999 && lo.p999 <= lo.max);
        assert!(!lo.approximate);
        assert_eq!(lo.net_rx_per_s, Some(20_000.0));
        let veth_load = &rows[3];
        assert_eq!((veth_load.reps, veth_load.failed), (1, 1));
        assert_eq!(veth_load.load_mib_s, Some(1503.0));
        assert_eq!(t.fixed, "proto=udp size=64");
    }

    #[test]
    fn without_histograms_columns_come_from_summaries() {
        let mut ms = records();
        for m in &mut ms {
            for h in &mut m.output.histograms {
                h.encoded.clear();
            }
        }
        let t = latency_table(&run(), &ms);
        let lo = &t.sections[0].rows[0];
        assert!(lo.approximate);
        assert!(
            (lo.min - 9.0).abs() < 0.01 && (lo.max - 80.0).abs() < 0.1,
            "{lo:?}"
        );
        assert!(t.render(Format::Text).contains("* no histogram to pool"));
    }

    #[test]
    fn table_text() {
        insta::assert_snapshot!(
            "latency_table",
            latency_table(&run(), &records()).render(Format::Text)
        );
    }

    #[test]
    fn runs_compare_per_path_and_load() {
        let a = run();
        let mut b = run();
        b.id = 13;
        let ms = records();
        let tables = compare_latency_runs(&a, &ms, &b, &ms, &StatsConfig::default()).unwrap();
        assert_eq!(tables.len(), 3);
        assert_eq!(tables[1].metric, "rtt_p99_us");
        assert!(tables[0].rows.iter().all(|r| r.variant.is_some()));
    }
}
