//! The manual pages follow man-pages(7) (issue 34 item 9): EXIT STATUS with every exit
//! code the binary defines (read here from exit.rs, so a code added there fails this test
//! until the manual shows it), ENVIRONMENT with every variable perflab reads (found in
//! the sources), FILES, and SEE ALSO naming only pages that `man --out` writes (`perflab.1`
//! named a `perflab-help(1)` that was never written). No section is called "EXTRA".

use crate::common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use common::{text, Lab};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The pages `perflab man --out` writes: file name → roff.
fn pages(lab: &Lab) -> Vec<(String, String)> {
    let dir = lab.dir.path().join("man1");
    std::fs::create_dir(&dir).unwrap();
    let o = lab.run(&["man", "--out", dir.to_str().unwrap()]);
    assert!(o.status.success(), "{:?}", text(&o));
    let mut out: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let name = e.file_name().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(e.path()).unwrap())
        })
        .collect();
    out.sort();
    out
}

/// The body of section `title` of a roff page (up to the next `.SH`).
fn section<'a>(page: &'a str, title: &str) -> Option<&'a str> {
    let start = [format!(".SH \"{title}\"\n"), format!(".SH {title}\n")]
        .iter()
        .find_map(|h| page.find(h.as_str()).map(|at| at + h.len()))?;
    let rest = &page[start..];
    Some(&rest[..rest.find("\n.SH ").map_or(rest.len(), |e| e + 1)])
}

/// Every `name(N)` reference in roff text, its escapes undone.
fn references(roff: &str) -> BTreeSet<String> {
    let plain = roff
        .replace("\\-", "-")
        .replace("\\fB", "")
        .replace("\\fR", "");
    let mut out = BTreeSet::new();
    for (at, _) in plain.match_indices("(1)") {
        let name: String = plain[..at]
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
            .collect::<Vec<char>>()
            .into_iter()
            .rev()
            .collect();
        if !name.is_empty() {
            out.insert(name);
        }
    }
    out
}

/// The exit codes exit.rs defines (`pub const NAME: i32 = N;`), read without the binary.
fn defined_exit_codes() -> Vec<(String, i32)> {
    let src = std::fs::read_to_string(root().join("crates/perflab/src/exit.rs")).unwrap();
    src.lines()
        .filter_map(|l| {
            let (name, v) = l
                .trim()
                .strip_prefix("pub const ")?
                .split_once(": i32 = ")?;
            Some((name.to_string(), v.strip_suffix(';')?.parse().ok()?))
        })
        .collect()
}

/// The environment variables the sources read: string literals `"PERFLAB_…"`,
/// `"XDG_…"`, `"SUDO_…"` outside tests (test modules, tests/ directories, the test
/// crates, and variables named for tests).
fn variables_read() -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut dirs = vec![root().join("crates")];
    while let Some(dir) = dirs.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let path = e.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                let skip = ["tests", "testkit", "cuda-standin", "target"].contains(&name.as_str());
                if !skip {
                    dirs.push(path);
                }
                continue;
            }
            if !name.ends_with(".rs") || name.contains("tests") {
                continue;
            }
            let code = std::fs::read_to_string(&path).unwrap();
            let code = code.split("#[cfg(test)]").next().unwrap_or_default();
            for prefix in ["\"PERFLAB_", "\"XDG_", "\"SUDO_"] {
                for (at, _) in code.match_indices(prefix) {
                    let var: String = code[at + 1..]
                        .chars()
                        .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_')
                        .collect();
                    let closed = code[at + 1 + var.len()..].starts_with('"');
                    if closed && !var.contains("TEST") {
                        out.insert(var);
                    }
                }
            }
        }
    }
    out
}

#[test]
fn man_pages_are_complete() {
    let lab = Lab::new();
    let pages = pages(&lab);
    let files: BTreeSet<String> = pages.iter().map(|(f, _)| f.clone()).collect();
    let codes = defined_exit_codes();
    assert!(
        codes.len() >= 10 && codes.iter().any(|(n, c)| n == "INPUT" && *c == 2),
        "{codes:?}"
    );
    for (file, roff) in &pages {
        assert!(!roff.contains(".SH EXTRA"), "{file}: an EXTRA section");
        for title in ["NAME", "SYNOPSIS", "DESCRIPTION", "EXIT STATUS", "SEE ALSO"] {
            assert!(section(roff, title).is_some(), "{file}: no {title}");
        }
        let status = section(roff, "EXIT STATUS").unwrap();
        for (name, code) in &codes {
            assert!(
                status.contains(&format!(".TP\n\\fB{code}\\fR\n")),
                "{file}: exit code {code} ({name}) is not in EXIT STATUS:\n{status}"
            );
        }
        for name in references(roff) {
            assert!(
                files.contains(&format!("{name}.1")),
                "{file} refers to {name}(1), which `man --out` does not write"
            );
        }
        let also = references(section(roff, "SEE ALSO").unwrap());
        assert!(!also.is_empty(), "{file}: SEE ALSO names nothing");
    }
    let top = &pages.iter().find(|(f, _)| f == "perflab.1").unwrap().1;
    let environment = section(top, "ENVIRONMENT").expect("perflab.1: ENVIRONMENT");
    let vars = variables_read();
    for want in [
        "PERFLAB_DB",
        "PERFLAB_JOURNAL",
        "PERFLAB_LIBCUDA",
        "XDG_DATA_HOME",
    ] {
        assert!(vars.contains(want), "the sources' variables: {vars:?}");
    }
    for var in &vars {
        let tag = format!(".TP\n\\fB{}\\fR\n", var.replace('-', "\\-"));
        assert!(
            environment.contains(&tag),
            "perflab.1: {var} is read by perflab but not in ENVIRONMENT (crates/perflab/src/cmd/man_env.rs)"
        );
    }
    let files_section = section(top, "FILES").expect("perflab.1: FILES");
    assert!(files_section.contains("results.db") && files_section.contains("journal.json"));
    // Every subcommand's page is named from perflab.1.
    let also = references(section(top, "SEE ALSO").unwrap());
    for f in &files {
        let name = f.trim_end_matches(".1");
        if name.matches('-').count() == 1 {
            assert!(also.contains(name), "perflab.1's SEE ALSO lacks {name}");
        }
    }
}

/// `perflab --help` ends with the same codes, from the same definitions.
#[test]
fn help_lists_every_exit_code() {
    let lab = Lab::new();
    let (out, _) = text(&lab.run(&["--help"]));
    let list = out
        .split("Exit codes: ")
        .nth(1)
        .expect("an Exit codes paragraph");
    let list = list.split_whitespace().collect::<Vec<_>>().join(" ");
    for (name, code) in defined_exit_codes() {
        assert!(
            list.starts_with(&format!("{code} ")) || list.contains(&format!("; {code} ")),
            "{name} ({code}) missing: {list}"
        );
    }
}
