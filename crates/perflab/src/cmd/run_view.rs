//! What a finished run shows: one view (its sections), rendered as text by [`EndView::text`]
//! and as JSON by `run_json`. The drill-down directory is written beside the view, by
//! [`EndView::write_drilldown`], never by a renderer.

use std::path::{Path, PathBuf};

use perflab_report as report;
use perflab_report::{ComparisonTable, Distribution, Format, ScanReport, Section, SummaryTable};
use perflab_stats::StatsConfig;
use perflab_store::{MeasurementRecord, RunInfo};

use crate::cmd::show::{self, AfterRun};

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

impl VariantView {
    /// Its sections, every one (JSON keeps them all).
    pub fn sections(&self) -> Vec<&dyn Section> {
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
    /// A run of one variant: its summary instead.
    pub summary: Option<SummaryTable>,
    /// Threads, lock waits, interrupts, counters, then the spans.
    pub rest: Vec<Box<dyn Section>>,
    /// How many span comparisons `span_cap` left out, in words.
    pub more: Option<String>,
}

impl EndView {
    /// The view of a run; `span_cap` is how many span comparisons to keep (the text keeps
    /// a few, JSON all).
    pub fn of(
        info: &RunInfo,
        ms: &[MeasurementRecord],
        after: AfterRun,
        span_cap: usize,
    ) -> anyhow::Result<Self> {
        let cfg = StatsConfig::default();
        let mut variants = Vec::new();
        let mut summary = None;
        match show::baseline_and_other(info, &after.measured) {
            Some((base, _)) => {
                for (i, other) in after.measured.iter().filter(|v| **v != base).enumerate() {
                    let mut table = report::compare_variants(info, ms, &base, other, None, &cfg)?;
                    // Every table of the run would list the same variants not measured; the
                    // first says it.
                    if i > 0 {
                        table.unavailable.clear();
                    }
                    variants.push(VariantView {
                        other: other.clone(),
                        scan: report::scan_tables(&table, "size"),
                        distribution: after
                            .pairs
                            .then(|| report::distribution(&table, &after.buckets)),
                        table,
                    });
                }
            }
            None => summary = Some(report::summarize_run(info, ms, None, &cfg)?),
        }
        let mut rest = show::threads_sections(info, ms);
        rest.extend(report::irq_cpu_table(info, ms).map(|t| Box::new(t) as _));
        rest.extend(report::counter_table(info, ms).map(|t| Box::new(t) as _));
        let spans = show::span_sections(info, ms, span_cap);
        rest.extend(spans.sections);
        Ok(Self {
            latency: show::latency_section(info, ms),
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
    ) -> anyhow::Result<Option<PathBuf>> {
        let a = &self.after;
        if !(a.wants_drilldown && a.pairs) {
            return Ok(None);
        }
        if self.summary.is_some() {
            let Some(v) = a.measured.first() else {
                return Ok(None);
            };
            report::write_single_drilldown(&a.dir, info, ms, v, &info.unavailable)?;
        } else {
            let Some(v) = self.drilled() else {
                return Ok(None);
            };
            report::write_drilldown(&a.dir, info, ms, &v.table, &a.buckets)?;
        }
        Ok(Some(a.dir.clone()))
    }

    /// What `perflab run` prints at the end: the comparison against the baseline (its
    /// scan for size scans, with the regression distribution for CPU-pair studies that
    /// drill down), or the summary of a single variant; `drilldown` is where the
    /// drill-down was written.
    pub fn text(&self, drilldown: Option<&Path>) -> String {
        let text = |s: &dyn Section| report::section::render(&[s], Format::Text);
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

    /// The sections beside the comparisons, keyed by id (`spans` a list).
    pub fn json_sections(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut all: Vec<&dyn Section> = Vec::new();
        all.extend(self.summary.as_ref().map(|s| s as &dyn Section));
        all.extend(self.latency.as_deref());
        all.extend(self.rest.iter().map(|s| s.as_ref()));
        report::section::json(&all, &["spans"])
    }
}
