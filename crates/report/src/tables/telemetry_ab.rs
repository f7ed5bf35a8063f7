//! Telemetry, B against A (seed 003, issue 34 item 8): the seed judged its patch by the
//! fill bandwidth *and* by `L1-dcache-load-misses` and `LLC-load-misses` before and after.
//! Beside a comparison of the headline figure, the telemetry a variant is meant to move
//! gets the same columns, row by row: medians per side, and the change B/A − 1 with its
//! interval from the headline's own estimator ([`perflab_stats::compare_paired`]):
//!
//! - the counters monitor's totals (an imported perf stat's counts too): every event and
//!   derived figure recorded for the whole measurement;
//! - on the measured CPUs (a pinned workload's `cpu`, a CPU pair's two): the interrupts
//!   handled, all and the numbered device rows, and the entries into idle states;
//! - the share of the buffers on huge pages (the workload's `huge_fraction`).
//!
//! Telemetry is described, not tested (README, METHODOLOGY): a row has a change and an
//! interval but no p-value and no verdict word, and says which repetitions it comes from,
//! the telemetry repetitions (they carried the monitors that disturb the workload and are
//! never results) or the headline ones. A series that is zero on both sides at every point
//! moved nothing and is left out, named under the table.

use perflab_core::record::{MeasurementRecord, MeasurementStatus::Ok};
use perflab_core::{Better, IrqSet, ParamRole, ParamRoles, Params, Unit};
use perflab_stats::{compare_paired, Sample, StatsConfig};
use serde::Serialize;

use crate::doc::{Block, Table};
use crate::fmt;
use crate::section::{Section, SectionId};
use crate::tables::compare::{ComparisonTable, Row, TableKind};

const COUNTERS: &str = "counters";
const INTERRUPTS: &str = "interrupts";
const CPUIDLE: &str = "cpuidle";
/// The workload's share of its buffers on huge pages (`perflab_core::Intent::HugePages`).
const HUGE_FRACTION: &str = "huge_fraction";

/// One telemetry series of a measurement.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Series {
    /// A counters total (no CPU): an event (`L1-dcache-load-misses`) or a derived figure
    /// (`ipc`, `LLC-load-misses:per_byte`).
    Counter { key: String },
    /// Every interrupt handled on `cpu`.
    Interrupts { cpu: u32 },
    /// The numbered (device) interrupts handled on `cpu`.
    DeviceInterrupts { cpu: u32 },
    /// Entries into any idle state on `cpu`.
    IdleEntries { cpu: u32 },
    /// The share of the workload's buffers on huge pages.
    HugePages,
}

impl Series {
    pub fn name(&self) -> String {
        match self {
            Series::Counter { key } => key.clone(),
            Series::Interrupts { cpu } => format!("interrupts on CPU {cpu}"),
            Series::DeviceInterrupts { cpu } => format!("device interrupts on CPU {cpu}"),
            Series::IdleEntries { cpu } => format!("idle entries on CPU {cpu}"),
            Series::HugePages => "share on huge pages".into(),
        }
    }

    /// Its value in `m`, where `m` recorded its source. A monitor leaves out zero deltas,
    /// so a CPU without an interrupt row in a measurement that recorded interrupts had
    /// none; a counter without a row was not counted, which is not a zero.
    fn value(&self, m: &MeasurementRecord) -> Option<(f64, Unit)> {
        let total = |source: &str, keep: &dyn Fn(&str, &str, Option<u32>) -> bool| {
            let mut rows = m.telemetry.iter().filter(|t| t.source == source).peekable();
            rows.peek()?;
            let sum = rows
                .filter(|t| keep(&t.key, &t.label, t.cpu))
                .map(|t| t.value)
                .sum();
            Some((sum, Unit::Count))
        };
        match self {
            Series::Counter { key } => m
                .telemetry
                .iter()
                .find(|t| t.source == COUNTERS && t.cpu.is_none() && t.key == *key)
                .map(|t| (t.value, t.unit)),
            Series::Interrupts { cpu } => total(INTERRUPTS, &|_, _, c| c == Some(*cpu)),
            Series::DeviceInterrupts { cpu } => total(INTERRUPTS, &|k, l, c| {
                c == Some(*cpu) && IrqSet::Devices.holds(k, l)
            }),
            Series::IdleEntries { cpu } => {
                total(CPUIDLE, &|k, _, c| c == Some(*cpu) && k.ends_with(":usage"))
            }
            Series::HugePages => m
                .output
                .metrics
                .iter()
                .find(|x| x.name == HUGE_FRACTION)
                .map(|x| (x.value, x.unit)),
        }
    }

    /// Whether `m` carries this series' source at all.
    fn recorded_in(&self, m: &MeasurementRecord) -> bool {
        self.value(m).is_some()
    }
}

/// Which repetitions a row's values come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reps {
    /// The telemetry repetitions: they carried the monitors that disturb the workload
    /// and are never results.
    Telemetry,
    /// The headline repetitions, the results themselves.
    Headline,
}

impl Reps {
    fn word(self) -> &'static str {
        match self {
            Reps::Telemetry => "telemetry",
            Reps::Headline => "headline",
        }
    }
}

/// One series at one compared point.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TelemetryAbRow {
    /// The comparison row's label (`all` for one point).
    pub point: String,
    pub series: Series,
    pub reps: Reps,
    pub unit: Unit,
    pub n_a: usize,
    pub n_b: usize,
    pub median_a: f64,
    pub median_b: f64,
    /// B/A − 1 in percent, by the headline's estimator; `None` when A's median is 0.
    pub change_pct: Option<f64>,
    /// Its interval in percent at `level`; `None` without a spread on both sides (fewer
    /// than 2 values on one, or all equal).
    pub interval_pct: Option<(f64, f64)>,
    pub level: f64,
}

/// Every series of every compared point, in the comparison's row order.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TelemetryAb {
    pub a_label: String,
    pub b_label: String,
    pub rows: Vec<TelemetryAbRow>,
    /// Series zero on both sides wherever recorded, left out: nothing moved.
    pub all_zero: Vec<String>,
}

/// The telemetry beside `table`; `None` when its sides recorded none of the series. `a`
/// and `b` are the records of run A and of run B (the one run's, twice, for variants).
pub fn telemetry_ab(
    table: &ComparisonTable,
    a: &[MeasurementRecord],
    b: &[MeasurementRecord],
    cfg: &StatsConfig,
) -> Option<TelemetryAb> {
    // Repetitions pair only where the variants were interleaved (not an import's).
    let paired = table.design == crate::tables::compare::design::Design::InterleavedWithinOneRun;
    let mut rows = Vec::new();
    let mut zero: Vec<String> = Vec::new();
    for row in &table.rows {
        let (side_a, side_b) = sides(table, row, a, b);
        for series in series_of(&table.param_roles, &row.params, &side_a, &side_b) {
            let Some((r, nothing)) = compare_series(row, series, (&side_a, &side_b), paired, cfg)
            else {
                continue;
            };
            if nothing {
                zero.push(r.series.name());
            } else {
                rows.push(r);
            }
        }
    }
    let mut all_zero: Vec<String> = Vec::new();
    for z in zero {
        if !all_zero.contains(&z) && !rows.iter().any(|r| r.series.name() == z) {
            all_zero.push(z);
        }
    }
    if rows.is_empty() && all_zero.is_empty() {
        return None;
    }
    Some(TelemetryAb {
        a_label: table.a_label.clone(),
        b_label: table.b_label.clone(),
        rows,
        all_zero,
    })
}

/// The records of each side of `row`.
fn sides<'a>(
    table: &ComparisonTable,
    row: &Row,
    a: &'a [MeasurementRecord],
    b: &'a [MeasurementRecord],
) -> (Vec<&'a MeasurementRecord>, Vec<&'a MeasurementRecord>) {
    let (va, vb) = match &table.kind {
        TableKind::Variants { base, other, .. } => (base.as_str(), other.as_str()),
        TableKind::Runs { .. } => {
            let v = row.variant.as_deref().unwrap_or_default();
            (v, v)
        }
    };
    let pick = |ms: &'a [MeasurementRecord], point: u32, variant: &str| {
        ms.iter()
            .filter(|m| m.point == point && m.variant == variant && m.status == Ok)
            .collect()
    };
    (pick(a, row.point_a, va), pick(b, row.point_b, vb))
}

/// The series either side recorded, in a reader's order: counters as first recorded,
/// then per measured CPU its interrupts and idle entries, then huge pages.
fn series_of(
    roles: &ParamRoles,
    params: &Params,
    a: &[&MeasurementRecord],
    b: &[&MeasurementRecord],
) -> Vec<Series> {
    let all = || a.iter().chain(b.iter());
    let mut out: Vec<Series> = Vec::new();
    for m in all() {
        for t in &m.telemetry {
            let wanted =
                t.source == COUNTERS && t.cpu.is_none() && !t.key.ends_with(":running_pct");
            let s = Series::Counter { key: t.key.clone() };
            if wanted && !out.contains(&s) {
                out.push(s);
            }
        }
    }
    // A pinned workload's variants move its CPU's interrupts (seed 003); a CPU pair's
    // move the idle states its two CPUs enter (seed 004).
    let (cpus, pair) = measured_cpus(roles, params);
    for cpu in cpus {
        let per_cpu = match pair {
            true => vec![Series::IdleEntries { cpu }],
            false => vec![
                Series::Interrupts { cpu },
                Series::DeviceInterrupts { cpu },
                Series::IdleEntries { cpu },
            ],
        };
        for s in per_cpu {
            if all().any(|m| s.recorded_in(m)) {
                out.push(s);
            }
        }
    }
    if all().any(|m| Series::HugePages.recorded_in(m)) {
        out.push(Series::HugePages);
    }
    out
}

/// The CPUs a point measured, and whether they are a pair: its CPU pair, or the one it
/// is pinned to (the one parameter with the role of a CPU, holding one).
fn measured_cpus(roles: &ParamRoles, params: &Params) -> (Vec<u32>, bool) {
    if let Some((x, y)) = roles.cpu_pair(params) {
        return (if x == y { vec![x] } else { vec![x, y] }, true);
    }
    let cpu = roles.single(ParamRole::Cpu).and_then(|n| params.get(n));
    let pinned = match cpu {
        Some(perflab_core::ParamValue::Int(c)) => u32::try_from(*c).ok().into_iter().collect(),
        _ => Vec::new(),
    };
    (pinned, false)
}

/// One series at one point: each side's values from the repetitions that recorded it
/// (the headline ones where they did, else the telemetry ones), compared as the headline
/// is: paired by repetition within one run, unpaired across runs. The flag: every value
/// on both sides is 0, nothing moved.
fn compare_series(
    row: &Row,
    series: Series,
    (a, b): (&[&MeasurementRecord], &[&MeasurementRecord]),
    paired: bool,
    cfg: &StatsConfig,
) -> Option<(TelemetryAbRow, bool)> {
    let (va, reps_a, unit) = values(&series, a)?;
    let (vb, reps_b, _) = values(&series, b)?;
    let reps = if reps_a == Reps::Telemetry || reps_b == Reps::Telemetry {
        Reps::Telemetry
    } else {
        Reps::Headline
    };
    let (sa, sb) = (
        Sample::new(va.iter().map(|(_, v)| *v).collect()).ok()?,
        Sample::new(vb.iter().map(|(_, v)| *v).collect()).ok()?,
    );
    let pairs: Vec<(usize, usize)> = if paired {
        va.iter()
            .enumerate()
            .filter_map(|(i, (rep, _))| vb.iter().position(|(r, _)| r == rep).map(|j| (i, j)))
            .collect()
    } else {
        Vec::new()
    };
    let c = compare_paired(&sa, &sb, &pairs, Better::Neither, cfg);
    let spread = sa.len() >= 2 && sb.len() >= 2 && c.decision.no_spread.is_none();
    let nothing = sa.max() == 0.0 && sb.max() == 0.0 && sa.min() == 0.0 && sb.min() == 0.0;
    let row = TelemetryAbRow {
        point: row.label.clone(),
        series,
        reps,
        unit,
        n_a: sa.len(),
        n_b: sb.len(),
        median_a: sa.median(),
        median_b: sb.median(),
        change_pct: c.change_pct.filter(|x| x.is_finite()),
        interval_pct: c
            .change_ci_pct
            .filter(|(lo, hi)| spread && lo.is_finite() && hi.is_finite()),
        level: c.decision.level,
    };
    Some((row, nothing))
}

/// One side's (repetition, value) pairs, the repetitions they are from, their unit.
type SideValues = (Vec<(u32, f64)>, Reps, Unit);

/// The (repetition, value) pairs of `series` on one side, from its headline repetitions
/// where any recorded it, else from its telemetry ones; `None` where none did.
fn values(series: &Series, side: &[&MeasurementRecord]) -> Option<SideValues> {
    let pick = |headline: bool| -> Vec<(u32, f64, Unit)> {
        side.iter()
            .filter(|m| m.is_headline() == headline)
            .filter_map(|m| series.value(m).map(|(v, u)| (m.rep, v, u)))
            .filter(|(_, v, _)| v.is_finite())
            .collect()
    };
    let (found, reps) = match pick(true) {
        h if !h.is_empty() => (h, Reps::Headline),
        _ => (pick(false), Reps::Telemetry),
    };
    let unit = found.first()?.2;
    Some((
        found.into_iter().map(|(r, v, _)| (r, v)).collect(),
        reps,
        unit,
    ))
}

impl TelemetryAb {
    /// What `report` prints under a comparison: the table where it compares one point
    /// (seed 003's shape), else one line naming the command that prints it, so a scan
    /// or a map of CPU pairs keeps a report a reviewer reads in a minute.
    pub fn report_blocks(&self, table: &ComparisonTable) -> Vec<Block> {
        if table.rows.len() <= 1 {
            return self.to_blocks();
        }
        let command = match &table.kind {
            TableKind::Variants { run, base, other } => {
                format!("perflab compare {run} --variants {base},{other} --section telemetry")
            }
            TableKind::Runs { a, b } => format!("perflab compare {a} {b} --section telemetry"),
        };
        vec![Block::Note(format!(
            "Telemetry, {} against {} ({} rows over {} points; described, not tested): {command}",
            self.b_label,
            self.a_label,
            self.rows.len(),
            table.rows.len()
        ))]
    }

    /// The table as blocks, for every format: a caption, the rows, and a legend that
    /// says what is and is not claimed.
    pub fn to_blocks(&self) -> Vec<Block> {
        let level = self.rows.first().map_or(0.95, |r| r.level);
        // One point (`all`) names nothing: the column is left out.
        let points = self.rows.iter().any(|r| r.point != self.rows[0].point);
        let mut head: Vec<String> = if points { vec!["point".into()] } else { vec![] };
        head.extend(
            [
                "telemetry",
                "reps",
                "n A",
                "n B",
                "median A",
                "median B",
                "change",
            ]
            .map(String::from),
        );
        head.push(format!("{:.0}% CI", level * 100.0));
        let rows = self.rows.iter().map(|r| row_cells(r, points)).collect();
        let left = if points { vec![0, 1, 2] } else { vec![0, 1] };
        let mut blocks = vec![Block::Caption(format!(
            "Telemetry, {} (B) against {} (A): described, not tested (no verdict)",
            self.b_label, self.a_label
        ))];
        if !self.rows.is_empty() {
            blocks.push(Block::Table(Table::new(head, rows, left)));
        }
        let mut legend = vec![
            "reps: telemetry = the telemetry repetitions (they carried the monitors that \
             disturb the workload; never results), headline = the results; change = B/A - 1 \
             by the headline's estimator, with its interval (n/a: fewer than 2 values or no \
             spread on a side)"
                .to_string(),
        ];
        if !self.all_zero.is_empty() {
            legend.push(format!(
                "zero on both sides, left out: {}",
                self.all_zero.join(", ")
            ));
        }
        blocks.push(Block::Note(legend.join("\n")));
        blocks
    }
}

/// A row's cells: counts as whole numbers, other units as measured values.
fn row_cells(r: &TelemetryAbRow, point: bool) -> Vec<String> {
    let show = |x: f64| match r.unit {
        Unit::Count => fmt::count(x),
        _ => fmt::value(x),
    };
    let mut cells = if point { vec![r.point.clone()] } else { vec![] };
    cells.extend([
        r.series.name(),
        r.reps.word().to_string(),
        r.n_a.to_string(),
        r.n_b.to_string(),
        show(r.median_a),
        show(r.median_b),
        r.change_pct.map_or("n/a".into(), fmt::pct),
        r.interval_pct.map_or("n/a".into(), fmt::pct_ci),
    ]);
    cells
}

impl Section for TelemetryAb {
    fn id(&self) -> SectionId {
        SectionId::Telemetry
    }
    fn title(&self) -> String {
        format!("Telemetry, {} against {}", self.b_label, self.a_label)
    }
    fn blocks(&self) -> Vec<Block> {
        self.to_blocks()
    }
    fn json(&self) -> Option<serde_json::Value> {
        serde_json::to_value(self).ok()
    }
}
