//! The summary of one run on its own: for every (point, variant) the median with its
//! bootstrap interval, the spread, Tukey outliers, and a warning where the spread is too
//! wide to conclude anything at the noise threshold. This is what a run with a single
//! measurable variant has instead of a comparison.

pub(crate) mod text;

use perflab_core::record::{MeasurementRecord, MeasurementStatus, RunId, RunInfo};
use perflab_core::Params;
use perflab_stats::{reps_for_half_width, Sample, StatsConfig, Summary, PRACTICAL_REPS};
use serde::Serialize;

use crate::error::ReportError;
use crate::select::{choose_metric, measured_variants, Labeler, MetricChoice, SideValues};
use crate::tables::compare::{unavailable_of, UnavailableNote};

/// One (point, variant) of a run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SummaryRow {
    /// `4-24` for CPU pairs, else the parameters that vary across points.
    pub label: String,
    pub pair: Option<(u32, u32)>,
    pub point: u32,
    pub params: Params,
    pub variant: String,
    /// Successful measurements with a finite value of the metric.
    pub n_ok: usize,
    pub failed: u32,
    /// Successful measurements without a finite value of the metric.
    pub missing: u32,
    /// `None` when no measurement gave a value.
    pub summary: Option<Summary>,
    /// Half the width of the median's interval, in percent of the median; `None` when
    /// there is no interval or the median is 0.
    pub ci_half_width_pct: Option<f64>,
    /// Repetition numbers of the values outside Tukey's fences (kept in every figure).
    pub outlier_reps: Vec<u32>,
    /// Why this row's figures cannot settle a question at the noise threshold.
    pub warning: Option<String>,
    /// The first failure message here, so a reader sees why without the database.
    pub first_error: Option<String>,
}

impl SummaryRow {
    pub fn outliers(&self) -> usize {
        self.outlier_reps.len()
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SummaryTable {
    pub run: RunId,
    /// `None` when no measurement of the run succeeded with any metric.
    pub metric: Option<MetricChoice>,
    pub config: StatsConfig,
    pub rows: Vec<SummaryRow>,
    pub unavailable: Vec<UnavailableNote>,
    /// Table-wide remarks (failures, missing values, too few repetitions).
    pub notes: Vec<String>,
    /// The roles of the rows' parameters (which is a size axis), for the views.
    #[serde(skip)]
    pub param_roles: perflab_core::ParamRoles,
}

impl SummaryTable {
    pub fn to_json(&self) -> Result<String, ReportError> {
        Ok(serde_json::to_string_pretty(self)?)
    }

    // The blocks are in `blocks`, from the cells of `summary_text`.

    /// The row of CPU pair `a`-`b` measured with `variant`.
    pub fn pair_row(&self, a: u32, b: u32, variant: &str) -> Option<&SummaryRow> {
        self.rows
            .iter()
            .find(|r| r.pair == Some((a, b)) && r.variant == variant)
    }
}

/// Summarizes every (point, variant) of `run`, in plan order: points by index, variants
/// in the order the run first measured them. A run whose measurements all failed still
/// gets its rows (with the failures), so that `perflab show` says why.
pub fn summarize_run(
    run: &RunInfo,
    ms: &[MeasurementRecord],
    metric: Option<&str>,
    cfg: &StatsConfig,
) -> Result<SummaryTable, ReportError> {
    summarize_where(run, ms, metric, cfg, |_| true)
}

/// [`summarize_run`] over the records `keep` selects.
pub(crate) fn summarize_where(
    run: &RunInfo,
    ms: &[MeasurementRecord],
    metric: Option<&str>,
    cfg: &StatsConfig,
    keep: impl Fn(&MeasurementRecord) -> bool,
) -> Result<SummaryTable, ReportError> {
    let chosen = match choose_metric(run, ms, metric) {
        Ok(c) => Some(c),
        Err(ReportError::NoData { .. }) if metric.is_none() => None,
        Err(e) => return Err(e),
    };
    let selected: Vec<&MeasurementRecord> = ms.iter().filter(|m| keep(m)).collect();
    let variants = measured_variants(ms);
    // Each point's records, in the order given: found once, not once per point and
    // variant (a run of 50,000 records and 50 points read them 150 times).
    let mut by_point: std::collections::BTreeMap<u32, Vec<&MeasurementRecord>> = Default::default();
    for m in &selected {
        by_point.entry(m.point).or_default().push(m);
    }
    // A variant may override parameters; the first measurement at a point names it.
    let params: Vec<Params> = by_point
        .values()
        .map(|at| {
            at.iter()
                .min_by_key(|m| m.seq)
                .map(|m| m.params.clone())
                .unwrap_or_default()
        })
        .collect();
    let roles = crate::hints::param_roles(run);
    let labeler = Labeler::new(&roles, params.iter());
    let metric_name = chosen.as_ref().map_or("", |c| c.name.as_str());

    let mut rows = Vec::new();
    for ((&point, at), params) in by_point.iter().zip(&params) {
        for variant in &variants {
            let here = at.iter().copied().filter(|m| &m.variant == variant);
            let side = SideValues::gather(here, metric_name);
            if !side.measured() {
                continue;
            }
            rows.push(row(
                labeler.label(params),
                labeler.pair(params),
                params,
                point,
                variant,
                side,
                cfg,
            ));
        }
    }
    let mut notes = table_notes(&rows, chosen.as_ref(), cfg, ms.is_empty());
    if chosen.is_none() && !ms.is_empty() {
        notes.insert(0, nothing_succeeded(&selected, run.spec.disturbed_above()));
    }
    notes.extend(crate::tables::coverage::table_notes(
        &roles,
        selected.iter().copied(),
    ));
    Ok(SummaryTable {
        run: run.id,
        metric: chosen,
        config: *cfg,
        rows,
        unavailable: unavailable_of(&[run]),
        notes,
        param_roles: roles,
    })
}

fn row(
    label: String,
    pair: Option<(u32, u32)>,
    params: &Params,
    point: u32,
    variant: &str,
    side: SideValues,
    cfg: &StatsConfig,
) -> SummaryRow {
    let summary = Sample::new(side.values.clone())
        .ok()
        .map(|s| Summary::new(&s, cfg));
    let ci_half_width_pct = summary.as_ref().and_then(half_width_pct);
    let outlier_reps = summary
        .as_ref()
        .map(|s| {
            s.outliers
                .iter()
                .filter_map(|&i| side.reps.get(i).copied())
                .collect()
        })
        .unwrap_or_default();
    let warning = summary
        .as_ref()
        .and_then(|s| spread_warning(s, ci_half_width_pct, cfg));
    SummaryRow {
        label,
        pair,
        point,
        params: params.clone(),
        variant: variant.to_string(),
        n_ok: side.values.len(),
        failed: side.failed,
        missing: side.missing,
        summary,
        ci_half_width_pct,
        outlier_reps,
        warning,
        first_error: side.first_error,
    }
}

fn half_width_pct(s: &Summary) -> Option<f64> {
    if s.median_ci_degenerate || s.median == 0.0 {
        return None;
    }
    let hw = (s.median_ci.1 - s.median_ci.0) / 2.0 / s.median.abs() * 100.0;
    hw.is_finite().then_some(hw)
}

/// Says when the interval is too wide to see a change of `noise_pct`, and roughly how
/// many repetitions would narrow it (`perflab_stats::reps_for_half_width`).
pub(crate) fn spread_warning(s: &Summary, hw: Option<f64>, cfg: &StatsConfig) -> Option<String> {
    if s.median_ci_degenerate {
        return Some(format!(
            "a single repetition: nothing is known about the spread; repeat it \
             (at least {} per variant before a comparison can decide)",
            cfg.procedure().min_reps_alone
        ));
    }
    if s.median == 0.0 {
        return (s.median_ci.0 != s.median_ci.1)
            .then(|| "the median is 0, so the spread cannot be put in percent of it".to_string());
    }
    let hw = hw?;
    if hw <= cfg.noise_pct {
        return None;
    }
    let head = format!(
        "the {} CI spans ±{:.2}% of the median, wider than the {}% noise threshold: a change \
         that small cannot be told from noise here",
        cfg.confidence_label(),
        hw,
        cfg.noise_pct
    );
    if cfg.noise_pct <= 0.0 {
        return Some(head);
    }
    let advice = match reps_for_half_width(s.n, hw, cfg.noise_pct) {
        None => format!(
            "repetitions will not fix it (it would take over {PRACTICAL_REPS}); look for \
             the cause of the spread (other load, frequency changes, placement)"
        ),
        Some(need) => format!(
            "about {need} repetitions (now {}) would narrow it to ±{}%, as the CI \
             shrinks roughly as 1/sqrt(n)",
            s.n, cfg.noise_pct
        ),
    };
    Some(format!("{head}; {advice}"))
}

/// Why a run has no value to summarize, from its headline measurements. Disturbed and
/// ineffective ones ran and are kept, only left out of the figures: "no measurement
/// succeeded" said a run of 8 disturbed measurements had failed.
fn nothing_succeeded(ms: &[&MeasurementRecord], disturbed_above: f64) -> String {
    use perflab_core::record::MeasurementStatus::*;
    let headline: Vec<&&MeasurementRecord> = ms.iter().filter(|m| m.is_headline()).collect();
    let count =
        |f: fn(&MeasurementStatus) -> bool| headline.iter().filter(|m| f(&m.status)).count();
    let failed = count(|s| matches!(s, Failed(_)));
    let disturbed = count(|s| matches!(s, Disturbed(_)));
    let ineffective = count(|s| matches!(s, Ineffective(_)));
    let n = headline.len();
    if disturbed + ineffective == 0 {
        return "no measurement succeeded: there is no value to summarize".to_string();
    }
    let disturbed_why = format!("other work took more than {disturbed_above}% of their CPUs");
    let ineffective_why = "a knob of their variant did not hold";
    let failures = match failed {
        0 => "none failed".to_string(),
        f => format!("{f} failed"),
    };
    let what = if disturbed == n {
        format!("all {n} measurements were disturbed ({disturbed_why})")
    } else if ineffective == n {
        format!("all {n} measurements were ineffective ({ineffective_why})")
    } else {
        let mut parts = Vec::new();
        if disturbed > 0 {
            parts.push(format!("{disturbed} disturbed ({disturbed_why})"));
        }
        if ineffective > 0 {
            parts.push(format!("{ineffective} ineffective ({ineffective_why})"));
        }
        format!(
            "none of the {n} measurements gave a value: {}",
            parts.join(", ")
        )
    };
    format!("{what}; {failures}: they are kept but not counted, so there is no value to summarize")
}

fn table_notes(
    rows: &[SummaryRow],
    metric: Option<&MetricChoice>,
    cfg: &StatsConfig,
    nothing_measured: bool,
) -> Vec<String> {
    let mut notes = Vec::new();
    if nothing_measured {
        notes.push("no measurement has finished yet".to_string());
        return notes;
    }
    let failed: u32 = rows.iter().map(|r| r.failed).sum();
    if failed > 0 {
        let first = rows
            .iter()
            .find_map(|r| r.first_error.as_ref())
            .map(|e| format!("; first: {e}"))
            .unwrap_or_default();
        notes.push(format!(
            "{failed} headline measurements failed and are not counted{first}"
        ));
    }
    let missing: u32 = rows.iter().map(|r| r.missing).sum();
    if let (true, Some(m)) = (missing > 0, metric) {
        notes.push(format!(
            "{missing} successful measurements had no finite value of {} and are not counted",
            m.name
        ));
    }
    // The floor is the procedure's own (issue 32: this said Mann-Whitney's 4 while a
    // 2-repetition comparison, read with the t, gave `better`).
    let floor = cfg.procedure().min_reps_alone;
    let few = rows.iter().filter(|r| r.n_ok > 0 && r.n_ok < floor).count();
    if few > 0 {
        notes.push(format!(
            "{few} row(s) have fewer than {floor} repetitions: a median, but no spread, so a \
             comparison with them gives no verdict unless other rows lend it theirs"
        ));
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(values: &[f64]) -> Summary {
        Summary::new(
            &Sample::new(values.to_vec()).unwrap(),
            &StatsConfig::default(),
        )
    }

    #[test]
    fn warning_appears_only_beyond_the_noise_threshold() {
        let cfg = StatsConfig::default();
        let quiet = summary(&[100.0, 100.2, 99.9, 100.1, 100.0]);
        assert_eq!(spread_warning(&quiet, half_width_pct(&quiet), &cfg), None);
        let noisy = summary(&[100.0, 110.0, 90.0, 105.0, 95.0]);
        let hw = half_width_pct(&noisy).unwrap();
        assert!(hw > 1.0, "{hw}");
        let w = spread_warning(&noisy, Some(hw), &cfg).unwrap();
        // n = 5 and a half-width of hw% need about 5 * hw^2 repetitions for 1%.
        let expected = reps_for_half_width(5, hw, 1.0).unwrap();
        assert!(
            w.contains(&format!("about {expected} repetitions (now 5)")),
            "{w}"
        );
        let loose = StatsConfig {
            noise_pct: 20.0,
            ..cfg
        };
        assert_eq!(spread_warning(&noisy, Some(hw), &loose), None);
        let one = summary(&[5.0]);
        let w = spread_warning(&one, half_width_pct(&one), &cfg).unwrap();
        assert!(
            w.contains("single repetition") && w.contains("at least 2 per variant"),
            "{w}"
        );
        let wild = summary(&[1.0, 1000.0, 3.0, 500.0, 2.0]);
        let w = spread_warning(&wild, half_width_pct(&wild), &cfg).unwrap();
        assert!(w.contains("will not fix it"), "{w}");
    }

    fn measured(seq: u32, status: MeasurementStatus) -> MeasurementRecord {
        MeasurementRecord {
            seq,
            point: 0,
            params: Params::default(),
            variant: "v".into(),
            rep: seq,
            status,
            started_at: 0.0,
            elapsed_s: 1.0,
            output: Default::default(),
            telemetry: Vec::new(),
            role: Default::default(),
            monitors: Vec::new(),
        }
    }

    fn notes_of(ms: &[MeasurementRecord]) -> Vec<String> {
        summarize_run(&run_of(ms), ms, None, &StatsConfig::default())
            .unwrap()
            .notes
    }

    fn run_of(ms: &[MeasurementRecord]) -> RunInfo {
        RunInfo {
            id: 1,
            created_at: 0.0,
            study: "s".into(),
            workload: "null".into(),
            label: None,
            status: perflab_core::record::RunStatus::Complete,
            spec: serde_json::from_value(serde_json::json!({"name": "s"})).unwrap(),
            fingerprint: perflab_core::Fingerprint::from_json(serde_json::json!({})),
            unavailable: Vec::new(),
            planned: ms.len() as u32,
            done: ms.len() as u32,
            failed: 0,
            ineffective: 0,
            uid: String::new(),
        }
    }

    /// A run whose measurements were all disturbed said "no measurement succeeded", as if
    /// they had failed: it says what happened to them instead.
    #[test]
    fn a_run_with_no_value_says_what_became_of_its_measurements() {
        use crate::section::Section;
        use MeasurementStatus::*;
        let disturbed = |seq| measured(seq, Disturbed("other work took 35% of CPU 1".into()));
        let all: Vec<_> = (0..8).map(disturbed).collect();
        let text = summarize_run(&run_of(&all), &all, None, &StatsConfig::default())
            .unwrap()
            .render(crate::Format::Text);
        assert!(
            text.starts_with("run 1: no value to summarize (see the notes)\n"),
            "{text}"
        );
        assert_eq!(
            notes_of(&all)[0],
            "all 8 measurements were disturbed (other work took more than 10% of their \
             CPUs); none failed: they are kept but not counted, so there is no value to \
             summarize"
        );
        let mut mixed: Vec<_> = (0..5).map(disturbed).collect();
        mixed.extend((5..7).map(|s| measured(s, Ineffective("cpuidle=poll-only: ...".into()))));
        mixed.push(measured(7, Failed("exit 1".into())));
        assert_eq!(
            notes_of(&mixed)[0],
            "none of the 8 measurements gave a value: 5 disturbed (other work took more than \
             10% of their CPUs), 2 ineffective (a knob of their variant did not hold); 1 \
             failed: they are kept but not counted, so there is no value to summarize"
        );
        let failed: Vec<_> = (0..3)
            .map(|s| measured(s, Failed("exit 1".into())))
            .collect();
        assert_eq!(
            notes_of(&failed)[0],
            "no measurement succeeded: there is no value to summarize"
        );
    }
}
