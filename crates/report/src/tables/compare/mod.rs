//! Comparison tables: two variants of one run, or two runs matched point by point.
//!
//! Only successful measurements are numbers; failed ones are counted and named. A point
//! measured on one side only is listed as unmatched, never dropped silently.
//!
//! Every table says what it rests on ([`Design`]): variants of one run were interleaved,
//! two runs were not (and carry a [`DriftGuard`]). The rows of one table are one family:
//! their p-values are adjusted together (Benjamini-Hochberg) and the verdicts drawn from
//! the adjusted ones.

pub mod changed;
pub mod design;
pub(crate) mod family;
pub(crate) mod text;
pub(crate) mod verdict;
#[cfg(test)]
mod void_tests;

use std::collections::HashMap;

use perflab_core::record::{MeasurementRecord, RunId, RunInfo};
use perflab_core::{Better, ParamRoles, Params, Unit};
use perflab_stats::{
    adjust_family, compare_paired, Comparison, FamilyAdjustment, Sample, StatsConfig,
};
use serde::Serialize;

use crate::error::ReportError;
use crate::select::{choose_metric, describe_each, Labeler, SideValues};
use crate::tables::compare::design::{Design, DriftGuard};

/// What is compared with what.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum TableKind {
    /// Variant `other` (B) against `base` (A) within one run.
    Variants {
        run: RunId,
        base: String,
        other: String,
    },
    /// Run `b` against run `a`, matched by identical parameters and variant.
    Runs { a: RunId, b: RunId },
}

/// One parameter point (and, for run comparisons, one variant) compared.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    /// `4-24` for CPU pairs, else the parameters that vary across rows.
    pub label: String,
    pub pair: Option<(u32, u32)>,
    pub params: Params,
    /// The variant, for run comparisons.
    pub variant: Option<String>,
    /// The point index in run A and in run B (equal for variant comparisons).
    pub point_a: u32,
    pub point_b: u32,
    pub failed_a: u32,
    pub failed_b: u32,
    pub cmp: Comparison,
}

/// A point that could not be compared, and why.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Unmatched {
    pub label: String,
    /// The point's parameters, so a size scan can place it in its table.
    pub params: Params,
    pub variant: Option<String>,
    pub reason: String,
    /// The median of each side's successful values, where it has any.
    pub median_a: Option<f64>,
    pub median_b: Option<f64>,
}

/// A variant a run could not measure on its machine.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct UnavailableNote {
    pub run: RunId,
    pub variant: String,
    pub reason: String,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ComparisonTable {
    #[serde(flatten)]
    pub kind: TableKind,
    /// Interleaved within one run, or separate runs.
    pub design: Design,
    /// For separate runs: when each measured, and whether their timing probes moved.
    pub drift: Option<DriftGuard>,
    /// How the rows' p-values were adjusted together; each row keeps its raw `p_value`
    /// next to its `p_adjusted`.
    pub p_adjustment: FamilyAdjustment,
    pub metric: String,
    pub unit: Unit,
    pub better: Better,
    /// How A and B are named in headers: the variant ("poll-only"), or the run's label
    /// ("kernel 6.1"), falling back to "run 3" (see [`run_label`]).
    pub a_label: String,
    pub b_label: String,
    pub config: StatsConfig,
    pub rows: Vec<Row>,
    pub unmatched: Vec<Unmatched>,
    /// Failed measurements over the whole table, per side.
    pub failed_a: u32,
    pub failed_b: u32,
    pub unavailable: Vec<UnavailableNote>,
    /// Table-wide remarks (failures, missing metric values).
    pub notes: Vec<String>,
    /// Parameters the two variants set differently (e.g. `backing`): they name the sides,
    /// not the points.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub variant_params: Vec<String>,
    /// The roles of the rows' parameters (which is a scan's size axis), for the views.
    #[serde(skip)]
    pub param_roles: ParamRoles,
}

impl ComparisonTable {
    pub fn to_json(&self) -> Result<String, ReportError> {
        Ok(serde_json::to_string_pretty(self)?)
    }

    /// The row of CPU pair `a`-`b`.
    pub fn pair_row(&self, a: u32, b: u32) -> Option<&Row> {
        self.rows.iter().find(|r| r.pair == Some((a, b)))
    }
}

/// Variant `other` (B) against `base` (A) at every point of one run.
pub fn compare_variants(
    run: &RunInfo,
    ms: &[MeasurementRecord],
    base: &str,
    other: &str,
    metric: Option<&str>,
    cfg: &StatsConfig,
) -> Result<ComparisonTable, ReportError> {
    for v in [base, other] {
        if !ms.iter().any(|m| m.variant == v) {
            return Err(no_such_variant(run, ms, v));
        }
    }
    let chosen = choose_metric(run, ms, metric)?;
    let points = VariantPoints::gather(ms, base, other);
    let mut b = Builder::new(cfg, chosen.better);
    b.roles = crate::hints::param_roles(run);
    // The variants of one run were interleaved (A1 B1, A2 B2, ...): repetition r of A and
    // of B ran side by side, so they pair. An imported run's were not (hyperfine times
    // every run of A before B's): its repetitions do not pair, as two runs' do not.
    let imported = run.spec.imported.is_some();
    b.paired = !imported;
    // A run measured until decided spent alpha over its looks: each row is decided with
    // the share of the look its pairs reached, as the runner judged it.
    b.schedule = run.spec.until_decided.map(|u| {
        perflab_stats::decide::sequential::Schedule::new(u.planned as usize, u.cap as usize)
    });
    // Points where what `other`'s settings are meant to move did not move: such a row
    // tested nothing and reads `void`, with the reason, never a verdict or advice.
    b.void = perflab_core::catalog::void_comparisons(&run.spec, ms)
        .into_iter()
        .filter(|v| v.baseline == base && v.variant == other)
        .map(|v| (v.point, None, v.reason))
        .collect();
    points.add_rows(&mut b, &chosen.name);
    let mut table = b.finish(
        TableKind::Variants {
            run: run.id,
            base: base.into(),
            other: other.into(),
        },
        None,
        chosen,
        (base.to_string(), other.to_string()),
        unavailable_of(&[run]),
    );
    if imported {
        table.design = Design::Imported;
    }
    table.variant_params = points.variant_params();
    table
        .notes
        .extend(crate::tables::coverage::monitor_lines(ms));
    Ok(table)
}

/// The points two variants of one run were measured at, each with its records.
struct VariantPoints<'a> {
    sides: (&'a str, &'a str),
    /// The point indices, ascending, with the parameters that name each.
    points: Vec<(u32, Params)>,
    /// Each point's records (in seq order), gathered once: a pass over the run per point
    /// made 1,000 points × 20,000 records.
    by_point: HashMap<u32, Vec<&'a MeasurementRecord>>,
}

impl<'a> VariantPoints<'a> {
    fn gather(ms: &'a [MeasurementRecord], base: &'a str, other: &'a str) -> Self {
        let mut by_point: HashMap<u32, Vec<&MeasurementRecord>> = HashMap::new();
        for m in ms {
            by_point.entry(m.point).or_default().push(m);
        }
        let mut indices: Vec<u32> = ms
            .iter()
            .filter(|m| m.variant == base || m.variant == other)
            .map(|m| m.point)
            .collect();
        indices.sort_unstable();
        indices.dedup();
        let mut out = Self {
            sides: (base, other),
            points: Vec::new(),
            by_point,
        };
        out.points = indices.iter().map(|&p| (p, out.point_params(p))).collect();
        out
    }

    fn at(&self, point: u32) -> &[&'a MeasurementRecord] {
        self.by_point.get(&point).map_or(&[][..], Vec::as_slice)
    }

    /// A variant may override parameters; the baseline's are the point's name.
    fn point_params(&self, point: u32) -> Params {
        self.at(point)
            .iter()
            .min_by_key(|m| (m.variant != self.sides.0, m.seq))
            .map(|m| m.params.clone())
            .unwrap_or_default()
    }

    /// A row per point, from the values of `metric`.
    fn add_rows(&self, b: &mut Builder, metric: &str) {
        let labeler = Labeler::new(&b.roles, self.points.iter().map(|(_, p)| p));
        let (base, other) = self.sides;
        for (point, params) in &self.points {
            let side = |v: &str| {
                SideValues::gather(
                    self.at(*point).iter().copied().filter(|m| m.variant == v),
                    metric,
                )
            };
            b.add(
                labeler.label(params),
                params.clone(),
                None,
                (*point, *point),
                (side(base), side(other)),
                (base, other),
            );
        }
    }

    /// Parameters the two variants set differently at some point, sorted.
    fn variant_params(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for (point, _) in &self.points {
            let side = |v: &str| self.at(*point).iter().find(|m| m.variant == v);
            if let (Some(x), Some(y)) = (side(self.sides.0), side(self.sides.1)) {
                for (k, val) in &x.params.0 {
                    if y.params.get(k) != Some(val) && !out.contains(k) {
                        out.push(k.clone());
                    }
                }
            }
        }
        out.sort();
        out
    }
}

/// Run `b` against run `a`: every (parameters, variant) of either run, matched exactly.
pub fn compare_runs(
    a_run: &RunInfo,
    a_ms: &[MeasurementRecord],
    b_run: &RunInfo,
    b_ms: &[MeasurementRecord],
    metric: Option<&str>,
    cfg: &StatsConfig,
) -> Result<ComparisonTable, ReportError> {
    let chosen = choose_metric(a_run, a_ms, metric)?;
    // The other run must have the metric too, or every row would be empty.
    if b_ms.iter().any(crate::select::is_ok) {
        choose_metric(b_run, b_ms, Some(&chosen.name))?;
    }
    let names = run_labels(a_run, b_run);
    let mut b = Builder::new(cfg, chosen.better);
    b.roles = crate::hints::param_roles(a_run).merged(&crate::hints::param_roles(b_run));
    // Rows where a variant's settings differ between the runs and what they are meant to
    // move did not move tested nothing, as within one run: `void`, with the reason.
    b.void = perflab_core::catalog::runs_void(
        (&names.0, &a_run.spec, a_ms),
        (&names.1, &b_run.spec, b_ms),
    )
    .into_iter()
    .map(|(point, variant, why)| (point, Some(variant), why))
    .collect();
    add_run_rows(&mut b, (a_ms, b_ms), &chosen.name, &names);
    let drift = DriftGuard::new((a_run, a_ms), (b_run, b_ms), cfg.noise_pct);
    let mut table = b.finish(
        TableKind::Runs {
            a: a_run.id,
            b: b_run.id,
        },
        Some(drift),
        chosen,
        names,
        unavailable_of(&[a_run, b_run]),
    );
    for (run, ms) in [(a_run, a_ms), (b_run, b_ms)] {
        let lines = crate::tables::coverage::monitor_lines(ms);
        table
            .notes
            .extend(lines.into_iter().map(|l| format!("run {}: {l}", run.id)));
    }
    Ok(table)
}

/// What two runs are matched by: a record's parameters and variant.
type RunKey = (String, String);

/// A run's records with each one's parameters rendered once ([`describe_each`]).
type Described<'a> = (&'a [MeasurementRecord], Vec<String>);

fn run_key(d: &str, m: &MeasurementRecord) -> RunKey {
    (d.to_string(), m.variant.clone())
}

/// Every key of the two runs, in the order run A measured them, then what only run B
/// has, each with its first record.
fn run_keys<'a>(
    a: &'a Described<'a>,
    b: &'a Described<'a>,
) -> Vec<(RunKey, &'a MeasurementRecord)> {
    let in_order = |(ms, described): &'a Described<'a>| {
        let mut sorted: Vec<(&'a str, &'a MeasurementRecord)> = described
            .iter()
            .map(String::as_str)
            .zip(ms.iter())
            .collect();
        sorted.sort_by_key(|(_, m)| (m.point, m.seq));
        sorted
    };
    let mut seen: std::collections::HashSet<(&str, &str)> = Default::default();
    let mut out = Vec::new();
    for (d, m) in in_order(a).into_iter().chain(in_order(b)) {
        if seen.insert((d, m.variant.as_str())) {
            out.push((run_key(d, m), m));
        }
    }
    out
}

/// Each record's index by key, grouped once: matching every key against every record
/// re-renders the parameters keys × records times (1.5 s of 4.6 s for two
/// 10,000-measurement runs).
fn group_by_key((ms, described): &Described<'_>) -> HashMap<RunKey, Vec<usize>> {
    let mut g: HashMap<RunKey, Vec<usize>> = HashMap::new();
    for (i, (m, d)) in ms.iter().zip(described).enumerate() {
        g.entry(run_key(d, m)).or_default().push(i);
    }
    g
}

/// A row per key of the two runs, from the values of `metric`; `names` name the sides.
fn add_run_rows(
    b: &mut Builder,
    (a_ms, b_ms): (&[MeasurementRecord], &[MeasurementRecord]),
    metric: &str,
    names: &(String, String),
) {
    let a: Described = (a_ms, describe_each(a_ms));
    let b_: Described = (b_ms, describe_each(b_ms));
    let keys = run_keys(&a, &b_);
    let labeler = Labeler::new(&b.roles, keys.iter().map(|(_, m)| &m.params));
    let (groups_a, groups_b) = (group_by_key(&a), group_by_key(&b_));
    let none: Vec<usize> = Vec::new();
    for (k, first) in &keys {
        let ia = groups_a.get(k).unwrap_or(&none);
        let ib = groups_b.get(k).unwrap_or(&none);
        let point_a = ia.first().map_or(first.point, |&i| a_ms[i].point);
        let point_b = ib.first().map_or(first.point, |&i| b_ms[i].point);
        let sides = (
            SideValues::gather(ia.iter().map(|&i| &a_ms[i]), metric),
            SideValues::gather(ib.iter().map(|&i| &b_ms[i]), metric),
        );
        b.add(
            labeler.label(&first.params),
            first.params.clone(),
            Some(k.1.clone()),
            (point_a, point_b),
            sides,
            (&names.0, &names.1),
        );
    }
}

/// How a run is named in a table: its label ("kernel 6.1"), or `run N` when it has none.
pub fn run_label(run: &RunInfo) -> String {
    match run.label.as_deref().map(str::trim) {
        Some(l) if !l.is_empty() => l.to_string(),
        _ => format!("run {}", run.id),
    }
}

/// The names of A and B; two runs with the same label get their numbers added, or the
/// table could not tell its columns apart.
fn run_labels(a: &RunInfo, b: &RunInfo) -> (String, String) {
    let (la, lb) = (run_label(a), run_label(b));
    if la == lb && a.id != b.id {
        (
            format!("{la} (run {})", a.id),
            format!("{lb} (run {})", b.id),
        )
    } else {
        (la, lb)
    }
}

pub(crate) fn no_such_variant(run: &RunInfo, ms: &[MeasurementRecord], v: &str) -> ReportError {
    let mut known: Vec<&str> = ms.iter().map(|m| m.variant.as_str()).collect();
    known.sort_unstable();
    known.dedup();
    let why = run
        .unavailable
        .iter()
        .find(|u| u.variant == v)
        .map(|u| format!(": unavailable on that machine: {}", u.reason))
        .unwrap_or_default();
    ReportError::NoSuchVariant {
        run: run.id,
        variant: v.to_string(),
        why,
        known: if known.is_empty() {
            "none".into()
        } else {
            known.join(", ")
        },
    }
}

pub(crate) fn unavailable_of(runs: &[&RunInfo]) -> Vec<UnavailableNote> {
    runs.iter()
        .flat_map(|r| {
            r.unavailable.iter().map(|u| UnavailableNote {
                run: r.id,
                variant: u.variant.clone(),
                reason: u.reason.clone(),
            })
        })
        .collect()
}

/// Accumulates rows and the table-wide counts while points are visited.
struct Builder<'c> {
    cfg: &'c StatsConfig,
    better: Better,
    rows: Vec<Row>,
    unmatched: Vec<Unmatched>,
    failed: LeftOut,
    missing: u32,
    ineffective: LeftOut,
    disturbed: LeftOut,
    /// Pair the sides' repetitions by number (variants of one interleaved run).
    paired: bool,
    /// The looks of a run measured until decided.
    schedule: Option<perflab_stats::decide::sequential::Schedule>,
    /// Points (in A) whose comparison tested nothing, with the reason (`void`); of two
    /// runs, each with the variant whose row it is (`None`: every row at the point).
    void: Vec<(u32, Option<String>, String)>,
    /// The point (in A) and variant of each `unmatched`, in order.
    /// Per unmatched row, its point in run A, its variant, and why it has no value in
    /// counts only (what a void row says after its void reason, which names the cause).
    unmatched_points: Vec<(u32, Option<String>, String)>,
    /// The roles of the compared runs' parameters (which are a CPU pair).
    roles: ParamRoles,
}

/// What the note on disturbed measurements says: they are left out, and where the sides
/// lost different numbers of them, that what is left was measured under different
/// conditions on each side (issue 32: a neighbour's load read as a result).
fn disturbed_what((a, b): (u32, u32)) -> String {
    let mut what = "measurements ran while other work took more of their CPUs than the run \
                    allows (10% unless it says otherwise); they are not counted and no verdict \
                    uses them"
        .to_string();
    if a != b {
        what.push_str(
            " (the sides were disturbed differently, so what is left of each was measured \
             under different conditions)",
        );
    }
    what
}

/// Measurements of each side a table leaves out for one reason, and the first message.
#[derive(Default)]
struct LeftOut {
    count: (u32, u32),
    first: Option<String>,
}

impl LeftOut {
    fn add(&mut self, a: (u32, &Option<String>), b: (u32, &Option<String>)) {
        self.count.0 += a.0;
        self.count.1 += b.0;
        if self.first.is_none() {
            self.first = a.1.clone().or_else(|| b.1.clone());
        }
    }

    /// `{lead}{n} {what} (A: a, B: b); first: …`, or nothing when none was left out.
    fn note(&self, lead: &str, what: &str, labels: &(String, String)) -> Option<String> {
        let (a, b) = self.count;
        (a + b > 0).then(|| {
            let first = self
                .first
                .as_ref()
                .map(|e| format!("; first: {e}"))
                .unwrap_or_default();
            format!(
                "{lead}{} {what} ({}: {a}, {}: {b}){first}",
                a + b,
                labels.0,
                labels.1
            )
        })
    }
}

impl<'c> Builder<'c> {
    fn new(cfg: &'c StatsConfig, better: Better) -> Self {
        Self {
            cfg,
            better,
            rows: Vec::new(),
            unmatched: Vec::new(),
            failed: LeftOut::default(),
            missing: 0,
            ineffective: LeftOut::default(),
            disturbed: LeftOut::default(),
            paired: false,
            schedule: None,
            void: Vec::new(),
            unmatched_points: Vec::new(),
            roles: ParamRoles::default(),
        }
    }

    fn add(
        &mut self,
        label: String,
        params: Params,
        variant: Option<String>,
        points: (u32, u32),
        sides: (SideValues, SideValues),
        names: (&str, &str),
    ) {
        let (a, b) = sides;
        self.count_left_out(&a, &b);
        let pairs = if self.paired {
            pair_by_rep(&a.reps, &b.reps)
        } else {
            Vec::new()
        };
        let samples = (Sample::new(a.values.clone()), Sample::new(b.values.clone()));
        match samples {
            (Ok(sa), Ok(sb)) => self.rows.push(Row {
                pair: self.roles.cpu_pair(&params),
                label,
                params,
                variant,
                point_a: points.0,
                point_b: points.1,
                failed_a: a.failed,
                failed_b: b.failed,
                cmp: {
                    let mut c = compare_paired(&sa, &sb, &pairs, self.better, self.cfg);
                    if let Some(s) = self.schedule {
                        c.decision.weight = s.weight(pairs.len().max(sa.len().min(sb.len())));
                    }
                    c
                },
            }),
            _ => {
                let counts = unmatched_reason((&a, names.0), (&b, names.1), false);
                self.unmatched_points
                    .push((points.0, variant.clone(), counts));
                self.unmatched.push(Unmatched {
                    label,
                    params,
                    variant,
                    reason: unmatched_reason((&a, names.0), (&b, names.1), true),
                    median_a: samples.0.ok().map(|s| s.median()),
                    median_b: samples.1.ok().map(|s| s.median()),
                });
            }
        }
    }

    /// Adds what each side of a point leaves out (failed, without the metric,
    /// ineffective, disturbed) to the table-wide counts its notes report.
    fn count_left_out(&mut self, a: &SideValues, b: &SideValues) {
        self.failed
            .add((a.failed, &a.first_error), (b.failed, &b.first_error));
        self.missing += a.missing + b.missing;
        // Telemetry repetitions too: the note's count is the one a void reason and the
        // report's Ineffective list give (a headline-only count read 10 beside their 12).
        self.ineffective.add(
            (a.knob.ineffective, &a.first_ineffective),
            (b.knob.ineffective, &b.first_ineffective),
        );
        self.disturbed.add(
            (a.disturbed, &a.first_disturbed),
            (b.disturbed, &b.first_disturbed),
        );
    }

    fn finish(
        mut self,
        kind: TableKind,
        drift: Option<DriftGuard>,
        metric: crate::select::MetricChoice,
        labels: (String, String),
        unavailable: Vec<UnavailableNote>,
    ) -> ComparisonTable {
        let (p_adjustment, voided) = self.adjust_and_void();
        let notes = self.notes(&p_adjustment, &voided, &metric.name, &labels);
        let (fa, fb) = self.failed.count;
        ComparisonTable {
            design: match kind {
                TableKind::Variants { .. } => Design::InterleavedWithinOneRun,
                TableKind::Runs { .. } => Design::SeparateRuns,
            },
            kind,
            drift,
            p_adjustment,
            metric: metric.name,
            unit: metric.unit,
            better: metric.better,
            a_label: labels.0,
            b_label: labels.1,
            config: *self.cfg,
            rows: self.rows,
            unmatched: self.unmatched,
            failed_a: fa,
            failed_b: fb,
            unavailable,
            notes,
            variant_params: Vec::new(),
            param_roles: self.roles,
        }
    }

    /// Adjusts the p-values of the rows that tested something as one family, then marks
    /// the void rows (and unmatched points) with why; returns the adjustment and the
    /// voided rows as (name, why).
    fn adjust_and_void(&mut self) -> (FamilyAdjustment, Vec<(String, String)>) {
        let all = &self.void;
        let void = |point: u32, variant: &Option<String>| {
            all.iter()
                .find(|(p, v, _)| *p == point && (v.is_none() || v == variant))
                .map(|v| v.2.clone())
        };
        // Void rows are no tests: they stay out of the family decided together.
        let p_adjustment = adjust_family(
            self.rows
                .iter_mut()
                .filter(|r| void(r.point_a, &r.variant).is_none())
                .map(|r| &mut r.cmp),
            self.cfg,
        );
        let mut voided = Vec::new();
        for r in &mut self.rows {
            if let Some(why) = void(r.point_a, &r.variant) {
                voided.push((row_name(&r.label, &r.variant), why.clone()));
                r.cmp.make_void(why);
            }
        }
        for (u, (point, variant, counts)) in self.unmatched.iter_mut().zip(&self.unmatched_points) {
            // The void reason names the cause; the first ineffective measurement's
            // reason would say it again (show lists every one).
            if let Some(why) = void(*point, variant) {
                u.reason = format!("void ({why}); {counts}");
            }
        }
        (p_adjustment, voided)
    }

    /// The table's notes: the family adjustment, then what was left out and why.
    fn notes(
        &self,
        p_adjustment: &FamilyAdjustment,
        voided: &[(String, String)],
        metric: &str,
        labels: &(String, String),
    ) -> Vec<String> {
        let mut notes = crate::tables::compare::family::notes(
            p_adjustment,
            self.rows.iter().map(|r| (r.label.clone(), &r.cmp)),
        );
        notes.extend(self.failed.note(
            "",
            "headline measurements failed and are not counted",
            labels,
        ));
        if self.missing > 0 {
            notes.push(format!(
                "{} successful measurements had no finite value of {} and are not counted",
                self.missing, metric
            ));
        }
        if !voided.is_empty() {
            notes.push(void_note(voided, self.rows.len(), &labels.1));
        }
        notes.extend(self.ineffective.note(
            "INEFFECTIVE: ",
            "measurements ran while a knob of their variant did not hold; they are not that \
             variant's numbers and no verdict uses them",
            labels,
        ));
        notes.extend(self.disturbed.note(
            "DISTURBED: ",
            &disturbed_what(self.disturbed.count),
            labels,
        ));
        notes
    }
}

/// The void rows in one note: how many, what void means, then each reason once with the
/// rows it holds for (`0-0, 0-1: no idle entries …`: the pairs of one run read alike, and
/// a sentence each made idle-ipi's mail 20 lines, issue 34 item 3).
fn void_note(voided: &[(String, String)], rows: usize, b_label: &str) -> String {
    let mut by_reason: Vec<(&str, Vec<&str>)> = Vec::new();
    for (name, why) in voided {
        match by_reason.iter_mut().find(|(w, _)| w == why) {
            Some((_, names)) => names.push(name),
            None => by_reason.push((why, vec![name])),
        }
    }
    let reasons: Vec<String> = by_reason
        .iter()
        .map(|(why, names)| format!("{}: {why}", names.join(", ")))
        .collect();
    let which = match voided.len() {
        1 if rows == 1 => "the only row".to_string(),
        n if n == rows => format!("all {n} rows"),
        n => format!("{n} of {rows} rows, left out of those decided together"),
    };
    format!(
        "void (tested nothing: what {b_label}'s settings are meant to move did not move; \
         more repetitions would not help; {which}): {}",
        reasons.join("; ")
    )
}

/// A row as its notes name it: its label, and of two runs its variant (`0-1 [v]`).
pub fn row_name(label: &str, variant: &Option<String>) -> String {
    match variant {
        Some(v) => format!("{label} [{v}]"),
        None => label.to_string(),
    }
}

/// Why a point has no comparison: per side, not measured at all, or measured with no
/// successful value (and what became of its measurements: with `detail`, the first
/// ineffective and disturbed one's reason too).
fn unmatched_reason(a: (&SideValues, &str), b: (&SideValues, &str), detail: bool) -> String {
    let mut why = Vec::new();
    for (side, name) in [a, b] {
        if !side.measured() {
            why.push(format!("not measured in {name}"));
        } else if side.values.is_empty() {
            let mut parts = Vec::new();
            if side.failed > 0 {
                parts.push(format!("{} failed", side.failed));
            }
            if side.missing > 0 {
                parts.push(format!("{} without the metric", side.missing));
            }
            let first = |why: &Option<String>| match (detail, why.as_deref()) {
                (true, Some(w)) => format!(": {w}"),
                _ => String::new(),
            };
            if side.ineffective > 0 {
                parts.push(format!(
                    "{} ineffective{}",
                    side.ineffective,
                    first(&side.first_ineffective)
                ));
            }
            if side.disturbed > 0 {
                parts.push(format!(
                    "{} disturbed{}",
                    side.disturbed,
                    first(&side.first_disturbed)
                ));
            }
            why.push(format!(
                "no successful value in {name} ({})",
                parts.join(", ")
            ));
        }
    }
    why.join("; ")
}

/// The indices of repetitions with the same number on both sides: A_r with B_r.
fn pair_by_rep(a: &[u32], b: &[u32]) -> Vec<(usize, usize)> {
    a.iter()
        .enumerate()
        .filter_map(|(i, r)| b.iter().position(|x| x == r).map(|j| (i, j)))
        .collect()
}
