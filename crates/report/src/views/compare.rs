//! `perflab compare`: two variants of one run, or two runs matched by parameters, with
//! the regression distribution for CPU-pair studies and the latency percentiles of what
//! it compares. Every table says its design (interleaved within one run, or separate
//! runs with the drift guard of their timing probes); the JSON carries both as data.

use std::path::Path;

use perflab_core::record::{MeasurementRecord, RunInfo};
use perflab_stats::{Buckets, StatsConfig};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::error::ReportError;
use crate::section::SectionId;
use crate::section::{self, Format, Section};
use crate::tables::telemetry_ab::{telemetry_ab, TelemetryAb};
use crate::views::data::{pick, to_json, Data};
use crate::views::parts;
use crate::views::View;
use crate::{ComparisonTable, Distribution, PercentileTable, ScanReport};

/// How the numbers are read: the metric (`None`: the run's primary one), the statistics
/// and the regression distribution's buckets.
pub struct Reading<'a> {
    pub metric: Option<&'a str>,
    pub cfg: &'a StatsConfig,
    pub buckets: &'a Buckets,
}

pub struct CompareView {
    /// The fingerprint fields two compared runs differ in (`setup_differences`), printed
    /// before the tables whatever `--section` picks; absent when they match or one run
    /// is compared.
    pub setup: Option<Data>,
    pub table: ComparisonTable,
    /// A size scan reads best in the seed's shape: one row per buffer size, in the
    /// table's place in the text.
    pub scan: Option<ScanReport>,
    /// CPU-pair studies: the regression distribution.
    pub distribution: Option<Distribution>,
    /// The telemetry the sides recorded (counters, interrupts and idle entries on the
    /// measured CPUs, huge pages), B against A: change and interval, no verdict.
    pub telemetry: Option<TelemetryAb>,
    /// The latency percentiles of what the comparison reads: both runs, or the two
    /// variants.
    pub percentiles: Option<PercentileTable>,
    buckets: Buckets,
}

/// Variants `pair` (base, other) of one run, by default the study's baseline and the
/// first other variant measured.
pub fn variants(
    info: &RunInfo,
    ms: &[MeasurementRecord],
    pair: Option<(String, String)>,
    how: &Reading,
) -> Result<CompareView, ReportError> {
    let (base, other) = match pair {
        Some(p) => p,
        None => parts::baseline_and_other(info, &crate::measured_variants(ms))
            .ok_or_else(|| nothing_to_compare(info, ms))?,
    };
    let table = crate::compare_variants(info, ms, &base, &other, how.metric, how.cfg)?;
    let telemetry = telemetry_ab(&table, ms, ms, how.cfg);
    // The percentiles read histograms only: the two variants' records are copied without
    // their telemetry rows, most of a record (unless that is all of them already: no
    // telemetry is read without --drilldown).
    let theirs = |m: &MeasurementRecord| m.variant == base || m.variant == other;
    let percentiles = if ms.iter().all(|m| theirs(m) && m.telemetry.is_empty()) {
        crate::latency_percentiles(&[(info, ms)])
    } else {
        let two: Vec<_> = ms
            .iter()
            .filter(|m| theirs(m))
            .map(crate::slim::without_telemetry)
            .collect();
        crate::latency_percentiles(&[(info, &two)])
    };
    Ok(CompareView::of(
        table,
        telemetry,
        percentiles,
        None,
        how.buckets,
    ))
}

/// Run `b` against run `a`, matched point by point; their setups' differences said first.
pub fn runs(
    a: (&RunInfo, &[MeasurementRecord]),
    b: (&RunInfo, &[MeasurementRecord]),
    how: &Reading,
) -> Result<CompareView, ReportError> {
    let table = crate::compare_runs(a.0, a.1, b.0, b.1, how.metric, how.cfg)?;
    let telemetry = telemetry_ab(&table, a.1, b.1, how.cfg);
    let percentiles = crate::latency_percentiles(&[a, b]);
    let setup = setup_section(&setup_differences(a.0, b.0))?;
    Ok(CompareView::of(
        table,
        telemetry,
        percentiles,
        setup,
        how.buckets,
    ))
}

impl View for CompareView {
    /// The setup differences of two runs (plain lines in every format).
    fn preamble(&self) -> Vec<&dyn Section> {
        self.setup.iter().map(|s| s as &dyn Section).collect()
    }
    /// Every section, the table and its scan both (JSON keeps them all).
    fn sections(&self) -> Vec<&dyn Section> {
        let mut out: Vec<&dyn Section> = vec![&self.table];
        out.extend(self.scan.as_ref().map(|s| s as &dyn Section));
        out.extend(self.distribution.as_ref().map(|d| d as &dyn Section));
        out.extend(self.telemetry.as_ref().map(|t| t as &dyn Section));
        out.extend(self.percentiles.as_ref().map(|p| p as &dyn Section));
        out
    }
    fn known(&self) -> &'static [&'static str] {
        section::COMPARE
    }
}

impl CompareView {
    fn of(
        table: ComparisonTable,
        telemetry: Option<TelemetryAb>,
        percentiles: Option<PercentileTable>,
        setup: Option<Data>,
        buckets: &Buckets,
    ) -> Self {
        let pairs = table.rows.iter().any(|r| r.pair.is_some());
        Self {
            setup,
            distribution: pairs.then(|| crate::distribution(&table, buckets)),
            scan: crate::size_scan(&table),
            table,
            telemetry,
            percentiles,
            buckets: buckets.clone(),
        }
    }

    /// The setup differences, then the sections `wanted` names (all when empty): the
    /// scan in the table's place when there is one.
    pub fn text(&self, format: Format, wanted: &[String]) -> Result<String, ReportError> {
        let shown = self
            .sections()
            .into_iter()
            .filter(|s| !(s.id() == SectionId::Comparison && self.scan.is_some()));
        let picked = pick(shown, wanted, self.known())?;
        let mut out = String::new();
        if let Some(setup) = &self.setup {
            // Plain lines before the tables in every format, as a preamble.
            out += &section::render(&[setup], Format::Text);
            out.push('\n');
        }
        out += &section::render(&picked, format);
        Ok(out)
    }

    /// The sections `wanted` names (all when empty) by id, the table and its scan both,
    /// and `setup_differences` when the setups differ.
    pub fn json(&self, wanted: &[String]) -> Result<Map<String, Value>, ReportError> {
        self.json_picked(wanted)
    }

    /// The per-pair drill-down of the comparison, written under `dir`.
    pub fn write_drilldown(
        &self,
        dir: &Path,
        info: &RunInfo,
        ms: &[MeasurementRecord],
    ) -> Result<(), ReportError> {
        crate::write_drilldown(dir, info, ms, &self.table, &self.buckets).map(|_| ())
    }
}

/// Why a run has no two variants to compare: those it measured, and those it could not.
fn nothing_to_compare(info: &RunInfo, ms: &[MeasurementRecord]) -> ReportError {
    let measured = crate::measured_variants(ms);
    let why: Vec<String> = info
        .unavailable
        .iter()
        .map(|u| format!("{} was unavailable: {}", u.variant, u.reason))
        .collect();
    ReportError::NothingToCompare {
        run: info.id,
        count: measured.len(),
        measured: measured.join(", "),
        why: if why.is_empty() {
            String::new()
        } else {
            format!(" ({})", why.join("; "))
        },
    }
}

/// A fingerprint field two runs differ in.
#[derive(Serialize)]
pub struct SetupDifference {
    pub field: String,
    pub run_a: i64,
    pub value_a: String,
    pub run_b: i64,
    pub value_b: String,
}

/// Comparing runs from different setups is allowed, never silent.
fn setup_differences(a: &RunInfo, b: &RunInfo) -> Vec<SetupDifference> {
    a.fingerprint
        .diff(&b.fingerprint)
        .into_iter()
        .map(|d| SetupDifference {
            field: d.field.to_string(),
            run_a: a.id,
            value_a: d.a.unwrap_or_default(),
            run_b: b.id,
            value_b: d.b.unwrap_or_default(),
        })
        .collect()
}

/// The differences as a section: a line each under a lead, and the list as data.
fn setup_section(diffs: &[SetupDifference]) -> Result<Option<Data>, ReportError> {
    if diffs.is_empty() {
        return Ok(None);
    }
    let mut lines = String::from("The two runs come from different setups:\n");
    for d in diffs {
        lines += &format!(
            "  {}: run {} {:?}  vs  run {} {:?}\n",
            d.field, d.run_a, d.value_a, d.run_b, d.value_b
        );
    }
    Ok(Some(Data::lines(
        SectionId::SetupDifferences,
        "Setup differences",
        &lines,
        to_json(&diffs)?,
    )))
}
