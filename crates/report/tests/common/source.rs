//! The workspace's Rust sources, for the tests that read code rather than run it (no
//! parsing of another crate's words, no parameter looked up by name).

use std::fs;
use std::path::{Path, PathBuf};

/// `crates/`, beside this crate.
pub fn crates_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every `.rs` file under `dir`, appended to `out`.
pub fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// `line` without a `//` comment. A `//` inside a string literal is rare in this
/// workspace; a quote before it keeps the line whole.
pub fn without_comment(line: &str) -> &str {
    match line.find("//") {
        Some(i) if !line[..i].contains('"') => &line[..i],
        _ => line,
    }
}
