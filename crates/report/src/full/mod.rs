//! `perflab report`: everything known about one or more runs in one document — what was
//! compared with what and whether the difference is real, the curves, maps and
//! distributions behind the tables, the telemetry that moved with each significant
//! difference, and the setups the runs came from.
//!
//! The report is built once as parts, each a [`Section`] of blocks ([`crate::doc`]) that
//! `--section` can pick, and rendered as terminal text, Markdown, 72-column mail or a
//! self-contained HTML page; the same content goes out as JSON for scripts.

mod comparisons;
mod env;
mod figures;
mod input;
mod latency;
mod lock_wait;
mod per_run;
mod quality;
mod runs;
mod spans;
mod threads;

use perflab_stats::{Procedure, StatsConfig};
use serde_json::{Map, Value};

use crate::doc::Block;
use crate::error::ReportError;
use crate::section::data::Data;
use crate::section::{self, Format, Section};
use crate::tables::compare::design::Design;

use crate::section::SectionId;
pub use env::{environment_differences, EnvDifference};
pub use input::{ReportOptions, RunData};

/// The assembled report: its title heading, then its parts, each a [`Section`] with its
/// blocks and its JSON (every part of [`section::REPORT`] that has data, keyed by its id).
#[derive(Clone, Debug)]
pub struct FullReport {
    pub title: String,
    pub parts: Vec<Part>,
}

/// One part of the report (`comparison`, `latency`, …) as a section.
pub type Part = Data;

/// The report's title over its parts, as one section.
struct Titled<'a>(&'a FullReport, Vec<&'a dyn Section>);

impl Section for Titled<'_> {
    fn id(&self) -> SectionId {
        SectionId::Report
    }
    fn title(&self) -> String {
        self.0.title.clone()
    }
    fn blocks(&self) -> Vec<Block> {
        let mut out = vec![Block::heading(1, self.0.title.clone())];
        out.extend(self.1.iter().flat_map(|s| s.blocks()));
        out
    }
}

impl FullReport {
    fn all(&self) -> Vec<&dyn Section> {
        self.parts.iter().map(|p| p as &dyn Section).collect()
    }

    /// The parts whose id `wanted` names (all when it is empty) under the title, in
    /// `format`; an unknown id is an error that lists the known ones.
    pub fn render_parts(&self, format: Format, wanted: &[String]) -> Result<String, String> {
        let parts = section::select(self.all(), wanted, section::REPORT)?;
        Ok(Titled(self, parts).render(format))
    }

    pub fn render(&self, format: Format) -> String {
        Titled(self, self.all()).render(format)
    }

    /// All the blocks, title first.
    pub fn blocks(&self) -> Vec<Block> {
        Titled(self, self.all()).blocks()
    }

    pub fn text(&self) -> String {
        self.render(Format::Text)
    }

    /// Plain text no wider than 72 columns, for a mailing-list reply.
    pub fn mail(&self) -> String {
        self.render(Format::Mail)
    }

    pub fn markdown(&self) -> String {
        self.render(Format::Markdown)
    }

    pub fn html(&self) -> String {
        self.render(Format::Html)
    }

    /// The title and every part's JSON, keyed by id.
    pub fn json(&self) -> Value {
        let mut out = Map::new();
        out.insert("title".into(), Value::String(self.title.clone()));
        for p in &self.parts {
            if let Some(j) = p.json() {
                out.insert(p.id.as_str().into(), j);
            }
        }
        Value::Object(out)
    }
}

/// Gathers the report's blocks part by part.
struct Parts(Vec<Part>);

impl Parts {
    /// Blocks added to `blocks` since the last cut become the part `id`, with `json` as
    /// its JSON (kept even when the part has nothing to print: scripts read an empty list).
    fn cut(&mut self, id: SectionId, title: &str, json: Option<Value>, blocks: &mut Vec<Block>) {
        self.0.push(Part {
            id,
            title: title.into(),
            blocks: std::mem::take(blocks),
            json,
        });
    }
}

/// Builds the report of `runs`: with one run, its variants against the baseline; with
/// several, each later run against the first, matched point by point.
pub fn build_report(runs: &[RunData], opts: &ReportOptions) -> Result<FullReport, ReportError> {
    if runs.is_empty() {
        return Err(ReportError::NoRuns);
    }
    use SectionId::*;
    let title = runs::title(runs);
    let mut blocks = Vec::new();
    let mut parts = Parts(Vec::new());

    let diffs = env::section(runs, &mut blocks);
    let environment = serde_json::to_value(&diffs)?;
    parts.cut(Environment, "Environment", Some(environment), &mut blocks);
    runs::section(runs, &mut blocks);
    let infos = serde_json::to_value(runs.iter().map(|r| &r.info).collect::<Vec<_>>())?;
    parts.cut(Runs, "Runs", Some(infos), &mut blocks);

    let (compared, designs) = comparisons::section(runs, opts, &mut blocks)?;
    parts.cut(Comparison, "Comparisons", Some(compared), &mut blocks);
    let quality = quality::section(runs, opts, &mut blocks)?;
    parts.cut(
        Quality,
        "Repetitions and spread",
        Some(quality),
        &mut blocks,
    );
    let latency = latency::section(runs, opts, &mut blocks);
    parts.cut(Latency, "Latency distributions", Some(latency), &mut blocks);
    let spans = spans::section(runs, opts, &mut blocks);
    parts.cut(Spans, "Where the time goes", Some(spans), &mut blocks);
    let threads = threads::section(runs, opts, &mut blocks);
    parts.cut(Threads, "Threads", Some(threads), &mut blocks);
    let lock_wait = lock_wait::section(runs, &mut blocks);
    parts.cut(LockWait, "Lock waits", Some(lock_wait), &mut blocks);
    for part in per_run::PER_RUN {
        let json = per_run::section(part, runs, &mut blocks)?;
        parts.cut(part.id, part.title, Some(json), &mut blocks);
    }
    blocks.push(Block::heading(2, "How to read this report"));
    blocks.push(Block::para(how_to_read(&opts.stats, &designs)));
    parts.cut(HowToRead, "How to read this report", None, &mut blocks);
    Ok(FullReport {
        title,
        parts: parts.0,
    })
}

/// The footer: the statistics, and what each design present in the report means, written
/// from the procedure the numbers used ([`perflab_stats::Procedure`]).
fn how_to_read(cfg: &StatsConfig, designs: &[Design]) -> String {
    how_to_read_from(&cfg.procedure(), designs)
}

/// [`how_to_read`] of any procedure: the text follows the method, whatever it is.
fn how_to_read_from(p: &Procedure, designs: &[Design]) -> String {
    let verdicts: Vec<String> = p
        .verdicts
        .iter()
        .map(|(word, rule)| format!("{word}: {rule}"))
        .collect();
    let mut text = format!(
        "Medians with {level} {summary} intervals. Change = B/A - 1 from {paired} (one run) \
         or {unpaired}; the verdict rests on {test}, or on {fallback}; {family}. \
         Against the noise threshold of {noise}% (alpha {alpha}): {verdicts}. A row alone \
         needs at least {min} repetitions per side. Outliers are marked, never removed.",
        level = p.summary_level,
        summary = p.summary_interval,
        paired = p.paired_change,
        unpaired = p.unpaired_change,
        test = p.test,
        fallback = p.fallback,
        family = p.family,
        alpha = p.alpha,
        noise = p.noise_pct,
        verdicts = verdicts.join("; "),
        min = p.min_reps_alone,
    );
    for d in designs {
        text.push(' ');
        text.push_str(match d {
            Design::InterleavedWithinOneRun => {
                "Variants of one run were measured in interleaved order (A B A B at every \
                 point), so slow drift of the machine falls on both sides alike."
            }
            Design::SeparateRuns => {
                "Runs compared with each other were measured separately, not interleaved: \
                 any drift of the machine between them is confounded with the change. Each \
                 such comparison shows its drift guard, the runs' timing probes; a probe \
                 that moved beyond the noise threshold is a WARNING. A change that can be \
                 made a variant of one run is best measured so."
            }
        });
    }
    text.push_str(" Definitions: docs/METHODOLOGY.md.");
    text
}

#[cfg(test)]
mod how_to_read_tests {
    use super::*;

    /// Issue 32: the footer described Mann-Whitney with `~` while the tables used paired
    /// log-ratios. Every part of the procedure in use appears in it, and nothing of another.
    #[test]
    fn the_footer_says_the_procedure_in_use_and_follows_a_changed_one() {
        let cfg = StatsConfig::default();
        let p = cfg.procedure();
        let text = how_to_read(&cfg, &[Design::InterleavedWithinOneRun]);
        for part in [
            p.paired_change,
            p.unpaired_change,
            p.test,
            p.fallback,
            p.summary_interval,
        ] {
            assert!(text.contains(part), "{part:?} missing from {text}");
        }
        for (word, rule) in p.verdicts {
            assert!(
                text.contains(&format!("{word}: {rule}")),
                "{word} missing: {text}"
            );
        }
        assert!(!text.contains("otherwise it is ~"), "{text}");
        assert!(!text.contains("Mann-Whitney U test with"), "{text}");
        // A test build with another method: the words follow it.
        let other = Procedure {
            test: "a sign test on the pairs",
            min_reps_alone: 6,
            ..p
        };
        let text = how_to_read_from(&other, &[]);
        assert!(
            text.contains("the verdict rests on a sign test on the pairs"),
            "{text}"
        );
        assert!(text.contains("at least 6 repetitions per side"), "{text}");
    }
}
