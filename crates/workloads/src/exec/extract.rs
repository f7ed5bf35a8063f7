//! Turning a command's output into metrics: a regex, a JSON pointer, or a built-in parser
//! from `perflab-parsers`. Every failure says what was looked for and shows the start of
//! what was there.

use perflab_core::{Better, HistogramData, Metric, Unit};
use regex::RegexBuilder;

/// How the number is found; at most one may be given.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Extraction {
    /// Nothing to extract: the command is only timed.
    None,
    Regex(String),
    /// An RFC 6901 pointer into the output parsed as JSON.
    Json(String),
    Parser(String),
}

impl Extraction {
    /// From the three parameters; an empty one is not given.
    pub fn from_params(regex: &str, json: &str, parser: &str) -> Result<Self, String> {
        let given: Vec<&str> = [("regex", regex), ("json", json), ("parser", parser)]
            .iter()
            .filter(|(_, v)| !v.is_empty())
            .map(|(n, _)| *n)
            .collect();
        if given.len() > 1 {
            return Err(format!(
                "give only one of regex, json and parser (got {})",
                given.join(" and ")
            ));
        }
        Ok(if !regex.is_empty() {
            Self::Regex(regex.to_string())
        } else if !json.is_empty() {
            Self::Json(json.to_string())
        } else if !parser.is_empty() {
            Self::Parser(parser.to_string())
        } else {
            Self::None
        })
    }

    /// What can be known of the extraction before the command runs: the regex compiles
    /// with one number group, the pointer is a pointer, the parser exists. The plan asks
    /// this, so none of them fails every repetition of a stored run.
    pub(super) fn check(&self) -> Result<(), String> {
        match self {
            Self::None => Ok(()),
            Self::Regex(re) => compile(re).map(drop),
            Self::Json(ptr) => check_pointer(ptr),
            Self::Parser(name) => parser_named(name).map(drop),
        }
    }
}

/// How the reported metric is named and judged.
#[derive(Clone, Debug)]
pub(super) struct MetricSpec {
    /// Empty: `value`, or with a parser, the parser's first metric.
    pub name: String,
    pub unit: Unit,
    pub better: Better,
}

/// What extraction found: the primary metric first.
#[derive(Debug, Default)]
pub(super) struct Extracted {
    pub metrics: Vec<Metric>,
    pub histograms: Vec<HistogramData>,
    pub notes: Vec<String>,
}

/// How much of the output an error message shows.
const SHOWN: usize = 200;

fn start_of(text: &str) -> String {
    let mut end = SHOWN.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let more = if end < text.len() { "…" } else { "" };
    format!("{:?}{more}", &text[..end])
}

fn number(found: &str, whence: &str) -> Result<f64, String> {
    match found.trim().parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => Err(format!("{whence} found {found:?}, which is not a number")),
    }
}

/// Applies `how` to `text` (the chosen output stream, `stream` names it in errors).
pub(super) fn extract(
    how: &Extraction,
    text: &str,
    stream: &str,
    metric: &MetricSpec,
) -> Result<Extracted, String> {
    let name = || {
        if metric.name.is_empty() {
            "value".to_string()
        } else {
            metric.name.clone()
        }
    };
    let one = |v: f64| Extracted {
        metrics: vec![Metric::new(name(), v, metric.unit, metric.better)],
        ..Default::default()
    };
    match how {
        Extraction::None => Ok(Extracted::default()),
        Extraction::Regex(re) => by_regex(re, text, stream).map(one),
        Extraction::Json(ptr) => by_json(ptr, text, stream).map(one),
        Extraction::Parser(p) => by_parser(p, text, stream, &metric.name),
    }
}

/// The number of the first match: the group named `value`, else the only group, else the
/// whole match. `^` and `$` match at line boundaries, as tool output is read line by line.
pub(super) fn by_regex(re: &str, text: &str, stream: &str) -> Result<f64, String> {
    let (compiled, named, groups) = compile(re)?;
    let Some(caps) = compiled.captures(text) else {
        return Err(format!(
            "regex {re:?} matched nothing in {stream}, which starts {}",
            start_of(text)
        ));
    };
    let m = if named {
        caps.name("value")
    } else {
        caps.get(groups)
    };
    let Some(m) = m else {
        return Err(format!(
            "regex {re:?} matched {:?} but its number group took no part in the match",
            caps.get(0).map(|m| m.as_str()).unwrap_or_default()
        ));
    };
    number(m.as_str(), &format!("regex {re:?}"))
}

/// The regex, whether it names a `value` group, and how many groups it has; an error for
/// one that does not compile or leaves the number's group ambiguous.
fn compile(re: &str) -> Result<(regex::Regex, bool, usize), String> {
    let compiled = RegexBuilder::new(re)
        .multi_line(true)
        .build()
        .map_err(|e| format!("regex {re:?} does not compile: {e}"))?;
    let named = compiled.capture_names().flatten().any(|n| n == "value");
    let groups = compiled.captures_len() - 1;
    if !named && groups > 1 {
        return Err(format!(
            "regex {re:?} has {groups} capture groups; name the number's group \
             (?P<value>…) or make the others non-capturing (?:…)"
        ));
    }
    Ok((compiled, named, groups))
}

fn check_pointer(ptr: &str) -> Result<(), String> {
    if ptr.starts_with('/') {
        Ok(())
    } else {
        Err(format!(
            "json pointer {ptr:?} must start with '/' (RFC 6901, e.g. /jobs/0/read/bw)"
        ))
    }
}

/// The built-in parser of this name, or the error listing the known ones.
fn parser_named(name: &str) -> Result<&'static perflab_parsers::ParserInfo, String> {
    perflab_parsers::by_name(name).ok_or_else(|| {
        let known = perflab_parsers::names();
        format!(
            "no parser named {name:?} (known: {})",
            if known.is_empty() {
                "none yet".to_string()
            } else {
                known.join(", ")
            }
        )
    })
}

/// The number at `ptr` in `text` parsed as JSON (a JSON string holding a number counts).
pub(super) fn by_json(ptr: &str, text: &str, stream: &str) -> Result<f64, String> {
    check_pointer(ptr)?;
    let doc: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| format!("{stream} is not JSON ({e}); it starts {}", start_of(text)))?;
    let v = doc
        .pointer(ptr)
        .ok_or_else(|| format!("json pointer {ptr:?} names nothing in the {stream} document"))?;
    match v {
        serde_json::Value::Number(n) => n
            .as_f64()
            .ok_or_else(|| format!("json pointer {ptr:?} holds {n}, which is out of range")),
        serde_json::Value::String(s) => number(s, &format!("json pointer {ptr:?}")),
        other => {
            let shown = other.to_string();
            Err(format!(
                "json pointer {ptr:?} holds {}, not a number",
                start_of(&shown)
            ))
        }
    }
}

/// All metrics of a built-in parser, the one named `primary` (or the first) moved first.
pub(super) fn by_parser(
    name: &str,
    text: &str,
    stream: &str,
    primary: &str,
) -> Result<Extracted, String> {
    let info = parser_named(name)?;
    let parsed = info
        .read(text)
        .map_err(|e| format!("parser {name} on {stream}: {e}"))?;
    let mut metrics = parsed.metrics;
    if metrics.is_empty() {
        return Err(format!(
            "parser {name} found no metrics in {stream}{}",
            if parsed.rows.is_empty() {
                String::new()
            } else {
                format!(
                    " (it found a table of {} rows; exec reports one measurement per \
                     repetition, so import the table with `perflab import` instead)",
                    parsed.rows.len()
                )
            }
        ));
    }
    if !primary.is_empty() {
        let Some(at) = metrics.iter().position(|m| m.name == primary) else {
            let known: Vec<&str> = metrics.iter().map(|m| m.name.as_str()).collect();
            return Err(format!(
                "parser {name} reported no metric {primary:?} (it reported: {})",
                known.join(", ")
            ));
        };
        let m = metrics.remove(at);
        metrics.insert(0, m);
    }
    let mut notes = Vec::new();
    // Rows that all share one set of parameters are runs of the one thing measured (a
    // hyperfine file of one command), which `metrics` summarise: nothing is left out.
    let one_point = parsed
        .rows
        .iter()
        .all(|r| parsed.rows.first().is_some_and(|f| f.params == r.params));
    if !one_point {
        notes.push(format!(
            "parser {name} also found a table of {} rows, not reported here",
            parsed.rows.len()
        ));
    }
    Ok(Extracted {
        metrics,
        histograms: parsed.histograms,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regex_takes_the_named_or_only_group_or_the_whole_match() {
        let text = "warmup 1.0\nresult: 12.5 GB/s (n=3)\nresult: 99 GB/s\n";
        assert_eq!(by_regex(r"result: ([0-9.]+)", text, "stdout"), Ok(12.5));
        assert_eq!(
            by_regex(r"(result): (?P<value>[0-9.]+)", text, "stdout"),
            Ok(12.5)
        );
        assert_eq!(by_regex(r"\d+\.\d+", "x 3.25 y", "stdout"), Ok(3.25));
        assert_eq!(by_regex(r"^result: (\d+) GB/s$", text, "stdout"), Ok(99.0));
        let e = by_regex(r"(\w+): ([0-9.]+)", text, "stdout").unwrap_err();
        assert!(
            e.contains("2 capture groups") && e.contains("?P<value>"),
            "{e}"
        );
        let e = by_regex(r"(", text, "stdout").unwrap_err();
        assert!(e.contains("does not compile"), "{e}");
        let e = by_regex(r"n=(\w+)", "n=abc", "stdout").unwrap_err();
        assert!(e.contains("\"abc\", which is not a number"), "{e}");
        let e = by_regex(r"(inf|nan)", "inf", "stdout").unwrap_err();
        assert!(e.contains("not a number"), "{e}");
    }

    #[test]
    fn regex_without_match_names_the_regex_and_shows_the_start() {
        let text = "x".repeat(1000);
        let e = by_regex(r"bw=(\d+)", &text, "stderr").unwrap_err();
        assert!(
            e.starts_with(r#"regex "bw=(\\d+)" matched nothing in stderr"#),
            "{e}"
        );
        assert!(e.contains(&format!("{:?}…", "x".repeat(200))), "{e}");
        assert!(!e.contains(&"x".repeat(201)), "{e}");
    }

    #[test]
    fn json_pointer_finds_numbers_and_numeric_strings() {
        let doc = r#"{"jobs":[{"read":{"bw":1234.5,"iops":"77"}}],"name":"a"}"#;
        assert_eq!(by_json("/jobs/0/read/bw", doc, "stdout"), Ok(1234.5));
        assert_eq!(by_json("/jobs/0/read/iops", doc, "stdout"), Ok(77.0));
        let e = by_json("/jobs/1/read/bw", doc, "stdout").unwrap_err();
        assert!(e.contains("names nothing"), "{e}");
        let e = by_json("/name", doc, "stdout").unwrap_err();
        assert!(e.contains("\"a\", which is not a number"), "{e}");
        let e = by_json("/jobs", doc, "stdout").unwrap_err();
        assert!(e.contains("not a number"), "{e}");
        let e = by_json("jobs", doc, "stdout").unwrap_err();
        assert!(e.contains("must start with '/'"), "{e}");
        let e = by_json("/a", "fio: warning\n{}", "stdout").unwrap_err();
        assert!(
            e.contains("stdout is not JSON") && e.contains("fio: warning"),
            "{e}"
        );
    }

    #[test]
    fn only_one_extraction_may_be_given() {
        assert_eq!(Extraction::from_params("", "", ""), Ok(Extraction::None));
        assert_eq!(
            Extraction::from_params("", "/a", ""),
            Ok(Extraction::Json("/a".into()))
        );
        let e = Extraction::from_params("x", "", "fio").unwrap_err();
        assert!(e.contains("regex and parser"), "{e}");
    }

    #[test]
    fn unknown_parser_lists_the_known_ones() {
        let e = by_parser("no-such-tool", "", "stdout", "").unwrap_err();
        assert!(
            e.starts_with("no parser named \"no-such-tool\" (known: "),
            "{e}"
        );
        for known in perflab_parsers::names() {
            assert!(e.contains(known), "{e}");
        }
    }

    proptest::proptest! {
        #[test]
        fn extraction_never_panics(text in "\\PC{0,300}", re in "\\PC{0,12}", ptr in "/\\PC{0,12}") {
            let _ = by_regex(&re, &text, "stdout");
            let _ = by_json(&ptr, &text, "stdout");
        }
    }

    fn hyperfine(file: &str) -> String {
        let path = format!(
            "{}/../parsers/tests/data/hyperfine/{file}",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    #[test]
    fn hyperfine_of_one_command_is_its_summary_without_a_note_of_left_out_rows() {
        let e = by_parser(
            "hyperfine",
            &hyperfine("sleep_10ms.json"),
            "stdout",
            "mean_ms",
        )
        .unwrap();
        assert_eq!(e.metrics[0].name, "mean_ms");
        assert!(e.notes.is_empty(), "{:?}", e.notes);
        // Two commands are two points: no one measurement, so import them instead.
        let err = by_parser("hyperfine", &hyperfine("two_commands.json"), "stdout", "")
            .err()
            .unwrap();
        assert!(
            err.contains("20 rows") && err.contains("perflab import"),
            "{err}"
        );
    }
}
