//! Issue 34: the report never reads another crate's English. A note, a reason, a label
//! is a value ([`perflab_core::note`]); matching its words (`.contains("under TCG")`,
//! `.strip_prefix("effective parallelism ")`) breaks silently the day the other crate
//! rewords it.
//!
//! The check: every string the report's own code (tests left out) matches text against —
//! a literal argument of `contains`, `starts_with`, `ends_with`, `strip_prefix`,
//! `strip_suffix`, `split_once`, `rsplit_once`, `find`, `replace`, directly or through a
//! `const` — must not occur in the string literals of the crates that write notes,
//! reasons and labels (core, monitors, knobs, stats, workloads, lab), where it is words
//! (it holds a space): identifiers both sides share by design (telemetry keys such as
//! `:per_byte`, parameter names) are not notes. `ALLOWED` names the matches that remain,
//! each with why; an entry must still match, so the list can only shrink.

use crate::common::source::{crates_dir, rust_files, without_comment};
use std::collections::BTreeSet;
use std::fs;

/// (file under crates/report/src, the matched string, why it stays for now).
const ALLOWED: &[(&str, &str, &str)] = &[(
    "tables/parallel/legacy.rs",
    "summing per-thread bandwidths is NOT valid: ",
    "runs stored before issue 15 keep their reasons only in this note: an old \
         untyped note, read for backward compatibility only",
)];

/// Methods whose literal argument is text being matched.
const MATCHERS: &[&str] = &[
    "contains",
    "starts_with",
    "ends_with",
    "strip_prefix",
    "strip_suffix",
    "split_once",
    "rsplit_once",
    "find",
    "replace",
];

/// The crates whose words the report must not match.
const WRITERS: &[&str] = &["core", "monitors", "knobs", "stats", "workloads", "lab"];

/// The file's code before its first `#[cfg(test)]`, without `//` comments: tests may
/// match whatever they like.
fn production(text: &str) -> String {
    let code = text.split("#[cfg(test)]").next().unwrap_or("");
    code.lines()
        .map(without_comment)
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every string literal in `code` (plain `"…"` ones, escapes kept as written, which is
/// how both sides spell them).
fn literals(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = code.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        // A char literal `'"'` is not a string.
        if c == '\'' && code[i..].starts_with("'\"'") {
            chars.next();
            chars.next();
            continue;
        }
        if c != '"' {
            continue;
        }
        let mut s = String::new();
        while let Some((_, d)) = chars.next() {
            match d {
                '\\' => {
                    if let Some((_, e)) = chars.next() {
                        if e == '\n' {
                            // A line continuation: the next line's indentation goes too.
                            while chars.peek().is_some_and(|(_, w)| w.is_whitespace()) {
                                chars.next();
                            }
                        } else {
                            s.push('\\');
                            s.push(e);
                        }
                    }
                }
                '"' => break,
                _ => s.push(d),
            }
        }
        out.push(s);
    }
    out
}

/// The strings `code` matches text against: literal arguments of the matchers, and
/// consts passed to them.
fn matched(code: &str) -> BTreeSet<String> {
    let mut consts = Vec::new();
    for l in code.lines() {
        let l = l.trim();
        if let Some(rest) = l.strip_prefix("const ").or_else(|| {
            l.strip_prefix("pub(crate) const ")
                .or_else(|| l.strip_prefix("pub const "))
        }) {
            if let (Some((name, _)), Some(lit)) = (rest.split_once(':'), literals(l).first()) {
                consts.push((name.trim().to_string(), lit.clone()));
            }
        }
    }
    let mut out = BTreeSet::new();
    for m in MATCHERS {
        let call = format!(".{m}(");
        for (i, _) in code.match_indices(&call) {
            let arg = code[i + call.len()..].trim_start();
            let arg = arg.trim_start_matches('&');
            if arg.starts_with('"') {
                if let Some(lit) = literals(arg).first() {
                    out.insert(lit.clone());
                }
            } else if let Some((_, lit)) = consts.iter().find(|(name, _)| {
                arg.starts_with(name.as_str())
                    && !arg[name.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
            }) {
                out.insert(lit.clone());
            }
        }
    }
    out
}

/// Every string literal of the writers' production code.
fn writers_words() -> Vec<String> {
    let mut files = Vec::new();
    for c in WRITERS {
        rust_files(&crates_dir().join(c).join("src"), &mut files);
    }
    files
        .iter()
        .flat_map(|f| literals(&production(&fs::read_to_string(f).unwrap_or_default())))
        .collect()
}

/// (file, string) for each string the report matches that a writer writes.
fn offenders() -> Vec<(String, String)> {
    let words = writers_words();
    let src = crates_dir().join("report").join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let code = production(&fs::read_to_string(&f).unwrap_or_default());
        let rel = f
            .strip_prefix(&src)
            .unwrap_or(&f)
            .to_string_lossy()
            .replace('\\', "/");
        for m in matched(&code) {
            // Words, not syntax (`: `) or names: a key or a parameter name (`cpu_a`,
            // `:per_byte`) is an identifier both sides share by design.
            let letters = m.chars().filter(|c| c.is_alphabetic()).count();
            if letters < 3 || !m.contains(' ') {
                continue;
            }
            if words.iter().any(|w| w.contains(m.as_str())) {
                out.push((rel.clone(), m));
            }
        }
    }
    out
}

#[test]
fn the_report_matches_no_words_another_crate_writes() {
    let found = offenders();
    let new: Vec<String> = found
        .iter()
        .filter(|(f, m)| !ALLOWED.iter().any(|(af, am, _)| af == f && am == m))
        .map(|(f, m)| format!("crates/report/src/{f}: matches {m:?}"))
        .collect();
    assert!(
        new.is_empty(),
        "the report matches text another crate writes; make it a value in \
         perflab_core::note (or a hint) instead:\n  {}",
        new.join("\n  ")
    );
    let stale: Vec<String> = ALLOWED
        .iter()
        .filter(|(af, am, _)| !found.iter().any(|(f, m)| af == f && am == m))
        .map(|(f, m, _)| format!("{f}: {m:?}"))
        .collect();
    assert!(
        stale.is_empty(),
        "allowed matches that no longer happen; remove them from ALLOWED:\n  {}",
        stale.join("\n  ")
    );
}

/// The scan itself: it finds a literal match, a match through a const, and no match in
/// tests or comments.
#[test]
fn the_scan_finds_literal_and_const_matches_only_in_production_code() {
    let code = r#"
const WHY: &str = "effective parallelism ";
fn f(n: &str) -> bool {
    // n.contains("in a comment")
    n.contains("under TCG") || n.strip_prefix(WHY).is_some() || n.contains(&x)
}
#[cfg(test)]
mod tests { fn g(n: &str) -> bool { n.contains("in a test") } }
"#;
    let m = matched(&production(code));
    assert_eq!(
        m.into_iter().collect::<Vec<_>>(),
        vec![
            "effective parallelism ".to_string(),
            "under TCG".to_string()
        ]
    );
    assert_eq!(
        literals("a(\"x \\\"y\\\"\", '\"', \"long \\\n     line\")"),
        vec!["x \\\"y\\\"".to_string(), "long line".to_string()]
    );
}
