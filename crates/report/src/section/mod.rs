//! One report path: every table `show`, `compare` and `report` print is a [`Section`],
//! described once as blocks ([`crate::doc`]), and one [`render`] writes any list of
//! sections as terminal text, 72-column mail, Markdown or an HTML page.

pub(crate) mod data;
pub mod id;
mod part;

pub use id::SectionId;
pub use part::{render, Format, Section};
use SectionId::*;

use crate::tables::PER_RUN;

/// `before`, every table of [`PER_RUN`] in its order, then `after`, as `N` ids (a wrong
/// `N` fails to compile): the lists of sections take a table registered there as it is.
const fn with_tables<const N: usize>(before: &[SectionId], after: &[SectionId]) -> [SectionId; N] {
    let mut out = [Title; N];
    let mut i = 0;
    while i < before.len() {
        out[i] = before[i];
        i += 1;
    }
    let mut j = 0;
    while j < PER_RUN.len() {
        out[i] = Table(PER_RUN[j].id.as_str());
        i += 1;
        j += 1;
    }
    let mut k = 0;
    while k < after.len() {
        out[i] = after[k];
        i += 1;
        k += 1;
    }
    out
}

const SHOW_BEFORE: [SectionId; 3] = [Summary, Threads, LockWait];
const SHOW_AFTER: [SectionId; 3] = [Latency, Percentiles, Spans];

/// The ids of the sections `perflab show` prints, in its order.
pub const SHOW_IDS: [SectionId; SHOW_BEFORE.len() + PER_RUN.len() + SHOW_AFTER.len()] =
    with_tables(&SHOW_BEFORE, &SHOW_AFTER);
/// [`SHOW_IDS`] as text, which the binary checks `--section` against.
pub const SHOW: &[&str] = &id::names(SHOW_IDS);

/// The ids of the sections `perflab compare` prints: the comparison table, or the scan
/// in its place when the size varies.
pub const COMPARE_IDS: [SectionId; 5] = [Comparison, Scan, Distribution, Telemetry, Percentiles];
/// [`COMPARE_IDS`] as text, which the binary checks `--section` against.
pub const COMPARE: &[&str] = &id::names(COMPARE_IDS);

/// The ids of the parts of `perflab report`, in its order. A part groups sections: the
/// `comparison` part holds each comparison's table or scan, distribution and what changed
/// with it; `latency` the seed-001 table and the percentiles.
pub const REPORT_IDS: [SectionId; REPORT_BEFORE.len() + PER_RUN.len() + 1] =
    with_tables(&REPORT_BEFORE, &[HowToRead]);

const REPORT_BEFORE: [SectionId; 8] = [
    Environment,
    Comparison,
    Runs,
    Quality,
    Latency,
    Spans,
    Threads,
    LockWait,
];
/// [`REPORT_IDS`] as text, which the binary checks `--section` against.
pub const REPORT: &[&str] = &id::names(REPORT_IDS);

/// The JSON form of `sections`, keyed by section id: each section's [`Section::json`]
/// under its id, or, for an id in `many` (one a view may hold several times, e.g. the
/// `spans` tables), the list of them, always a list. Sections without a JSON form are
/// left out.
pub fn json(
    sections: &[&dyn Section],
    many: &[SectionId],
) -> serde_json::Map<String, serde_json::Value> {
    let mut out = serde_json::Map::new();
    for s in sections {
        let Some(v) = s.json() else { continue };
        if many.contains(&s.id()) {
            let list = out
                .entry(s.id().as_str())
                .or_insert_with(|| serde_json::Value::Array(Vec::new()));
            if let serde_json::Value::Array(items) = list {
                items.push(v);
            }
        } else {
            out.insert(s.id().as_str().into(), v);
        }
    }
    out
}

/// Keeps the sections whose id is in `wanted` (all when it is empty); an id not in
/// `known` (the ids the command can print) is an error that lists them.
pub fn select<'a>(
    sections: Vec<&'a dyn Section>,
    wanted: &[String],
    known: &[&str],
) -> Result<Vec<&'a dyn Section>, String> {
    check_ids(wanted, known)?;
    Ok(sections
        .into_iter()
        .filter(|s| wanted.is_empty() || wanted.iter().any(|w| w == s.id().as_str()))
        .collect())
}

/// An error naming the first id in `wanted` not in `known`, and the known ones.
pub fn check_ids(wanted: &[String], known: &[&str]) -> Result<(), String> {
    match wanted.iter().find(|w| !known.contains(&w.as_str())) {
        Some(w) => Err(format!(
            "--section {w}: no such section (known: {})",
            known.join(", ")
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doc::{self, Block};

    struct Two;
    impl Section for Two {
        fn id(&self) -> SectionId {
            SectionId::Summary
        }
        fn title(&self) -> String {
            "two".into()
        }
        fn blocks(&self) -> Vec<Block> {
            vec![
                Block::caption("a table"),
                Block::Table(doc::Table::new(
                    vec!["x".into()],
                    vec![vec!["1".into()]],
                    vec![],
                )),
                Block::note("x: a legend"),
                Block::list("Notes", ["n"]),
            ]
        }
    }

    #[test]
    fn captions_and_notes_sit_tight_in_text_only() {
        assert_eq!(
            Two.render(Format::Text),
            "a table\nx\n1\nx: a legend\n\nNotes:\n  n\n"
        );
        assert_eq!(
            Two.render(Format::Markdown),
            "**a table**\n\n|   x |\n| --: |\n|   1 |\n\nx: a legend\n\n**Notes:**\n\n- n\n"
        );
        let both = render(&[&Two, &Two], Format::Text);
        assert!(both.contains("  n\n\na table\n"), "{both}");
        assert!(Two.render(Format::Html).contains("<title>two</title>"));
    }

    struct Json(SectionId, i32);
    impl Section for Json {
        fn id(&self) -> SectionId {
            self.0
        }
        fn title(&self) -> String {
            String::new()
        }
        fn blocks(&self) -> Vec<Block> {
            Vec::new()
        }
        fn json(&self) -> Option<serde_json::Value> {
            Some(self.1.into())
        }
    }

    #[test]
    fn json_keys_are_the_ids_and_repeated_ids_are_lists() {
        let map = json(
            &[&Json(Summary, 1), &Json(Spans, 2), &Json(Spans, 3), &Two],
            &[SectionId::Spans],
        );
        assert_eq!(
            serde_json::Value::Object(map),
            serde_json::json!({ "summary": 1, "spans": [2, 3] })
        );
    }

    #[test]
    fn unknown_sections_are_named_with_the_known_ones() {
        let err = check_ids(&["summary".into(), "nope".into()], SHOW).unwrap_err();
        // The run's tables (crate::tables::PER_RUN) come after the lock waits, in their
        // registry's order; one registered later is listed too.
        assert!(
            err.starts_with(
                "--section nope: no such section (known: summary, threads, lock-wait, \
                 interrupts, counters, "
            ),
            "{err}"
        );
        assert!(err.ends_with(", latency, percentiles, spans)"), "{err}");
        assert!(check_ids(&["summary".into()], REPORT).is_err());
        let kept = select(vec![&Two], &["counters".into()], SHOW).unwrap();
        assert!(kept.is_empty());
        assert_eq!(select(vec![&Two], &[], SHOW).unwrap().len(), 1);
    }
}
