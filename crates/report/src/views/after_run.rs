//! What a finished run shows: one view (its sections), rendered as text by
//! [`EndView::text`] and as the JSON document's sections by [`EndView::comparisons_json`]
//! and [`EndView::sections_json`]. The drill-down directory is written beside the view,
//! by [`EndView::write_drilldown`], never by a renderer.

use std::path::{Path, PathBuf};

use perflab_core::record::{MeasurementRecord, RunInfo};
use perflab_stats::{Buckets, StatsConfig};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::error::ReportError;
use crate::section::SectionId;
use crate::section::{self, Format, Section};
use crate::views::parts;
use crate::views::View;
use crate::{ComparisonTable, Distribution, ScanReport, SummaryTable};

/// What the end of a run works from.
pub struct AfterRun {
    /// The variants measured, in the order first measured.
    pub measured: Vec<String>,
    /// The points are CPU pairs: a regression distribution and drill-down apply.
    pub pairs: bool,
    pub buckets: Buckets,
    /// The study asks for the drill-down directory, or `--out` names one.
    pub wants_drilldown: bool,
    /// `--out`, else the directory `default_dir` names.
    pub dir: PathBuf,
}

impl AfterRun {
    /// `out` is `--out`; `default_dir` says where the drill-down goes without it.
    pub fn of(
        info: &RunInfo,
        ms: &[MeasurementRecord],
        out: Option<&Path>,
        default_dir: impl FnOnce() -> PathBuf,
    ) -> Result<Self, ReportError> {
        let buckets = match &info.spec.compare.buckets {
            Some(edges) => Buckets::new(edges.clone())?,
            None => Buckets::default(),
        };
        Ok(Self {
            measured: crate::measured_variants(ms),
            pairs: {
                let roles = crate::hints::param_roles(info);
                ms.iter().any(|m| roles.cpu_pair(&m.params).is_some())
            },
            buckets,
            wants_drilldown: info.spec.compare.drilldown || out.is_some(),
            dir: out.map_or_else(default_dir, Path::to_path_buf),
        })
    }
}

/// One variant against the baseline.
pub struct VariantView {
    pub other: String,
    pub table: ComparisonTable,
    /// The seed's layout of a size scan: the text shows it in place of the table.
    pub scan: Option<ScanReport>,
    /// CPU-pair studies: the regression distribution (the text shows it with the
    /// drill-down).
    pub distribution: Option<Distribution>,
}

impl View for VariantView {
    /// Its sections, every one (JSON keeps them all).
    fn sections(&self) -> Vec<&dyn Section> {
        let mut out: Vec<&dyn Section> = vec![&self.table];
        out.extend(self.scan.as_ref().map(|s| s as &dyn Section));
        out.extend(self.distribution.as_ref().map(|d| d as &dyn Section));
        out
    }
}

pub struct EndView {
    pub after: AfterRun,
    /// netrr's seed-001 table, first.
    pub latency: Option<Box<dyn Section>>,
    /// Each other variant against the baseline; empty for a run of one variant.
    pub variants: Vec<VariantView>,
    /// A run of one variant, or one with no successful measurement: its summary instead.
    pub summary: Option<SummaryTable>,
    /// Threads, lock waits, interrupts, counters, then the spans.
    pub rest: Vec<Box<dyn Section>>,
    /// How many span comparisons `span_cap` left out, in words.
    pub more: Option<String>,
}

impl EndView {
    /// The view of a run; `span_cap` is how many span comparisons to keep (the text keeps
    /// a few, JSON all); `db_flag` (` --db PATH` or nothing) goes into the commands it
    /// names.
    pub fn of(
        info: &RunInfo,
        ms: &[MeasurementRecord],
        after: AfterRun,
        (span_cap, db_flag): (usize, &str),
    ) -> Result<Self, ReportError> {
        let cfg = StatsConfig::default();
        // A run none of whose measurements succeeded has nothing to compare: its summary
        // says so (each variant's failures), as for a run of one variant; comparing would
        // find no metric and end a run that failed (exit 1) as bad input.
        let compared = match ms.iter().any(crate::select::is_ok) {
            true => parts::baseline_and_other(info, &after.measured),
            false => None,
        };
        let (variants, summary) = match compared {
            Some((base, _)) => (variant_views(info, ms, &after, &base, &cfg)?, None),
            None => (
                Vec::new(),
                Some(crate::summarize_run(info, ms, None, &cfg)?),
            ),
        };
        let mut rest = parts::telemetry_sections(info, ms);
        let spans = parts::span_sections(info, ms, span_cap, db_flag);
        rest.extend(spans.sections);
        Ok(Self {
            latency: parts::latency_section(info, ms),
            variants,
            summary,
            rest,
            more: spans.more,
            after,
        })
    }

    /// The variant whose drill-down is written: the second measured, as ever.
    fn drilled(&self) -> Option<&VariantView> {
        let wanted = self.after.measured.get(1)?;
        self.variants.iter().find(|v| v.other == *wanted)
    }

    /// Writes the per-pair drill-down when the study asks for one (or `--out` does) and
    /// the points are CPU pairs; returns its directory.
    pub fn write_drilldown(
        &self,
        info: &RunInfo,
        ms: &[MeasurementRecord],
    ) -> Result<Option<PathBuf>, ReportError> {
        let a = &self.after;
        if !(a.wants_drilldown && a.pairs) {
            return Ok(None);
        }
        if self.summary.is_some() {
            let Some(v) = a.measured.first() else {
                return Ok(None);
            };
            crate::write_single_drilldown(&a.dir, info, ms, v, &info.unavailable)?;
        } else {
            let Some(v) = self.drilled() else {
                return Ok(None);
            };
            crate::write_drilldown(&a.dir, info, ms, &v.table, &a.buckets)?;
        }
        Ok(Some(a.dir.clone()))
    }

    /// What `perflab run` prints at the end: the comparison against the baseline (its
    /// scan for size scans, with the regression distribution for CPU-pair studies that
    /// drill down), or the summary of a single variant; `drilldown` is where the
    /// drill-down was written.
    pub fn text(&self, drilldown: Option<&Path>) -> String {
        let text = |s: &dyn Section| section::render(&[s], Format::Text);
        let there = |d: &Path| format!("\ndrill-down per pair: {}/\n", d.display());
        let mut out = String::new();
        if let Some(t) = &self.latency {
            out += &format!("\n{}", text(t.as_ref()));
        }
        out += "\n";
        for v in &self.variants {
            match &v.scan {
                Some(scan) => out += &text(scan),
                None => out += &text(&v.table),
            }
            if let (Some(d), true) = (&v.distribution, self.after.wants_drilldown) {
                out += &format!("\n{}", text(d));
            }
            let drilled = self.drilled().is_some_and(|d| d.other == v.other);
            if let (Some(d), true) = (drilldown, drilled) {
                out += &there(d);
            }
        }
        if let Some(s) = &self.summary {
            out += &text(s);
            out += &drilldown.map(there).unwrap_or_default();
        }
        for s in &self.rest {
            out += &format!("\n{}", text(s.as_ref()));
        }
        if let Some(more) = &self.more {
            out += &format!("\n{more}\n");
        }
        out
    }

    /// Each variant against the baseline: its sections by id (`comparison`, with `scan`
    /// for size scans and `distribution` for CPU-pair studies).
    pub fn comparisons_json(&self) -> Vec<Map<String, Value>> {
        self.variants.iter().map(|v| v.json_all()).collect()
    }

    /// The sections beside the comparisons, keyed by id (`spans` a list).
    pub fn sections_json(&self) -> Map<String, Value> {
        self.json_all()
    }
}

impl View for EndView {
    /// The sections beside the comparisons (which [`EndView::comparisons_json`] gives).
    fn sections(&self) -> Vec<&dyn Section> {
        let mut all: Vec<&dyn Section> = Vec::new();
        all.extend(self.summary.as_ref().map(|s| s as &dyn Section));
        all.extend(self.latency.as_deref());
        all.extend(self.rest.iter().map(|s| s.as_ref()));
        all
    }
    fn many(&self) -> &'static [SectionId] {
        &[SectionId::Spans]
    }
}

/// Each measured variant other than `base` against it, in the order measured.
fn variant_views(
    info: &RunInfo,
    ms: &[MeasurementRecord],
    after: &AfterRun,
    base: &str,
    cfg: &StatsConfig,
) -> Result<Vec<VariantView>, ReportError> {
    let mut out = Vec::new();
    for (i, other) in after.measured.iter().filter(|v| *v != base).enumerate() {
        let mut table = crate::compare_variants(info, ms, base, other, None, cfg)?;
        // Every table of the run would list the same variants not measured; the first
        // says it.
        if i > 0 {
            table.unavailable.clear();
        }
        out.push(VariantView {
            other: other.clone(),
            scan: crate::size_scan(&table),
            distribution: after
                .pairs
                .then(|| crate::distribution(&table, &after.buckets)),
            table,
        });
    }
    Ok(out)
}

/// The document `perflab run --format json` prints: how the run ended (`end`, the
/// binary's), where its results are, then its view (`$defs/run` in
/// docs/schema/perflab.json). Fields in the order a person reading it wants them: what
/// happened first, then the numbers.
#[derive(Serialize)]
pub struct EndDoc<'a, E: Serialize, A: Serialize> {
    #[serde(flatten)]
    pub end: E,
    /// The last line of the text output when measurements failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The database's file (absolute) or its URL without the password.
    pub database: String,
    pub study: &'a str,
    pub workload: &'a str,
    pub label: Option<&'a str>,
    pub unavailable: &'a [perflab_core::record::UnavailableVariant],
    /// [`EndView::comparisons_json`].
    pub comparisons: Vec<Map<String, Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drilldown: Option<PathBuf>,
    /// [`EndView::sections_json`]: `summary` (a run of one variant), `latency`,
    /// `threads`, `lock-wait`, `interrupts`, `counters`, `spans` (a list).
    #[serde(flatten)]
    pub sections: Map<String, Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub adaptive: Option<A>,
}
