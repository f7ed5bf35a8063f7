//! `perflab show`: one run — its header (fingerprint, plan status), summary and the
//! tables beside it — or one CPU pair's drill-down, or one measurement's threads.

use perflab_core::record::{MeasurementRecord, RunInfo, RunStatus};
use perflab_stats::StatsConfig;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::error::ReportError;
use crate::section::SectionId;
use crate::section::{self, Format, Section};
use crate::views::data::{pick, to_json, Data};
use crate::views::parts;
use crate::views::View;

/// The sections of `show`: the header, always printed, then the selectable ones
/// ([`section::SHOW`]).
pub struct ShowView {
    /// The run as stored: its header lines in text, the whole record in JSON (`run`).
    pub header: Data,
    pub sections: Vec<Box<dyn Section>>,
    /// How many span comparisons the cap left out, in words.
    pub more: Option<String>,
}

/// `show --format json`: the run as stored and its sections by id, and what an adaptive
/// run reached (`$defs/show` in docs/schema/perflab.json).
#[derive(Serialize)]
pub struct ShowDoc<A: Serialize> {
    #[serde(flatten)]
    pub sections: Map<String, Value>,
    pub adaptive: Option<A>,
}

/// The view of a run, at most `span_cap` span comparisons kept (the text keeps a few,
/// JSON all); `db_flag` (` --db PATH` or nothing) goes into the commands it names (the
/// resume of an interrupted run, the `show` with every span comparison).
pub fn view(
    info: &RunInfo,
    ms: &[MeasurementRecord],
    span_cap: usize,
    db_flag: &str,
) -> Result<ShowView, ReportError> {
    let summary = crate::summarize_run(info, ms, None, &StatsConfig::default())?;
    let mut sections: Vec<Box<dyn Section>> = vec![Box::new(summary)];
    sections.extend(parts::run_sections(info, ms));
    let spans = parts::span_sections(info, ms, span_cap, db_flag);
    sections.extend(spans.sections);
    // An imported tool's own summary (hyperfine's user and system time are nowhere else).
    let mut head = header(info, db_flag);
    for line in crate::tables::tool_summary::lines(info, ms) {
        head += &format!("{line}\n");
    }
    Ok(ShowView {
        header: Data::lines(
            SectionId::Run,
            &format!("Run {}", info.id),
            &head,
            to_json(info)?,
        ),
        sections,
        more: spans.more,
    })
}

impl View for ShowView {
    fn preamble(&self) -> Vec<&dyn Section> {
        vec![&self.header]
    }
    fn sections(&self) -> Vec<&dyn Section> {
        self.sections.iter().map(|s| s.as_ref()).collect()
    }
    fn known(&self) -> &'static [&'static str] {
        section::SHOW
    }
    fn many(&self) -> &'static [SectionId] {
        &[SectionId::Spans]
    }
}

impl ShowView {
    /// The sections `wanted` names, without the header.
    fn pick(&self, wanted: &[String]) -> Result<Vec<&dyn Section>, ReportError> {
        pick(View::sections(self), wanted, self.known())
    }

    /// The header, a blank line, the sections `wanted` names (all when empty), and how
    /// many span comparisons were left out when the spans are among them.
    pub fn text(&self, wanted: &[String]) -> Result<String, ReportError> {
        let picked = self.pick(wanted)?;
        let mut out = section::render(&[&self.header], Format::Text);
        out.push('\n');
        out += &section::render(&picked, Format::Text);
        if let Some(more) = self
            .more
            .as_ref()
            .filter(|_| picked.iter().any(|s| s.id() == SectionId::Spans))
        {
            out += &format!("\n{more}\n");
        }
        Ok(out)
    }

    /// The document: `run` and the sections `wanted` names by id (`spans` a list), and
    /// `adaptive`.
    pub fn document<A: Serialize>(
        &self,
        wanted: &[String],
        adaptive: Option<A>,
    ) -> Result<ShowDoc<A>, ReportError> {
        Ok(ShowDoc {
            sections: self.json_picked(wanted)?,
            adaptive,
        })
    }
}

/// The drill-down of one pair: against the baseline where two variants were measured,
/// else the measured variant alone with the reason the other is missing.
pub fn pair(
    info: &RunInfo,
    ms: &[MeasurementRecord],
    a: u32,
    b: u32,
) -> Result<String, ReportError> {
    let variants = crate::measured_variants(ms);
    match parts::baseline_and_other(info, &variants) {
        Some((base, other)) => {
            let table =
                crate::compare_variants(info, ms, &base, &other, None, &StatsConfig::default())?;
            crate::render_pair(info, ms, &table, a, b)
        }
        None => {
            let v = variants
                .first()
                .ok_or(ReportError::NoMeasurements { run: info.id })?;
            crate::render_single_pair(info, ms, v, a, b)
        }
    }
}

/// The per-thread records of measurement `seq`.
pub fn threads(info: &RunInfo, ms: &[MeasurementRecord], seq: u32) -> Result<String, ReportError> {
    let m = ms
        .iter()
        .find(|m| m.seq == seq)
        .ok_or(ReportError::NoSuchMeasurement { run: info.id, seq })?;
    Ok(crate::render_threads(
        m,
        crate::tables::parallel::workers_of(info),
        &crate::hints::param_roles(info),
    ))
}

/// The header's lines: the run, its host and setup, what was unavailable, and how to
/// resume it when it was interrupted (a killed run too: its claim went with its
/// process).
fn header(info: &RunInfo, db_flag: &str) -> String {
    let f = &info.fingerprint;
    let s = |v: &Option<String>| v.as_deref().unwrap_or("?").to_string();
    // Written as the stored JSON wrote a missing count.
    let n = |v: Option<u64>| v.map_or("null".to_string(), |x| x.to_string());
    let mut out = format!(
        "run {}  {}  study {}  workload {}  {}  {}/{} measured, {} failed{}\n",
        info.id,
        crate::fmt::utc(info.created_at),
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
    out += &format!(
        "host {}  kernel {}  {}\n",
        s(&f.hostname),
        s(&f.kernel),
        s(&f.cpu_model)
    );
    out += &format!(
        "cpus {} ({} cores x {} threads)  idle {} / {}  cpufreq {}  isolated {}  thp {}\n",
        s(&f.online_cpus),
        n(f.cores),
        n(f.threads_per_core),
        s(&f.idle_driver),
        s(&f.idle_governor),
        s(&f.cpufreq_governor),
        s(&f.isolated_cpus),
        s(&f.thp)
    );
    out += &format!("cmdline {}\n", s(&f.cmdline));
    // What each variant set, which the JSON holds as the spec (issue 34 item 7).
    let names: Vec<&String> = info.spec.variants.iter().map(|v| &v.name).collect();
    if let Some(line) = crate::fmt::variant_settings(info, &names) {
        out += &format!("{line}\n");
    }
    if let Some(root) = &f.sysroot {
        out += &format!("system files read from the tree at {root}, not from this machine\n");
    }
    for u in &info.unavailable {
        out += &format!("variant {} unavailable: {}\n", u.variant, u.reason);
    }
    for (name, why) in &info.spec.unavailable_monitors {
        out += &format!("monitor {name} unavailable: {why}\n");
    }
    if info.status == RunStatus::Interrupted {
        out += &format!(
            "interrupted: resume with: perflab run --resume {}{db_flag}\n",
            info.id
        );
    }
    out
}
