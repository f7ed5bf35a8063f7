//! Size scans in the seed's shape (`buff kb | veos 1.2.2 | v1_64_96`): when the rows of a
//! comparison vary in a size-like parameter, one table per combination of the other
//! varying parameters, one row per size in KiB, the median of each side, the ratio B/A
//! with its interval, and the verdict.
//!
//! Below each table one line sums the scan up:
//!
//! - the **geometric mean** of the ratios B/A over the compared sizes whose ratio is
//!   defined (median A > 0), and how many sizes **differ**: a size differs when its
//!   verdict is not `~`, i.e. p < alpha and |change| > the noise threshold. It differs
//!   *upward* when B's median is above A's, else *downward*.
//! - **where the curves part**: walk the compared sizes from the largest down while each
//!   differs in the same direction as the largest; the curves part at the smallest size
//!   of that run. From the parting size on, every larger compared size differs in one
//!   direction. When the largest compared size does not differ, the curves **do not
//!   part**; where smaller sizes differed, the line names them and says the curves meet
//!   again at the largest size.
//! - **crossings**: going up the scan and skipping sizes that do not differ, each change
//!   from upward to downward (or back) between two neighbouring differing sizes is a
//!   crossing; the line names the last one. A scan can cross and still part above the
//!   crossing.
//!
//! Sizes that could not be compared (failed or measured on one side only) are listed in
//! their table and skipped by the summary, which says how many it skipped. Rows whose
//! size cannot be read as bytes are listed apart. docs/METHODOLOGY.md states the same.

pub(crate) mod exec;
pub(crate) mod text;

use perflab_core::{parse_size, Better, ParamRole, ParamRoles, ParamValue, Params, Unit};
use perflab_stats::{geomean, FamilyAdjustment, StatsConfig, Verdict};
use serde::Serialize;

use crate::error::ReportError;
use crate::tables::compare::design::{Design, DriftGuard};
use crate::tables::compare::{ComparisonTable, Row, TableKind, UnavailableNote, Unmatched};

use Parting::PartAt;

/// A comparison laid out as size scans.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ScanReport {
    /// The size parameter (`size`).
    pub axis: String,
    pub compared: TableKind,
    /// Interleaved within one run, or separate runs (see [`ComparisonTable::design`]).
    pub design: Design,
    pub drift: Option<DriftGuard>,
    /// The p-values of all the scans' sizes were adjusted together, as one comparison.
    pub p_adjustment: FamilyAdjustment,
    pub metric: String,
    pub unit: Unit,
    pub better: Better,
    pub a_label: String,
    pub b_label: String,
    pub config: StatsConfig,
    /// Parameters with one value at every point, said once above the tables.
    pub fixed: Params,
    /// The compared runs' parameter roles, which write `fixed`'s values in their units as
    /// the rows' labels write them (the JSON has the values as stored).
    #[serde(skip)]
    pub param_roles: ParamRoles,
    pub sections: Vec<ScanSection>,
    /// Points whose size is missing or not a number of bytes, with their value.
    pub outside: Vec<String>,
    pub notes: Vec<String>,
    pub unavailable: Vec<UnavailableNote>,
}

/// The scan of one combination of the other varying parameters.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ScanSection {
    /// `engine=pvm state=unpinned variant=4k`.
    pub title: String,
    /// The varying parameters other than the axis that define this section.
    pub params: Params,
    /// The variant, for run comparisons.
    pub variant: Option<String>,
    /// By size, smallest first.
    pub points: Vec<ScanPoint>,
    pub summary: ScanSummary,
    /// Failed repetitions of compared sizes, and the comparisons' caveats.
    pub notes: Vec<String>,
}

/// One size of a scan.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ScanPoint {
    pub size_bytes: u64,
    /// `None` for a size that could not be compared.
    pub median_a: Option<f64>,
    pub median_b: Option<f64>,
    /// Median B / median A; `None` unless median A > 0.
    pub ratio: Option<f64>,
    /// 1 + change CI / 100, the Hodges-Lehmann interval as a ratio.
    pub ratio_ci: Option<(f64, f64)>,
    /// The interval was widened for lack of repetitions.
    pub ci_widened: bool,
    pub p_value: Option<f64>,
    /// Adjusted for the other rows of the comparison; the verdict rests on it.
    pub p_adjusted: Option<f64>,
    pub verdict: Option<Verdict>,
    pub failed_a: u32,
    pub failed_b: u32,
    /// Why the size was not compared.
    pub not_compared: Option<String>,
    /// Each side's bootstrap interval of the median, for the bands of a plot; `None`
    /// where the side has fewer than two values.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ci_a: Option<(f64, f64)>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ci_b: Option<(f64, f64)>,
}

impl ScanPoint {
    /// Up or down when the size differs (better, worse or changed), else `None`.
    pub fn differs(&self) -> Option<Direction> {
        match (self.verdict, self.median_a, self.median_b) {
            (Some(v), Some(a), Some(b)) if v.moved() => Some(if b > a {
                Direction::Up
            } else {
                Direction::Down
            }),
            _ => None,
        }
    }
}

/// Which way B's curve lies from A's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// B's median above A's.
    Up,
    Down,
}

impl Direction {
    pub fn word(self) -> &'static str {
        match self {
            Direction::Up => "higher",
            Direction::Down => "lower",
        }
    }
}

/// Where two curves separate for good (module doc has the definition).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Parting {
    /// From `size_bytes` on every compared size differs in `direction`; `everywhere`
    /// when that is every compared size.
    PartAt {
        size_bytes: u64,
        direction: Direction,
        everywhere: bool,
    },
    /// The largest compared size does not differ (or nothing was compared).
    DoNotPart,
}

/// A change of direction between two neighbouring differing sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Crossing {
    pub below_bytes: u64,
    pub above_bytes: u64,
    /// B's direction from `above_bytes` on.
    pub to: Direction,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ScanSummary {
    /// Geometric mean of the defined ratios B/A.
    pub geomean_ratio: Option<f64>,
    /// How many ratios went into the geometric mean.
    pub ratios: usize,
    /// Sizes compared, and how many of those differ.
    pub compared: usize,
    pub differing: usize,
    /// Compared sizes whose verdict is undecided: they neither differ nor are the same.
    #[serde(default)]
    pub undecided: usize,
    /// Whether the largest compared size is undecided (the curves' end is not known).
    #[serde(default)]
    pub largest_undecided: bool,
    /// Sizes listed but not compared, skipped here.
    pub not_compared: usize,
    pub parting: Parting,
    pub crossings: Vec<Crossing>,
    /// The smallest and the largest size that differ, and B's direction at the largest;
    /// with [`Parting::DoNotPart`] they say where the curves did differ, so the line
    /// under a scan never reads "do not part" over a table of differing sizes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub differing_span: Option<(u64, u64, Direction)>,
    /// The largest compared size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub largest_bytes: Option<u64>,
}

impl ScanReport {
    pub fn to_json(&self) -> Result<String, ReportError> {
        Ok(serde_json::to_string_pretty(self)?)
    }

    // The blocks are in `blocks`, from the cells of `scan_render`.
}

/// The scans of `table` along parameter `axis`; `None` when fewer than two distinct sizes
/// of `axis` occur among its points.
pub fn scan_tables(table: &ComparisonTable, axis: &str) -> Option<ScanReport> {
    scan_of(table, axis)
}

/// The scans of `table` along the parameter whose role is the size axis (found by role,
/// never by name); `None` where no parameter has that role or fewer than two sizes occur.
pub fn size_scan(table: &ComparisonTable) -> Option<ScanReport> {
    if let Some(axis) = table.param_roles.name_of(ParamRole::SizeAxis) {
        return scan_of(table, axis);
    }
    // exec's sizes are placeholders in `args` (`kb=32`): read them as the axis.
    let (spread, axis) = crate::tables::scan::exec::spread(table)?;
    scan_of(&spread, &axis)
}

fn scan_of(table: &ComparisonTable, axis: &str) -> Option<ScanReport> {
    let entries: Vec<Entry> = table
        .rows
        .iter()
        .map(Entry::Row)
        .chain(table.unmatched.iter().map(Entry::Unmatched))
        .collect();
    let mut sizes: Vec<u64> = entries
        .iter()
        .filter_map(|e| size_bytes(e.params().get(axis)?))
        .collect();
    sizes.sort_unstable();
    sizes.dedup();
    if sizes.len() < 2 {
        return None;
    }
    let (mut fixed, varying) = split_params(&entries, axis);
    // What the variants set differently names the columns, not the scan; a parameter
    // left empty (exec's unused `cwd=`, `json=`) says nothing.
    fixed.0.retain(|k, v| {
        !table.variant_params.contains(k) && !matches!(v, ParamValue::Str(s) if s.is_empty())
    });
    let mut sections: Vec<(Key, Vec<ScanPoint>)> = Vec::new();
    let mut outside = Vec::new();
    for e in &entries {
        let Some(size) = e.params().get(axis).and_then(size_bytes) else {
            let value = e
                .params()
                .get(axis)
                .map_or("missing".to_string(), |v| format!("{v:?}"));
            outside.push(format!("{} ({axis}: {value})", e.name()));
            continue;
        };
        let key = Key::of(e, &varying);
        let point = e.point(size);
        match sections.iter_mut().find(|(k, _)| *k == key) {
            Some((_, points)) => points.push(point),
            None => sections.push((key, vec![point])),
        }
    }
    let disagree = scan_disagreements(table, &sections, &varying, axis);
    let sections = sections
        .into_iter()
        .map(|(key, mut points)| {
            points.sort_by_key(|p| p.size_bytes);
            let notes = section_notes(table, &key, axis, &varying, &points);
            ScanSection {
                title: key.title(&table.param_roles),
                summary: summarize(&points),
                params: key.params,
                variant: key.variant,
                points,
                notes,
            }
        })
        .collect();
    Some(ScanReport {
        axis: axis.to_string(),
        compared: table.kind.clone(),
        design: table.design,
        drift: table.drift.clone(),
        p_adjustment: table.p_adjustment.clone(),
        metric: table.metric.clone(),
        unit: table.unit,
        better: table.better,
        a_label: table.a_label.clone(),
        b_label: table.b_label.clone(),
        config: table.config,
        fixed,
        param_roles: table.param_roles.clone(),
        sections,
        outside,
        notes: table.notes.iter().cloned().chain(disagree).collect(),
        unavailable: table.unavailable.clone(),
    })
}

/// The rows whose change and medians disagree, of every section, in one scan-wide line:
/// a note each under its table was 4 lines a size, as many as the noise made.
fn scan_disagreements(
    table: &ComparisonTable,
    sections: &[(Key, Vec<ScanPoint>)],
    varying: &[String],
    axis: &str,
) -> Option<String> {
    crate::tables::compare::family::disagreement_note(sections.iter().flat_map(|(key, _)| {
        table
            .rows
            .iter()
            .filter(|r| key.matches(r, varying))
            .map(|r| {
                let size = r.params.get(axis).and_then(size_bytes);
                let at = size.map_or(String::new(), |s| format!(" {} KiB", kib(s)));
                (format!("{}{at}", key.title(&table.param_roles)), &r.cmp)
            })
    }))
}

/// A compared row or a point that could not be compared.
enum Entry<'t> {
    Row(&'t Row),
    Unmatched(&'t Unmatched),
}

impl Entry<'_> {
    fn params(&self) -> &Params {
        match self {
            Entry::Row(r) => &r.params,
            Entry::Unmatched(u) => &u.params,
        }
    }

    fn variant(&self) -> Option<&String> {
        match self {
            Entry::Row(r) => r.variant.as_ref(),
            Entry::Unmatched(u) => u.variant.as_ref(),
        }
    }

    fn name(&self) -> String {
        let label = match self {
            Entry::Row(r) => &r.label,
            Entry::Unmatched(u) => &u.label,
        };
        match self.variant() {
            Some(v) => format!("{label} [{v}]"),
            None => label.clone(),
        }
    }

    fn point(&self, size_bytes: u64) -> ScanPoint {
        match self {
            Entry::Row(r) => {
                let c = &r.cmp;
                let defined = c.a.median > 0.0 && c.change_pct.is_some();
                ScanPoint {
                    size_bytes,
                    median_a: Some(c.a.median),
                    median_b: Some(c.b.median),
                    // The estimate the verdict used, so it lies inside its interval.
                    ratio: c.change_pct.filter(|_| defined).map(|x| 1.0 + x / 100.0),
                    ratio_ci: c
                        .change_ci_pct
                        .filter(|_| defined)
                        .map(|(lo, hi)| (1.0 + lo / 100.0, 1.0 + hi / 100.0)),
                    ci_widened: c.decision.widened,
                    p_value: Some(c.p_value),
                    p_adjusted: Some(c.p_adjusted),
                    verdict: Some(c.verdict),
                    failed_a: r.failed_a,
                    failed_b: r.failed_b,
                    not_compared: None,
                    ci_a: (!c.a.median_ci_degenerate).then_some(c.a.median_ci),
                    ci_b: (!c.b.median_ci_degenerate).then_some(c.b.median_ci),
                }
            }
            Entry::Unmatched(u) => ScanPoint {
                size_bytes,
                median_a: u.median_a,
                median_b: u.median_b,
                ratio: None,
                ratio_ci: None,
                ci_widened: false,
                p_value: None,
                p_adjusted: None,
                verdict: None,
                failed_a: 0,
                failed_b: 0,
                not_compared: Some(u.reason.clone()),
                ci_a: None,
                ci_b: None,
            },
        }
    }
}

/// A size in bytes: an integer, a whole non-negative float, or text such as `32K`.
pub(crate) fn size_bytes(v: &ParamValue) -> Option<u64> {
    match v {
        ParamValue::Int(i) => u64::try_from(*i).ok(),
        ParamValue::Float(x) if x.is_finite() && *x >= 0.0 && x.fract() == 0.0 => {
            // Whole floats up to 2^63 convert exactly enough for a size.
            (*x < 9.2e18).then_some(*x as u64)
        }
        ParamValue::Str(s) => parse_size(s).ok(),
        _ => None,
    }
}

/// The parameters other than `axis` with one value everywhere, and the names of those
/// that vary (a name missing from some point varies).
fn split_params(entries: &[Entry], axis: &str) -> (Params, Vec<String>) {
    let mut names: Vec<&String> = entries.iter().flat_map(|e| e.params().0.keys()).collect();
    names.sort();
    names.dedup();
    let mut fixed = Params::default();
    let mut varying = Vec::new();
    for name in names.into_iter().filter(|n| n.as_str() != axis) {
        let first = entries.first().and_then(|e| e.params().get(name));
        match first {
            Some(v) if entries.iter().all(|e| e.params().get(name) == Some(v)) => {
                fixed.0.insert(name.clone(), v.clone());
            }
            _ => varying.push(name.clone()),
        }
    }
    (fixed, varying)
}

/// What puts a point in a section: the varying parameters' values and the variant.
#[derive(Clone, Debug, PartialEq)]
struct Key {
    params: Params,
    /// Names of varying parameters this point lacks, shown as `name=-`.
    absent: Vec<String>,
    variant: Option<String>,
}

impl Key {
    fn of(e: &Entry, varying: &[String]) -> Self {
        let mut params = Params::default();
        let mut absent = Vec::new();
        for name in varying {
            match e.params().get(name) {
                Some(v) => {
                    params.0.insert(name.clone(), v.clone());
                }
                None => absent.push(name.clone()),
            }
        }
        Key {
            params,
            absent,
            variant: e.variant().cloned(),
        }
    }

    /// `engine=pvm variant=4k`, each value in its role's unit.
    fn title(&self, roles: &ParamRoles) -> String {
        let mut parts: Vec<(String, String)> = self
            .params
            .0
            .iter()
            .map(|(k, v)| (k.clone(), roles.value_text(k, v)))
            .chain(self.absent.iter().map(|k| (k.clone(), "-".to_string())))
            .collect();
        parts.sort();
        let mut title = parts
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ");
        if let Some(v) = &self.variant {
            if !title.is_empty() {
                title.push(' ');
            }
            title.push_str(&format!("variant={v}"));
        }
        if title.is_empty() {
            title = "all points".to_string();
        }
        title
    }

    fn matches(&self, row: &Row, varying: &[String]) -> bool {
        row.variant == self.variant
            && varying
                .iter()
                .all(|n| row.params.get(n) == self.params.get(n))
    }
}

/// Failed repetitions of compared sizes, then each comparison caveat once with the
/// sizes it applies to.
fn section_notes(
    table: &ComparisonTable,
    key: &Key,
    axis: &str,
    varying: &[String],
    points: &[ScanPoint],
) -> Vec<String> {
    let mut notes = Vec::new();
    for p in points {
        for (n, label) in [(p.failed_a, &table.a_label), (p.failed_b, &table.b_label)] {
            if n > 0 {
                notes.push(format!(
                    "{} KiB: {n} failed repetition{} of {label} not counted",
                    kib(p.size_bytes),
                    if n == 1 { "" } else { "s" }
                ));
            }
        }
    }
    let mut grouped: Vec<(String, Vec<String>)> = Vec::new();
    let rows = table.rows.iter().filter(|r| key.matches(r, varying));
    for r in rows {
        let Some(size) = r.params.get(axis).and_then(size_bytes) else {
            continue;
        };
        let own = crate::tables::compare::family::decision_notes(&r.cmp);
        for n in r.cmp.notes.iter().chain(&own) {
            let at = format!("{} KiB", kib(size));
            match grouped.iter_mut().find(|(text, _)| text == n) {
                Some((_, sizes)) => sizes.push(at),
                None => grouped.push((n.clone(), vec![at])),
            }
        }
    }
    let compared = points.iter().filter(|p| p.verdict.is_some()).count();
    for (text, sizes) in grouped {
        let who = if sizes.len() == compared && compared > 1 {
            "all sizes".to_string()
        } else {
            sizes.join(", ")
        };
        notes.push(format!("{who}: {text}"));
    }
    notes
}

/// The summary line's figures (definitions in the module doc).
pub fn summarize(points: &[ScanPoint]) -> ScanSummary {
    let compared: Vec<&ScanPoint> = points.iter().filter(|p| p.verdict.is_some()).collect();
    let ratios: Vec<f64> = compared
        .iter()
        .filter_map(|p| p.ratio)
        .filter(|r| r.is_finite() && *r > 0.0)
        .collect();
    let dirs: Vec<Option<Direction>> = compared.iter().map(|p| p.differs()).collect();

    let parting = match dirs.last() {
        Some(Some(last)) => {
            let tail = dirs.iter().rev().take_while(|d| **d == Some(*last)).count();
            let first = compared.len() - tail;
            PartAt {
                size_bytes: compared[first].size_bytes,
                direction: *last,
                everywhere: first == 0,
            }
        }
        _ => Parting::DoNotPart,
    };
    let mut crossings = Vec::new();
    let mut prev: Option<(u64, Direction)> = None;
    for (p, d) in compared.iter().zip(&dirs) {
        let Some(d) = *d else { continue };
        if let Some((below, pd)) = prev {
            if pd != d {
                crossings.push(Crossing {
                    below_bytes: below,
                    above_bytes: p.size_bytes,
                    to: d,
                });
            }
        }
        prev = Some((p.size_bytes, d));
    }
    ScanSummary {
        geomean_ratio: geomean(&ratios),
        ratios: ratios.len(),
        compared: compared.len(),
        differing: dirs.iter().filter(|d| d.is_some()).count(),
        undecided: compared
            .iter()
            .filter(|p| p.verdict == Some(Verdict::Undecided))
            .count(),
        largest_undecided: compared
            .last()
            .is_some_and(|p| p.verdict == Some(Verdict::Undecided)),
        not_compared: points.len() - compared.len(),
        parting,
        crossings,
        differing_span: {
            let differing: Vec<(u64, Direction)> = compared
                .iter()
                .zip(&dirs)
                .filter_map(|(p, d)| d.map(|d| (p.size_bytes, d)))
                .collect();
            match (differing.first(), differing.last()) {
                (Some(first), Some(last)) => Some((first.0, last.0, last.1)),
                _ => None,
            }
        },
        largest_bytes: compared.last().map(|p| p.size_bytes),
    }
}

/// A size in KiB as the seed's `buff kb` column writes it: whole KiB without decimals,
/// else up to three.
pub fn kib(bytes: u64) -> String {
    if bytes.is_multiple_of(1024) {
        (bytes / 1024).to_string()
    } else {
        let s = format!("{:.3}", bytes as f64 / 1024.0);
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(kib_: u64, verdict: Option<Verdict>, a: f64, b: f64) -> ScanPoint {
        ScanPoint {
            size_bytes: kib_ * 1024,
            median_a: verdict.map(|_| a),
            median_b: verdict.map(|_| b),
            ratio: verdict.map(|_| b / a),
            ratio_ci: None,
            ci_widened: false,
            p_value: verdict.map(|_| 0.008),
            p_adjusted: verdict.map(|_| 0.008),
            verdict,
            failed_a: 0,
            failed_b: 0,
            not_compared: verdict.is_none().then(|| "failed".to_string()),
            ci_a: None,
            ci_b: None,
        }
    }

    const UP: Option<Verdict> = Some(Verdict::Improved);
    const DOWN: Option<Verdict> = Some(Verdict::Regressed);
    const SAME: Option<Verdict> = Some(Verdict::Same);

    #[test]
    fn parting_is_the_start_of_the_last_same_direction_run() {
        let pts = [
            point(32, DOWN, 2.0, 1.0),
            point(64, SAME, 1.0, 1.0),
            point(128, UP, 1.0, 2.0),
            point(256, None, 0.0, 0.0),
            point(512, UP, 1.0, 3.0),
        ];
        let s = summarize(&pts);
        assert_eq!(
            s.parting,
            PartAt {
                size_bytes: 128 * 1024,
                direction: Direction::Up,
                everywhere: false
            }
        );
        assert_eq!((s.compared, s.differing, s.not_compared), (4, 3, 1));
        assert_eq!(
            s.crossings,
            [Crossing {
                below_bytes: 32 * 1024,
                above_bytes: 128 * 1024,
                to: Direction::Up
            }]
        );
        assert_eq!(s.ratios, 4);
    }

    #[test]
    fn no_parting_when_the_largest_size_agrees() {
        let pts = [point(32, UP, 1.0, 2.0), point(64, SAME, 1.0, 1.0)];
        assert_eq!(summarize(&pts).parting, Parting::DoNotPart);
        assert_eq!(summarize(&[]).parting, Parting::DoNotPart);
        let all = [point(32, DOWN, 2.0, 1.0), point(64, DOWN, 2.0, 1.0)];
        assert!(matches!(
            summarize(&all).parting,
            PartAt {
                everywhere: true,
                direction: Direction::Down,
                ..
            }
        ));
    }

    #[test]
    fn kib_and_sizes() {
        assert_eq!(kib(32768), "32");
        assert_eq!(kib(1 << 30), "1048576");
        assert_eq!(kib(512), "0.5");
        assert_eq!(kib(1000), "0.977");
        assert_eq!(size_bytes(&ParamValue::Str("2M".into())), Some(2 << 20));
        assert_eq!(size_bytes(&ParamValue::Int(-1)), None);
        assert_eq!(size_bytes(&ParamValue::Float(1.5)), None);
        assert_eq!(size_bytes(&ParamValue::Float(f64::INFINITY)), None);
    }
}
