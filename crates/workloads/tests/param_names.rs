//! Every parameter a workload's code reads by name is one it declares, read as its
//! declared type.
//!
//! The typed accessors (`params.int("size")?`) fail a run loudly on an undeclared name,
//! but only on a path that runs. This test reads each registered workload's source (its
//! `src/<name>/` folder or `src/<name>.rs`) and checks every accessor call against the
//! workload's `ParamSpec`s, so a misspelling fails `cargo test` even on a path no test
//! runs (a remote peer, a DMA engine this machine lacks).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use perflab_core::{ParamKind, ParamSpec};
use regex::Regex;

const ACCESSORS: &str = "int|cpu|float|seconds|str|bool|secret";

/// Whether `accessor` reads a parameter of `kind` as what it holds.
fn reads_as(accessor: &str, kind: &ParamKind) -> bool {
    match accessor {
        "int" => matches!(
            kind,
            ParamKind::Int { .. } | ParamKind::Size { .. } | ParamKind::Cpu
        ),
        // An Int read as a CPU must not allow the -1 that means "not pinned".
        "cpu" => match kind {
            ParamKind::Cpu => true,
            ParamKind::Int { min, .. } => *min >= 0,
            _ => false,
        },
        "float" => matches!(
            kind,
            ParamKind::Float { .. } | ParamKind::Int { .. } | ParamKind::Size { .. }
        ),
        "seconds" => matches!(kind, ParamKind::Duration { .. }),
        "str" => matches!(
            kind,
            ParamKind::Choice(_) | ParamKind::Text { .. } | ParamKind::Env { .. }
        ),
        "bool" => matches!(kind, ParamKind::Bool),
        "secret" => matches!(kind, ParamKind::Secret { .. }),
        _ => false,
    }
}

/// Source without `//` comments (doc comments may show calls that are not code).
fn code_of(text: &str) -> String {
    text.lines()
        .map(|l| match l.find("//") {
            // Not inside a string: an odd number of quotes before it means it is.
            Some(i) if l[..i].matches('"').count() % 2 == 0 => &l[..i],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// What is wrong with the parameter reads in `text`, one line each, and how many reads
/// were checked.
fn check(file: &str, text: &str, declared: &[ParamSpec]) -> (Vec<String>, usize) {
    let code = code_of(text);
    let literal = Regex::new(&format!(r#"\.({ACCESSORS})\(\s*"([^"]*)"\s*\)"#)).unwrap();
    let any = Regex::new(&format!(r"\.({ACCESSORS})\(\s*([^\s)])")).unwrap();
    let names = declared
        .iter()
        .map(|s| s.name)
        .collect::<Vec<_>>()
        .join(", ");
    let line_of = |at: usize| code[..at].matches('\n').count() + 1;
    let mut problems = Vec::new();
    let mut checked = 0;
    for c in literal.captures_iter(&code) {
        let (accessor, name) = (&c[1], &c[2]);
        let line = line_of(c.get(0).unwrap().start());
        checked += 1;
        match declared.iter().find(|s| s.name == name) {
            None => problems.push(format!(
                "{file}:{line}: reads {name:?} with .{accessor}(), not declared (it has: {names})"
            )),
            Some(s) if !reads_as(accessor, &s.kind) => problems.push(format!(
                "{file}:{line}: reads {name:?} with .{accessor}(), but it is declared as {}",
                s.kind_text()
            )),
            Some(_) => {}
        }
    }
    // A name computed at run time cannot be checked here: the convention is a literal.
    for c in any.captures_iter(&code) {
        if &c[2] != "\"" {
            let line = line_of(c.get(0).unwrap().start());
            problems.push(format!(
                "{file}:{line}: .{}() with a name that is not a string literal; write the \
                 parameter's name at the call so this test can check it",
                &c[1]
            ));
        }
    }
    (problems, checked)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The source files of each registered workload, by name.
fn workload_sources() -> BTreeMap<&'static str, Vec<PathBuf>> {
    let mut out = BTreeMap::new();
    for w in perflab_workloads::registry() {
        let name = w.info().name;
        let (dir, file) = (src().join(name), src().join(format!("{name}.rs")));
        let mut files = Vec::new();
        if dir.is_dir() {
            rust_files(&dir, &mut files);
        }
        if file.is_file() {
            files.push(file);
        }
        assert!(
            !files.is_empty(),
            "workload {name}: no src/{name}/ or src/{name}.rs; this test checks a workload's \
             parameter reads there"
        );
        out.insert(name, files);
    }
    out
}

fn relative(p: &Path) -> String {
    p.strip_prefix(env!("CARGO_MANIFEST_DIR"))
        .unwrap_or(p)
        .display()
        .to_string()
}

#[test]
fn every_parameter_a_workload_reads_is_declared_with_that_type() {
    let mut problems = Vec::new();
    for (name, files) in workload_sources() {
        let declared = perflab_workloads::by_name(name).unwrap().info().params;
        let mut checked = 0;
        for f in &files {
            let text = std::fs::read_to_string(f).unwrap();
            let (p, n) = check(&relative(f), &text, declared);
            problems.extend(p);
            checked += n;
        }
        // Every workload reads some parameter (null its value); none found means the
        // scan is looking in the wrong place.
        assert!(
            checked > 0,
            "workload {name}: no parameter reads found in {files:?}"
        );
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

#[test]
fn no_parameter_is_read_outside_a_workloads_own_source() {
    let owned: Vec<PathBuf> = workload_sources().into_values().flatten().collect();
    let mut all = Vec::new();
    rust_files(&src(), &mut all);
    let mut problems = Vec::new();
    for f in all.iter().filter(|f| !owned.contains(f)) {
        let text = std::fs::read_to_string(f).unwrap();
        // No workload declares these names: any read is reported.
        let (p, n) = check(&relative(f), &text, &[]);
        if n > 0 || !p.is_empty() {
            problems.push(format!(
                "{}: reads parameters, but is no workload's source (src/<name>/ or \
                 src/<name>.rs), so this test cannot tell whose: {}",
                relative(f),
                p.join("; ")
            ));
        }
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

const SPECS: &[ParamSpec] = &[
    ParamSpec {
        name: "channels",
        role: perflab_core::ParamRole::Plain,
        help: "",
        kind: ParamKind::Int { min: 0, max: 64 },
        default: Some("1"),
    },
    ParamSpec {
        name: "client_cpu",
        role: perflab_core::ParamRole::Plain,
        help: "",
        kind: ParamKind::Int { min: -1, max: 64 },
        default: Some("-1"),
    },
    ParamSpec {
        name: "mode",
        role: perflab_core::ParamRole::Plain,
        help: "",
        kind: ParamKind::Choice(&["a", "b"]),
        default: Some("a"),
    },
    ParamSpec {
        name: "duration",
        role: perflab_core::ParamRole::Plain,
        help: "",
        kind: ParamKind::Duration {
            min_s: 0.0,
            max_s: 10.0,
        },
        default: Some("1s"),
    },
];

#[test]
fn the_check_finds_a_misspelled_name_on_any_line_of_a_call() {
    let ok = r#"let c = params.int("channels")?; let m = params.str("mode")?;"#;
    assert_eq!(check("f.rs", ok, SPECS), (vec![], 2));
    let bad = "fn run() {\n    let c = params\n        .int(\n  \"chanels\"\n)?;\n}";
    let (p, n) = check("f.rs", bad, SPECS);
    assert_eq!(n, 1);
    assert_eq!(
        p,
        vec![
            "f.rs:3: reads \"chanels\" with .int(), not declared (it has: channels, \
             client_cpu, mode, duration)"
        ]
    );
}

#[test]
fn the_check_finds_a_read_as_the_wrong_type() {
    for call in [
        r#"params.int("mode")"#,
        r#"params.int("duration")"#,
        r#"params.str("channels")"#,
        r#"params.cpu("client_cpu")"#,
        r#"params.secret("mode")"#,
        r#"params.float("duration")"#,
    ] {
        let (p, _) = check("f.rs", call, SPECS);
        assert_eq!(p.len(), 1, "{call}: {p:?}");
        assert!(p[0].contains("but it is declared as"), "{call}: {p:?}");
    }
    for call in [
        r#"params.cpu("channels")"#,
        r#"params.float("channels")"#,
        r#"params.seconds("duration")"#,
        r#"params.int("client_cpu")"#,
    ] {
        assert_eq!(check("f.rs", call, SPECS), (vec![], 1), "{call}");
    }
}

#[test]
fn the_check_refuses_computed_names_and_skips_comments() {
    let (p, n) = check("f.rs", "let v = params.int(name)?;", SPECS);
    assert_eq!(n, 0);
    assert_eq!(p.len(), 1);
    assert!(p[0].contains("not a string literal"), "{p:?}");
    // A comment may show a call; a string holding `//` is still code.
    let text = "// params.int(\"nope\")\nlet u = \"http://x\"; let c = params.int(\"chanels\")?;";
    let (p, n) = check("f.rs", text, SPECS);
    assert_eq!(n, 1);
    assert!(p[0].starts_with("f.rs:2: reads \"chanels\""), "{p:?}");
    // Methods of the same name without an argument (`Vec::is_empty`-like) are not reads.
    assert_eq!(check("f.rs", "x.str()", SPECS), (vec![], 0));
}
