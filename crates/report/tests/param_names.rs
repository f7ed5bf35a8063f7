//! Issue 34 item 1: the report and the binary find a workload's parameters by their role
//! ([`perflab_core::ParamRole`]: the CPUs of a pair, a pinned CPU, a scan's size axis),
//! never by name. A lookup such as `params.get("cpu_a")` or `scan_tables(t, "size")`
//! breaks silently the day the workload renames its parameter, or shows a workload that
//! has no such parameter a table meant for another.
//!
//! The check: every parameter a workload declares with a role (read from the workloads'
//! own declarations, `name: "…"` followed by a `role:` other than `Plain`) must not be
//! named in the code (tests left out) of the report crate or the binary where a name is
//! looked up or compared: as the argument of a lookup (`get`, `int`, `cpu`, `str`,
//! `insert`, `remove`, `contains_key`), on either side of `==`/`!=`, as a match arm, in a
//! list of names (`&["size"]`), or as the last argument of a call (`f(t, "size")`).
//! A column header or another program's vocabulary (exec's placeholder words) is not a
//! lookup and is not flagged.

use crate::common::source::{crates_dir, rust_files, without_comment};
use std::fs;

/// The names workloads declare with a role other than `Plain`.
fn role_names() -> Vec<String> {
    let mut files = Vec::new();
    rust_files(&crates_dir().join("workloads/src"), &mut files);
    let mut names = Vec::new();
    for f in files {
        let text = fs::read_to_string(&f).unwrap_or_default();
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        for pair in lines.windows(2) {
            let (Some(name), Some(role)) = (
                pair[0]
                    .strip_prefix("name: \"")
                    .and_then(|r| r.strip_suffix("\",")),
                pair[1].strip_prefix("role: "),
            ) else {
                continue;
            };
            if !role.ends_with("::Plain,") && !names.iter().any(|n| n == name) {
                names.push(name.to_string());
            }
        }
    }
    names
}

/// `text` without its test modules (`#[cfg(test)] mod … { … }` and `mod …;`) and `//`
/// comments: tests build parameters by name on purpose.
fn production(text: &str) -> String {
    let mut out = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        if line.trim() == "#[cfg(test)]" {
            let next = lines.peek().map_or("", |l| l.trim());
            if next.starts_with("mod ") || next.starts_with("pub(crate) mod ") {
                let head = lines.next().unwrap_or("");
                if head.trim_end().ends_with('{') {
                    let mut depth = 1i32;
                    for l in lines.by_ref() {
                        depth += l.matches('{').count() as i32 - l.matches('}').count() as i32;
                        if depth <= 0 {
                            break;
                        }
                    }
                }
                continue;
            }
        }
        out.push(without_comment(line));
    }
    out.join("\n")
}

/// Where `code` looks parameter `name` up or compares against it.
fn lookups(code: &str, name: &str) -> Vec<String> {
    let lit = format!("\"{name}\"");
    let mut out = Vec::new();
    for (i, line) in code.lines().enumerate() {
        let mut at = 0;
        while let Some(found) = line[at..].find(&lit) {
            let start = at + found;
            let end = start + lit.len();
            at = end;
            let before = line[..start].trim_end();
            let after = line[end..].trim_start();
            let looked_up = [
                "get(",
                "int(",
                "cpu(",
                "str(",
                "insert(",
                "remove(",
                "contains_key(",
            ]
            .iter()
            .any(|m| before.ends_with(m));
            let compared = before.ends_with("==")
                || before.ends_with("!=")
                || after.starts_with("==")
                || after.starts_with("!=");
            let arm = after.starts_with("=>") || after.starts_with('|') || before.ends_with('|');
            let listed = before.ends_with("&[") || before.ends_with("&");
            let argument = before.ends_with(',') && after.starts_with(')');
            if looked_up || compared || arm || listed || argument {
                out.push(format!("line {}: {}", i + 1, line.trim()));
            }
        }
    }
    out
}

fn offenders() -> Vec<String> {
    let names = role_names();
    let mut files = Vec::new();
    rust_files(&crates_dir().join("report/src"), &mut files);
    rust_files(&crates_dir().join("perflab/src"), &mut files);
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let file = f.to_string_lossy();
        if file.ends_with("tests.rs") || file.contains("/tests/") {
            continue;
        }
        let code = production(&fs::read_to_string(&f).unwrap_or_default());
        for name in &names {
            for l in lookups(&code, name) {
                out.push(format!("{file}: {name:?} at {l}"));
            }
        }
    }
    out
}

#[test]
fn the_workloads_declare_the_roles_this_check_reads() {
    // If the declarations changed shape, the check below would pass vacuously.
    let names = role_names();
    for expected in ["cpu_a", "cpu_b", "size"] {
        assert!(names.iter().any(|n| n == expected), "{names:?}");
    }
}

#[test]
fn the_check_finds_a_lookup_by_name() {
    let code = "let a = m.params.get(\"cpu_a\");\nlet s = scan_tables(&t, \"size\");\n\
                let x = label_without(p, &[\"size\"]);\nmatches!(n, \"cpu_a\" | \"cpu_b\")\n\
                let head = vec![\"size\".to_string()];";
    assert_eq!(lookups(code, "cpu_a").len(), 2);
    assert_eq!(
        lookups(code, "size").len(),
        2,
        "a column header is no lookup"
    );
    let tests = "fn f() {}\n#[cfg(test)]\nmod tests {\n    fn g() { p.get(\"size\"); }\n}\n";
    assert!(lookups(&production(tests), "size").is_empty());
}

#[test]
fn the_report_and_the_binary_find_parameters_by_role_not_by_name() {
    let found = offenders();
    assert!(
        found.is_empty(),
        "parameters looked up by name (use their ParamRole):\n{}",
        found.join("\n")
    );
}
