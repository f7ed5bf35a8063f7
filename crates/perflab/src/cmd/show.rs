//! `perflab show`: one run — fingerprint, plan status, results — or one CPU pair's
//! drill-down; and the sections `run` prints when a run finishes (`run_view`).

use std::path::Path;

use perflab_report as report;
use perflab_report::{Format, Section};
use perflab_stats::{Buckets, StatsConfig};
use perflab_store::{MeasurementRecord, RunInfo};

use crate::cli::{Global, ShowArgs};
use crate::cmd::{common, envelope};
use crate::exit::input;

pub fn run(g: &Global, a: ShowArgs) -> anyhow::Result<i32> {
    report::section::check_ids(&a.section, report::section::SHOW).map_err(input)?;
    if a.format.is_json() && (a.pair.is_some() || a.threads.is_some()) {
        // Said, not ignored: a script asking for JSON must not get text.
        return Err(input(
            "--format json shows the whole run; --pair and --threads print text only",
        ));
    }
    let store = common::read_store(g)?;
    let info = store.run(a.run)?;
    let ms = store.measurements(a.run)?;
    if let Some(pair) = &a.pair {
        let (x, y) = common::parse_pair("--pair", pair)?;
        println!("{}", pair_text(&info, &ms, x, y)?);
        return Ok(0);
    }
    let cfg = StatsConfig::default();
    let summary = report::summarize_run(&info, &ms, None, &cfg)?;
    if a.format.is_json() {
        // The text's sections, every span comparison included.
        let mut sections: Vec<Box<dyn Section>> = vec![Box::new(summary)];
        sections.extend(run_sections(&info, &ms));
        sections.extend(span_sections(&info, &ms, usize::MAX).sections);
        let doc = ShowDoc {
            run: &info,
            sections: report::section::json(&select(&sections, &a.section)?, &["spans"]),
            adaptive: perflab_lab::adaptive::report(&info.spec, &ms),
        };
        envelope::print(&doc)?;
        return Ok(0);
    }
    if let Some(seq) = a.threads {
        let m = ms
            .iter()
            .find(|m| m.seq == seq)
            .ok_or_else(|| input(format!("run {} has no measurement {seq}", info.id)))?;
        print!("{}", report::render_threads(m));
        return Ok(0);
    }
    print_header(&info);
    if info.status == perflab_store::RunStatus::Interrupted {
        // A killed run too: its claim went with its process (see `Store::run`).
        println!(
            "interrupted: resume with: perflab run --resume {}{}",
            info.id,
            crate::cmd::hint::db_flag(g)
        );
    }
    println!();
    let mut sections: Vec<Box<dyn Section>> = vec![Box::new(summary)];
    sections.extend(run_sections(&info, &ms));
    let spans = span_sections(&info, &ms, report::spans_ab::MAX_COMPARISONS);
    let more = spans.more;
    sections.extend(spans.sections);
    let sections = select(&sections, &a.section)?;
    print!("{}", report::section::render(&sections, Format::Text));
    if let Some(more) = more.filter(|_| sections.iter().any(|s| s.id() == "spans")) {
        println!("\n{more}");
    }
    Ok(0)
}

/// `show --format json`: the run as stored, its sections by id, and what an adaptive run
/// reached (`$defs/show` in docs/schema/perflab.json).
#[derive(serde::Serialize)]
struct ShowDoc<'a> {
    run: &'a RunInfo,
    #[serde(flatten)]
    sections: serde_json::Map<String, serde_json::Value>,
    adaptive: Option<perflab_lab::adaptive::AdaptiveReport>,
}

/// The sections whose id `wanted` names (all when it is empty); an unknown id is bad
/// input, named with the known ones.
pub fn select<'a>(
    sections: &'a [Box<dyn Section>],
    wanted: &[String],
) -> anyhow::Result<Vec<&'a dyn Section>> {
    let all: Vec<&dyn Section> = sections.iter().map(|s| s.as_ref()).collect();
    report::section::select(all, wanted, report::section::SHOW).map_err(input)
}

/// What a run shows beside its summary or comparison, in this order: the threads'
/// aggregate against summed bandwidth and the lock waits of threaded transfers, the
/// counters, netrr's seed-001 table, and the latency percentiles of ctxsw and netrr.
fn run_sections(info: &RunInfo, ms: &[MeasurementRecord]) -> Vec<Box<dyn Section>> {
    let mut out: Vec<Box<dyn Section>> = Vec::new();
    out.extend(threads_sections(info, ms));
    if let Some(t) = report::irq_cpu_table(info, ms) {
        out.push(Box::new(t));
    }
    if let Some(t) = report::counter_table(info, ms) {
        out.push(Box::new(t));
    }
    out.extend(latency_section(info, ms));
    if let Some(t) = report::latency_percentiles(&[(info, ms)]) {
        out.push(Box::new(t));
    }
    out
}

/// The aggregate-against-summed table, when the run's measurements carry the verdict of
/// threaded transfers (xfer's channel model, dmatest), and the lock-wait percentiles and
/// per-thread totals (seed 000's spintime).
pub fn threads_sections(info: &RunInfo, ms: &[MeasurementRecord]) -> Vec<Box<dyn Section>> {
    let mut out: Vec<Box<dyn Section>> = Vec::new();
    if let Some(t) = report::parallel_table(info, ms) {
        out.push(Box::new(t));
    }
    if let Some(t) = report::lock_wait_table(&[(info, ms)]) {
        out.push(Box::new(t));
    }
    out
}

/// The seed-001 table (one row per path and load) for runs of netrr.
pub fn latency_section(info: &RunInfo, ms: &[MeasurementRecord]) -> Option<Box<dyn Section>> {
    report::hints::has_latency_table(&info.workload)
        .then(|| Box::new(report::latency_table(info, ms)) as _)
}

/// Where the time goes, when telemetry repetitions traced spans: the breakdown per point
/// and variant, seed 001's layout for round-trip runs, and the A/B comparisons; `more`
/// says how many comparisons were left out.
pub struct Spans {
    pub sections: Vec<Box<dyn Section>>,
    pub more: Option<String>,
}

/// The span sections, at most `cap` A/B comparisons among them.
pub fn span_sections(info: &RunInfo, ms: &[MeasurementRecord], cap: usize) -> Spans {
    let cfg = StatsConfig::default();
    let mut out = Spans {
        sections: Vec::new(),
        more: None,
    };
    let Some(t) = report::span_table(info, ms, &cfg) else {
        return out;
    };
    out.sections.push(Box::new(t));
    if let Some(seed) = report::seed_span_table(info, ms) {
        out.sections.push(Box::new(seed));
    }
    let (comparisons, total) = report::span_comparisons(info, ms, &cfg, cap);
    if total > comparisons.len() {
        out.more = Some(format!(
            "{} more span comparisons: `perflab show {} --format json` has them all",
            total - comparisons.len(),
            info.id
        ));
    }
    for c in comparisons {
        out.sections.push(Box::new(c));
    }
    out
}

/// The drill-down of one pair: against the baseline where two variants were measured,
/// else the measured variant alone with the reason the other is missing.
fn pair_text(info: &RunInfo, ms: &[MeasurementRecord], a: u32, b: u32) -> anyhow::Result<String> {
    let variants = report::measured_variants(ms);
    match baseline_and_other(info, &variants) {
        Some((base, other)) => {
            let table =
                report::compare_variants(info, ms, &base, &other, None, &StatsConfig::default())?;
            Ok(report::render_pair(info, ms, &table, a, b)?)
        }
        None => {
            let v = variants
                .first()
                .ok_or_else(|| input(format!("run {} has no measurements yet", info.id)))?;
            Ok(report::render_single_pair(info, ms, v, a, b)?)
        }
    }
}

/// The study's baseline and the first other measured variant.
pub fn baseline_and_other(info: &RunInfo, measured: &[String]) -> Option<(String, String)> {
    let base = report::baseline_variant(info, measured)?;
    let other = measured.iter().find(|m| **m != base)?.clone();
    Some((base, other))
}

fn print_header(info: &RunInfo) {
    let f = &info.fingerprint;
    let s = |v: &Option<String>| v.as_deref().unwrap_or("?").to_string();
    // Written as the stored JSON wrote a missing count.
    let n = |v: Option<u64>| v.map_or("null".to_string(), |x| x.to_string());
    println!(
        "run {}  {}  study {}  workload {}  {}  {}/{} measured, {} failed{}",
        info.id,
        common::utc(info.created_at),
        info.study,
        info.workload,
        info.status.as_str(),
        info.done,
        info.planned,
        info.failed,
        info.label
            .as_ref()
            .map(|l| format!("  label {l:?}"))
            .unwrap_or_default()
    );
    println!(
        "host {}  kernel {}  {}",
        s(&f.hostname),
        s(&f.kernel),
        s(&f.cpu_model)
    );
    println!(
        "cpus {} ({} cores x {} threads)  idle {} / {}  cpufreq {}  isolated {}  thp {}",
        s(&f.online_cpus),
        n(f.cores),
        n(f.threads_per_core),
        s(&f.idle_driver),
        s(&f.idle_governor),
        s(&f.cpufreq_governor),
        s(&f.isolated_cpus),
        s(&f.thp)
    );
    println!("cmdline {}", s(&f.cmdline));
    if let Some(root) = &f.sysroot {
        println!("system files read from the tree at {root}, not from this machine");
    }
    for u in &info.unavailable {
        println!("variant {} unavailable: {}", u.variant, u.reason);
    }
    for (name, why) in &info.spec.unavailable_monitors {
        println!("monitor {name} unavailable: {why}");
    }
}

/// What the end of a run works from, for its view (`run_view`).
pub struct AfterRun {
    /// The variants measured, in the order first measured.
    pub measured: Vec<String>,
    /// The points are CPU pairs: a regression distribution and drill-down apply.
    pub pairs: bool,
    pub buckets: Buckets,
    /// The study asks for the drill-down directory, or `--out` names one.
    pub wants_drilldown: bool,
    /// `--out`, else `drilldown/<study>-<run>` beside the database (`db_file`).
    pub dir: std::path::PathBuf,
}

impl AfterRun {
    pub fn of(
        info: &perflab_store::RunInfo,
        ms: &[perflab_store::MeasurementRecord],
        out: Option<&Path>,
        db_file: Option<&Path>,
    ) -> anyhow::Result<Self> {
        let buckets = match &info.spec.compare.buckets {
            Some(edges) => Buckets::new(edges.clone())?,
            None => Buckets::default(),
        };
        Ok(Self {
            measured: report::measured_variants(ms),
            pairs: ms
                .iter()
                .any(|m| m.params.get("cpu_a").is_some() && m.params.get("cpu_b").is_some()),
            buckets,
            wants_drilldown: info.spec.compare.drilldown || out.is_some(),
            dir: out.map(Path::to_path_buf).unwrap_or_else(|| {
                crate::cmd::drilldown_dir::default_dir(&info.study, info.id, db_file)
            }),
        })
    }
}
