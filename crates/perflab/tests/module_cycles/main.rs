//! Structure check (issues 15 and 24): in no crate does a source file name a module that
//! names it back (directly or round a longer loop). Such a loop means two files share one
//! responsibility, or a type sits in the wrong one.
//!
//! Edges are the module paths a file names: `use` trees (`use crate::a::{b, c::d}`,
//! `use super::x`) and paths written inline (`crate::a::f()`, `super::x::Y`, a child's
//! `vm::build()`), each resolved to the deepest module file it reaches, and through
//! re-exports (`pub use cmd::find_tool`) to the file that defines the item. Parents and
//! children count like any two files: a parent that calls into its child while the
//! child uses the parent's types is a loop. Left out, as the module tree itself: a
//! parent's `mod child;` and `pub use child::Item`, and a file naming itself, and what an
//! inline `mod tests { … }` names (the tests' needs, not the file's).

mod graph;
mod source;

use std::path::{Path, PathBuf};

use graph::{cycles, Crate};

/// Loops the check found when it was widened to every crate and to parent↔child edges
/// (issue 24), not yet untangled: crate, then the loop's modules (`(root)` for lib.rs).
/// Most are a parent file that defines the types its children use and also calls into
/// them; the fix is to move those types to a file of their own. The list may only
/// shrink: a loop not listed fails the test, and so does a listed loop that is gone.
const NOT_YET_UNTANGLED: &[&str] = &[];

#[test]
fn no_file_imports_a_sibling_that_imports_it_back() {
    let mut found = Vec::new();
    let mut explained = Vec::new();
    let crates = crates();
    assert!(crates.len() > 10, "{crates:?}");
    // Every crate with a src/ is read: those the issue named among them.
    for named in ["core", "stats", "sys", "knobs", "monitors", "workloads"] {
        assert!(
            crates.iter().any(|(k, _)| k == named),
            "{named}: {crates:?}"
        );
    }
    for (krate, src) in crates {
        let g = Crate::read(&src).edges();
        for set in cycles(&g) {
            let name = |m: &str| {
                if m.is_empty() {
                    "(root)".to_string()
                } else {
                    m.to_string()
                }
            };
            found.push(format!(
                "{krate}: {}",
                set.iter().map(|m| name(m)).collect::<Vec<_>>().join(" ")
            ));
            // The edges inside the loop, so the message says which imports to untangle.
            let inside: Vec<String> = set
                .iter()
                .flat_map(|a| {
                    g.get(a)
                        .into_iter()
                        .flatten()
                        .filter(|b| set.contains(b))
                        .map(move |b| format!("{} -> {}", name(a), name(b)))
                })
                .collect();
            explained.push(format!("{krate}: {}", inside.join(", ")));
        }
    }
    let new: Vec<&String> = found
        .iter()
        .filter(|f| !NOT_YET_UNTANGLED.contains(&f.as_str()))
        .collect();
    assert!(
        new.is_empty(),
        "modules that import each other: {new:?}\n  {}",
        explained.join("\n  ")
    );
    let gone: Vec<&&str> = NOT_YET_UNTANGLED
        .iter()
        .filter(|k| !found.iter().any(|f| f == *k))
        .collect();
    assert!(
        gone.is_empty(),
        "untangled, take them off NOT_YET_UNTANGLED: {gone:?}"
    );
}

/// Every crate of the workspace, by directory name, with its `src`.
fn crates() -> Vec<(String, PathBuf)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut out: Vec<(String, PathBuf)> = std::fs::read_dir(&root)
        .expect("read crates/")
        .filter_map(|e| {
            let dir = e.ok()?.path();
            let src = dir.join("src");
            let name = dir.file_name()?.to_string_lossy().into_owned();
            src.is_dir().then_some((name, src))
        })
        .collect();
    out.sort();
    out
}

/// The checker itself, on a tree made for it: a loop through a use tree, a loop through an
/// inline path, a loop between a parent and its child, a path through a re-export
/// followed to the file that defines the item, and what is not a loop (a parent's
/// re-export of its child, a test module's `super::*`, names in comments and strings).
#[test]
fn the_checker_finds_loops_and_only_loops() {
    let dir = std::env::temp_dir().join(format!("perflab-cycles-{}", std::process::id()));
    let src = dir.join("src");
    for sub in ["p", "r", "t"] {
        std::fs::create_dir_all(src.join(sub)).unwrap();
    }
    let files = [
        (
            "lib.rs",
            "mod a; mod b; mod c; mod p; mod r; mod t; use crate::a::X;",
        ),
        (
            "a.rs",
            "use crate::{b::{Y, Z as W}, p};\n// crate::c::nothing\nfn f() { crate::t::find(); }",
        ),
        ("b.rs", "fn f() { super::a::g(); }"),
        (
            "c.rs",
            "const S: &str = \"crate::a::X\";\n#[cfg(test)]\nmod tests { use super::*; }",
        ),
        ("p/mod.rs", "mod q; pub use q::Q; use crate::c::T;"),
        ("p/q.rs", "use super::P; use super::super::c::T;"),
        ("r/mod.rs", "mod s; pub struct R; fn f() { s::g(); }"),
        ("r/s.rs", "use super::R; pub fn g() {}"),
        ("t/mod.rs", "mod u; pub use u::find;"),
        ("t/u.rs", "pub fn find() {}"),
    ];
    for (name, text) in files {
        std::fs::write(src.join(name), text).unwrap();
    }
    let g = Crate::read(&src).edges();
    let mut found = cycles(&g);
    found.sort();
    let _ = std::fs::remove_dir_all(&dir);
    let set = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(found, vec![set(&["a", "b"]), set(&["r", "r::s"])], "{g:?}");
    assert_eq!(
        g.get("a").cloned().unwrap_or_default(),
        ["b", "p", "t::u"].map(String::from).into()
    );
    assert!(!g.contains_key("c"), "{g:?}");
    assert!(!g.contains_key("t"), "a re-export is no edge: {g:?}");
    assert_eq!(
        g.get("p::q").cloned().unwrap_or_default(),
        ["c", "p"].map(String::from).into()
    );
}
