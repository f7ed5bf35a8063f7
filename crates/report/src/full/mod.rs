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
    // The seed's own table first: what was run, on which machine, comes after it.
    let (compared, _designs) = comparisons::section(runs, opts, &mut blocks)?;
    parts.cut(Comparison, "Comparisons", Some(compared), &mut blocks);
    runs::section(runs, &mut blocks);
    let infos = serde_json::to_value(runs.iter().map(|r| &r.info).collect::<Vec<_>>())?;
    parts.cut(Runs, "Runs", Some(infos), &mut blocks);
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
        let with_table = runs
            .iter()
            .filter(|r| (part.build)(&r.info, &r.ms).is_some())
            .map(|r| {
                // Compared: with another run, or its variants with each other.
                let compared = runs.len() > 1 || measured_variants_of(r) > 1;
                (r, part.compared && compared)
            });
        let id = Table(part.id.as_str());
        point_to_long_tables(id, with_table, &opts.db_flag, &mut blocks);
        parts.cut(id, part.title, Some(json), &mut blocks);
    }
    blocks.push(Block::para(how_to_read(&opts.stats)));
    parts.cut(HowToRead, "How to read this report", None, &mut blocks);
    Ok(FullReport {
        title,
        parts: parts.0,
    })
}

/// A per-run table longer than this is a sentence in the report pointing to `show`,
/// where it is printed whole: a report is read in a minute, and 88 rows of counters (a
/// memxfer scan) are not; its JSON keeps every row.
const LONGEST_TABLE: usize = 24;

/// Whether a per-run table (`point`, `variant`, … columns) has two variants' rows at one
/// point: only then can a comparison hold its figures (a variant whose measurements were
/// all ineffective has none to compare).
fn two_variants_at_a_point(t: &crate::doc::Table) -> bool {
    if t.head.first().map(String::as_str) != Some("point")
        || t.head.get(1).map(String::as_str) != Some("variant")
    {
        return false;
    }
    let mut seen: Vec<(&str, &str)> = Vec::new();
    for r in &t.rows {
        if let (Some(p), Some(v)) = (r.first(), r.get(1)) {
            if seen.iter().any(|(sp, sv)| sp == p && sv != v) {
                return true;
            }
            seen.push((p, v));
        }
    }
    false
}

/// How many variants `run` measured.
fn measured_variants_of(run: &RunData) -> usize {
    crate::measured_variants(&run.ms).len()
}

/// Replaces each table of `blocks` (one per run of `with_table`, in order, with whether
/// the report's comparisons hold its figures) that is longer than [`LONGEST_TABLE`] rows,
/// or whose figures the comparisons hold, with where to read it: said once (issue 34
/// item 3: idle-ipi's counters were 14 lines of its mail, the same medians as the
/// telemetry comparison its table names).
fn point_to_long_tables<'a>(
    id: SectionId,
    mut with_table: impl Iterator<Item = (&'a RunData, bool)>,
    db_flag: &str,
    blocks: &mut Vec<Block>,
) {
    let mut i = 0;
    while i < blocks.len() {
        let Block::Table(t) = &blocks[i] else {
            i += 1;
            continue;
        };
        let Some((run, compared)) = with_table.next() else {
            return;
        };
        let compared = compared && two_variants_at_a_point(t);
        if t.rows.len() <= LONGEST_TABLE && !compared {
            i += 1;
            continue;
        }
        let rows = t.rows.len();
        let what = match compared {
            // The comparison names the columns; the count says how big `show` is.
            true => ", compared in the telemetry above".to_string(),
            false => {
                let columns: Vec<&str> = t
                    .head
                    .iter()
                    .enumerate()
                    .filter(|(c, h)| !t.left.contains(c) && h.as_str() != "reps")
                    .map(|(_, h)| h.as_str())
                    .collect();
                format!(", of {}", columns.join(", "))
            }
        };
        // The table's caption and notes describe it; `show` prints them with it.
        while matches!(blocks.get(i + 1), Some(Block::Note(_))) {
            blocks.remove(i + 1);
        }
        if i > 0 && matches!(blocks[i - 1], Block::Caption(_)) {
            blocks.remove(i - 1);
            i -= 1;
        }
        // The heading over it leads the sentence: two lines fewer than a heading.
        let mut lead = String::new();
        if i > 0 {
            if let Block::Heading { text, .. } = &blocks[i - 1] {
                lead = format!("{text}: ");
                blocks.remove(i - 1);
                i -= 1;
            }
        }
        blocks[i] = Block::para(format!(
            "{lead}{rows} rows, one per point and variant{what}: perflab show {} --section \
             {}{db_flag}",
            run.info.id,
            id.as_str()
        ));
        i += 1;
    }
}

/// The footer, one line: how the medians' intervals are made, and where the method and
/// every term of the tables is defined. Each table says its own verdict rule and design
/// in its header (`verdict_rule`, `Design::line`), so the footer does not repeat them.
fn how_to_read(cfg: &StatsConfig) -> String {
    how_to_read_from(&cfg.procedure())
}

/// [`how_to_read`] of any procedure: the text follows the method, whatever it is.
fn how_to_read_from(p: &Procedure) -> String {
    format!(
        "Medians with {} {} CIs; method: docs/METHODOLOGY.md",
        p.summary_level, p.summary_interval
    )
}

#[cfg(test)]
mod how_to_read_tests {
    use super::*;

    /// Issue 32: the footer described Mann-Whitney with `~` while the tables used paired
    /// log-ratios; issue 34: it was a page. It is one mail line, says the interval in use
    /// (and follows a changed one), and points to the method.
    #[test]
    fn the_footer_is_one_line_that_says_the_interval_in_use() {
        let cfg = StatsConfig::default();
        let text = how_to_read(&cfg);
        assert_eq!(
            text,
            "Medians with 95% percentile-bootstrap CIs; method: docs/METHODOLOGY.md"
        );
        assert!(text.chars().count() <= crate::doc::text::MAIL_WIDTH);
        let other = Procedure {
            summary_interval: "BCa-bootstrap",
            ..cfg.procedure()
        };
        assert!(how_to_read_from(&other).contains("95% BCa-bootstrap CIs"));
    }
}

#[cfg(test)]
mod pointer_tests {
    use super::*;
    use crate::doc::Table;

    fn table(rows: &[(&str, &str)]) -> Table {
        Table::new(
            vec!["point".into(), "variant".into(), "task ms".into()],
            rows.iter()
                .map(|(p, v)| vec![p.to_string(), v.to_string(), "1".into()])
                .collect(),
            vec![0, 1],
        )
    }

    /// A run's counters are "compared in the telemetry above" only where two variants
    /// have rows at one point: idle-ipi here had poll-only's every measurement
    /// ineffective, so its counters were all's alone and the pointer would have lied.
    #[test]
    fn a_table_is_compared_only_with_two_variants_at_a_point() {
        assert!(!two_variants_at_a_point(&table(&[
            ("0-0", "all"),
            ("0-1", "all")
        ])));
        assert!(two_variants_at_a_point(&table(&[
            ("0-0", "all"),
            ("0-1", "all"),
            ("0-1", "poll-only"),
        ])));
        let mut other = table(&[("0-0", "all"), ("0-0", "poll-only")]);
        other.head[0] = "pair".into();
        assert!(!two_variants_at_a_point(&other));
    }
}
