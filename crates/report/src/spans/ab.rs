//! Span breakdowns compared A/B with the statistics every other metric gets: per span,
//! the p50 and p99 of side B against side A over the repetitions (medians, the
//! Hodges-Lehmann shift with its interval, Mann-Whitney p adjusted over the rows of one
//! comparison, and the verdict from `perflab_stats`; no second rule).
//!
//! What is compared: within each variant, points that differ in one parameter only (a
//! netpaths path with no load against 3 bulk streams), the first point in plan order as
//! A; then, as `perflab compare` does, every other variant against the baseline at each
//! point.

use perflab_core::record::{MeasurementRecord, RunInfo};
use perflab_core::{Better, Params};
use perflab_stats::{adjust_family, compare, Comparison, FamilyAdjustment, Sample, StatsConfig};
use serde::Serialize;

use crate::select::{baseline_variant, measured_variants, Labeler};
use crate::spans::rows::{self, SpanId};

/// The statistics of each span that are compared: the typical packet and the tail.
pub const COMPARED: [&str; 2] = ["p50", "p99"];
/// Comparisons per run shown; the rest are counted in a note.
pub const MAX_COMPARISONS: usize = 12;

/// One span statistic compared.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SpanCmpRow {
    pub key: String,
    pub label: String,
    /// `p50` or `p99`.
    pub stat: String,
    /// In µs; B − A is `cmp.b.median − cmp.a.median`, its interval `cmp.shift.ci`.
    pub cmp: Comparison,
}

/// Side B against side A for every span of both.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SpanComparison {
    /// `vm-tap: load_streams=3 vs load_streams=0`.
    pub title: String,
    pub a_label: String,
    pub b_label: String,
    pub a: (String, u32),
    pub b: (String, u32),
    pub rows: Vec<SpanCmpRow>,
    /// Span statistics that could not be compared, and why.
    pub not_compared: Vec<String>,
    pub p_adjustment: FamilyAdjustment,
    /// Table-wide notes (the family adjustment, too few repetitions).
    pub notes: Vec<String>,
    pub confidence: String,
    pub alpha: f64,
    pub noise_pct: f64,
    /// Read from telemetry repetitions (the trace monitor's only place), never results.
    pub from_telemetry: bool,
}

/// The comparisons of a run with span rows (see the module documentation), at most
/// `limit` (texts show [`MAX_COMPARISONS`]), and how many there are in all.
pub fn span_comparisons(
    run: &RunInfo,
    ms: &[MeasurementRecord],
    cfg: &StatsConfig,
    limit: usize,
) -> (Vec<SpanComparison>, usize) {
    if !rows::has_spans(ms) {
        return (Vec::new(), 0);
    }
    let sides = pairs(run, ms);
    let total = sides.len();
    let out = sides
        .into_iter()
        .take(limit)
        .map(|p| one(ms, p, cfg))
        .collect();
    (out, total)
}

/// Which sides to compare, named.
struct PairSpec {
    title: String,
    a_label: String,
    b_label: String,
    a: (String, u32),
    b: (String, u32),
}

fn point_params(ms: &[MeasurementRecord], variant: &str) -> Vec<(u32, Params)> {
    let mut out: Vec<(u32, Params)> = Vec::new();
    let mut sorted: Vec<&MeasurementRecord> = ms.iter().filter(|m| m.variant == variant).collect();
    sorted.sort_by_key(|m| (m.point, m.seq));
    for m in sorted {
        if !out.iter().any(|(p, _)| *p == m.point) {
            out.push((m.point, m.params.clone()));
        }
    }
    out
}

/// `params` without `name`, as text, to group points that differ in `name` only.
fn without(params: &Params, name: &str) -> String {
    let mut p = params.clone();
    p.0.remove(name);
    p.describe()
}

fn pairs(run: &RunInfo, ms: &[MeasurementRecord]) -> Vec<PairSpec> {
    let variants = measured_variants(ms);
    let roles = crate::hints::param_roles(run);
    let mut out = Vec::new();
    for v in &variants {
        let points = point_params(ms, v);
        let mut names: Vec<&String> = points.iter().flat_map(|(_, p)| p.0.keys()).collect();
        names.sort();
        names.dedup();
        let labeler = Labeler::new(&roles, points.iter().map(|(_, p)| p));
        for name in names {
            let mut groups: Vec<(String, Vec<&(u32, Params)>)> = Vec::new();
            for pp in &points {
                let rest = without(&pp.1, name);
                match groups.iter_mut().find(|(r, _)| *r == rest) {
                    Some((_, g)) => g.push(pp),
                    None => groups.push((rest, vec![pp])),
                }
            }
            let named = |p: &Params| match p.get(name) {
                Some(v) => roles.named_value(name, v),
                None => format!("{name}=-"),
            };
            for (_, g) in groups {
                let Some(((pa, a), rest)) = g.split_first().map(|(f, r)| ((f.0, &f.1), r)) else {
                    continue;
                };
                for (pb, b) in rest.iter().map(|x| (x.0, &x.1)) {
                    let (la, lb) = (named(a), named(b));
                    let others = labeler.label_without(a, &[name]);
                    let at = if others.is_empty() {
                        String::new()
                    } else {
                        format!(" at {others}")
                    };
                    out.push(PairSpec {
                        title: format!("{v}{at}: {lb} vs {la}"),
                        a_label: la,
                        b_label: lb,
                        a: (v.clone(), pa),
                        b: (v.clone(), pb),
                    });
                }
            }
        }
    }
    if let Some(base) = baseline_variant(run, &variants) {
        let base_points = point_params(ms, &base);
        let labeler = Labeler::new(&roles, base_points.iter().map(|(_, p)| p));
        for other in variants.iter().filter(|v| **v != base) {
            for (point, params) in &base_points {
                if !ms.iter().any(|m| m.point == *point && m.variant == *other) {
                    continue;
                }
                let at = match labeler.label(params) {
                    l if l == "all" => String::new(),
                    l => format!(" at {l}"),
                };
                out.push(PairSpec {
                    title: format!("{other} vs {base}{at}"),
                    a_label: base.clone(),
                    b_label: other.clone(),
                    a: (base.clone(), *point),
                    b: (other.clone(), *point),
                });
            }
        }
    }
    out
}

fn side<'m>(
    ms: &'m [MeasurementRecord],
    (variant, point): &(String, u32),
) -> Vec<&'m MeasurementRecord> {
    let all: Vec<&MeasurementRecord> = ms
        .iter()
        .filter(|m| m.point == *point && m.variant == *variant)
        .collect();
    rows::span_records(&all)
}

/// Why span `id` of the pair `p` has no figure to compare on one side (`ra` the first's
/// records, `rb` the second's), where it has none.
fn why_not_compared(
    ra: &[&MeasurementRecord],
    rb: &[&MeasurementRecord],
    id: &SpanId,
    p: &PairSpec,
) -> Option<String> {
    // A side whose span matched fewer events per measurement than a figure is read
    // from has no figure to compare.
    let floor = perflab_core::span_outline::MIN_SPAN_EVENTS as f64;
    let few = |side: &[&MeasurementRecord]| {
        perflab_stats::median(rows::counts(side, &id.key)).filter(|n| *n > 0.0 && *n < floor)
    };
    if let Some((n, name)) = few(ra)
        .map(|n| (n, &p.a_label))
        .or_else(|| few(rb).map(|n| (n, &p.b_label)))
    {
        return Some(format!(
            "{}: too few events in {name} ({} < {floor} per measurement)",
            id.label,
            crate::fmt::count(n)
        ));
    }
    // Nor has a side whose span keyed by CPU matched mostly other work's events.
    let refused = |side: &[&MeasurementRecord]| {
        crate::spans::foreign::foreign(side, &id.key).and_then(|f| f.refusal())
    };
    refused(ra)
        .map(|w| (w, &p.a_label))
        .or_else(|| refused(rb).map(|w| (w, &p.b_label)))
        .map(|(why, name)| format!("{} in {name}: {why}", id.label))
}

fn one(ms: &[MeasurementRecord], p: PairSpec, cfg: &StatsConfig) -> SpanComparison {
    let (ra, rb) = (side(ms, &p.a), side(ms, &p.b));
    let mut ids: Vec<SpanId> = rows::span_ids(&ra);
    for id in rows::span_ids(&rb) {
        if !ids.iter().any(|i| i.key == id.key) {
            ids.push(id);
        }
    }
    let mut rows = Vec::new();
    let mut not_compared = Vec::new();
    for id in &ids {
        if let Some(why) = why_not_compared(&ra, &rb, id, &p) {
            not_compared.push(why);
            continue;
        }
        for stat in COMPARED {
            let va = rows::stat_us(&ra, &id.key, stat);
            let vb = rows::stat_us(&rb, &id.key, stat);
            match (Sample::new(va), Sample::new(vb)) {
                (Ok(a), Ok(b)) => rows.push(SpanCmpRow {
                    key: id.key.clone(),
                    label: id.label.clone(),
                    stat: stat.to_string(),
                    cmp: compare(&a, &b, Better::Lower, cfg),
                }),
                (a, b) => {
                    let where_ = match (a.is_err(), b.is_err()) {
                        (true, true) => "on either side".to_string(),
                        (true, false) => format!("in {}", p.a_label),
                        _ => format!("in {}", p.b_label),
                    };
                    not_compared.push(format!("{} {stat}: no events matched {where_}", id.label));
                }
            }
        }
    }
    let p_adjustment = adjust_family(rows.iter_mut().map(|r| &mut r.cmp), cfg);
    let mut notes = crate::tables::compare::family::notes(
        &p_adjustment,
        rows.iter()
            .map(|r| (format!("{} {}", r.label, r.stat), &r.cmp)),
    );
    // A caveat every row shares (too few repetitions for any p) is said once.
    for r in &rows {
        for n in &r.cmp.notes {
            if !notes.contains(n) {
                notes.push(n.clone());
            }
        }
    }
    SpanComparison {
        title: p.title,
        a_label: p.a_label,
        b_label: p.b_label,
        a: p.a,
        b: p.b,
        rows,
        not_compared,
        p_adjustment,
        notes,
        confidence: cfg.confidence_label(),
        alpha: cfg.alpha,
        noise_pct: cfg.noise_pct,
        from_telemetry: ra.iter().chain(&rb).any(|m| !m.is_headline()),
    }
}
