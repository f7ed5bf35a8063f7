//! Structure check of issue 15: within `knobs`, `parsers`, `report` and the binary, no
//! source file imports a sibling that imports it back (directly or round a longer loop).
//! Such a loop means two files share one responsibility, or a type sits in the wrong one.
//!
//! Edges are the module paths a file names: `use` trees (`use crate::a::{b, c::d}`,
//! `use super::x`) and paths written inline (`crate::a::f()`, `super::x::Y`), each
//! resolved to the deepest module file it reaches. A file naming its own ancestor (`use
//! super::*` in `a/tests.rs`, a child using its parent's types) or its descendant (a
//! parent declaring and re-exporting a child) is the module tree itself, not a loop
//! between siblings, and is left out. Known limit: an item named through a re-export at
//! the crate root (`crate::Foo`) is not followed to the file defining it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Module path (`a::b`, "" for the crate root) → file.
fn modules(src: &Path) -> BTreeMap<String, PathBuf> {
    let mut out = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read src dir") {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel = path.strip_prefix(src).expect("under src");
            let mut parts: Vec<String> = rel
                .with_extension("")
                .iter()
                .map(|p| p.to_string_lossy().into_owned())
                .collect();
            if matches!(
                parts.last().map(String::as_str),
                Some("mod" | "lib" | "main")
            ) {
                parts.pop();
            }
            // Binaries under src/bin are crates of their own.
            if parts.first().is_some_and(|p| p == "bin") {
                continue;
            }
            out.insert(parts.join("::"), path);
        }
    }
    out
}

/// The text without `//` comments and string literals, so words in them are no edges.
fn code_only(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '/' if chars.peek() == Some(&'/') => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            '"' => {
                let mut escaped = false;
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                    }
                    if escaped {
                        escaped = false;
                    } else if c == '\\' {
                        escaped = true;
                    } else if c == '"' {
                        break;
                    }
                }
                out.push_str("\"\"");
            }
            _ => out.push(c),
        }
    }
    out
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    Colons,
    Open,
    Close,
    Comma,
    Other,
}

fn tokens(text: &str) -> Vec<Tok> {
    let mut out = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_alphanumeric() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(Tok::Ident(chars[start..i].iter().collect()));
            continue;
        }
        match c {
            ':' if chars.get(i + 1) == Some(&':') => {
                out.push(Tok::Colons);
                i += 1;
            }
            '{' => out.push(Tok::Open),
            '}' => out.push(Tok::Close),
            ',' => out.push(Tok::Comma),
            c if c.is_whitespace() => {}
            _ => out.push(Tok::Other),
        }
        i += 1;
    }
    out
}

/// Every path of a use tree starting at `toks[*i]`, prefixed by `prefix`.
fn use_tree(toks: &[Tok], i: &mut usize, prefix: &[String], out: &mut Vec<Vec<String>>) {
    let mut path = prefix.to_vec();
    loop {
        match toks.get(*i) {
            Some(Tok::Ident(id)) if id != "as" => {
                path.push(id.clone());
                *i += 1;
                if toks.get(*i) == Some(&Tok::Colons) {
                    *i += 1;
                    continue;
                }
                // `as alias`
                if matches!(toks.get(*i), Some(Tok::Ident(a)) if a == "as") {
                    *i += 2;
                }
                out.push(path);
                return;
            }
            Some(Tok::Open) => {
                *i += 1;
                loop {
                    match toks.get(*i) {
                        Some(Tok::Close) => {
                            *i += 1;
                            return;
                        }
                        Some(Tok::Comma) => *i += 1,
                        None => return,
                        _ => use_tree(toks, i, &path, out),
                    }
                }
            }
            // `*` and anything else: the path so far.
            _ => {
                *i += 1;
                out.push(path);
                return;
            }
        }
    }
}

/// The paths a file names: use trees, and inline `crate::…` / `super::…` paths. Each
/// comes with the depth of inline `mod x { … }` blocks it sits in (where `super` means
/// the file's own module).
fn named_paths(text: &str) -> Vec<(Vec<String>, usize)> {
    let toks = tokens(&code_only(text));
    let mut out = Vec::new();
    let mut depth_stack: Vec<bool> = Vec::new(); // per `{`: opened an inline mod?
    let mut inline = 0usize;
    let mut i = 0;
    while i < toks.len() {
        match &toks[i] {
            Tok::Open => {
                let is_mod = i >= 2
                    && matches!(&toks[i - 2], Tok::Ident(m) if m == "mod")
                    && matches!(toks[i - 1], Tok::Ident(_));
                depth_stack.push(is_mod);
                if is_mod {
                    inline += 1;
                }
                i += 1;
            }
            Tok::Close => {
                if depth_stack.pop() == Some(true) {
                    inline -= 1;
                }
                i += 1;
            }
            Tok::Ident(u) if u == "use" => {
                i += 1;
                let mut paths = Vec::new();
                use_tree(&toks, &mut i, &[], &mut paths);
                out.extend(paths.into_iter().map(|p| (p, inline)));
            }
            Tok::Ident(head)
                if (head == "crate" || head == "super")
                    && toks.get(i + 1) == Some(&Tok::Colons) =>
            {
                let mut path = vec![head.clone()];
                i += 1;
                while toks.get(i) == Some(&Tok::Colons) {
                    match toks.get(i + 1) {
                        Some(Tok::Ident(id)) => {
                            path.push(id.clone());
                            i += 2;
                        }
                        _ => break,
                    }
                }
                out.push((path, inline));
            }
            _ => i += 1,
        }
    }
    out
}

/// The module a path names from module `from`, as the deepest known module it reaches.
fn resolve(
    from: &str,
    path: &[String],
    inline: usize,
    known: &BTreeMap<String, PathBuf>,
) -> Option<String> {
    let mut base: Vec<String> = if from.is_empty() {
        Vec::new()
    } else {
        from.split("::").map(str::to_string).collect()
    };
    let mut rest = path;
    match rest.first().map(String::as_str) {
        Some("crate") => {
            base.clear();
            rest = &rest[1..];
        }
        Some("super") | Some("self") => {
            // Inside an inline `mod tests { … }`, the first `super` is the file itself.
            let mut skip = inline;
            while let Some(first) = rest.first().map(String::as_str) {
                match first {
                    "super" if skip > 0 => skip -= 1,
                    "super" => {
                        base.pop()?;
                    }
                    "self" => {}
                    _ => break,
                }
                rest = &rest[1..];
            }
        }
        _ => return None, // another crate, or a name in scope
    }
    let mut best = None;
    let mut cur = base.clone();
    if known.contains_key(&cur.join("::")) {
        best = Some(cur.join("::"));
    }
    for seg in rest {
        cur.push(seg.clone());
        let name = cur.join("::");
        if known.contains_key(&name) {
            best = Some(name);
        }
    }
    best
}

fn is_ancestor(a: &str, b: &str) -> bool {
    a.is_empty() || b.starts_with(&format!("{a}::"))
}

/// Edges between files that are not ancestor and descendant: module → modules it names.
fn edges(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let known = modules(src);
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, file) in &known {
        let text = std::fs::read_to_string(file).expect("read source");
        for (path, inline) in named_paths(&text) {
            let Some(to) = resolve(module, &path, inline, &known) else {
                continue;
            };
            if &to == module || is_ancestor(&to, module) || is_ancestor(module, &to) {
                continue;
            }
            out.entry(module.clone()).or_default().insert(to);
        }
    }
    out
}

/// Every strongly connected set of more than one module (Tarjan), each sorted.
fn cycles(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct T<'a> {
        g: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        next: usize,
        out: Vec<Vec<String>>,
    }
    impl<'a> T<'a> {
        fn visit(&mut self, v: &'a str) {
            self.index.insert(v, self.next);
            self.low.insert(v, self.next);
            self.next += 1;
            self.stack.push(v);
            self.on.insert(v);
            if let Some(ws) = self.g.get(v) {
                for w in ws {
                    let w = w.as_str();
                    if !self.index.contains_key(w) {
                        self.visit(w);
                        let l = self.low[w].min(self.low[v]);
                        self.low.insert(v, l);
                    } else if self.on.contains(w) {
                        let l = self.index[w].min(self.low[v]);
                        self.low.insert(v, l);
                    }
                }
            }
            if self.low[v] == self.index[v] {
                let mut set = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on.remove(w);
                    set.push(w.to_string());
                    if w == v {
                        break;
                    }
                }
                if set.len() > 1 {
                    set.sort();
                    self.out.push(set);
                }
            }
        }
    }
    let mut t = T {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in g.keys() {
        if !t.index.contains_key(v.as_str()) {
            t.visit(v);
        }
    }
    t.out
}

fn crate_src(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(name)
        .join("src")
}

#[test]
fn no_file_imports_a_sibling_that_imports_it_back() {
    let mut found = Vec::new();
    for krate in ["knobs", "parsers", "report", "perflab", "crosscheck"] {
        let g = edges(&crate_src(krate));
        for set in cycles(&g) {
            // The edges inside the loop, so the message says which imports to untangle.
            let inside: Vec<String> = set
                .iter()
                .flat_map(|a| {
                    g.get(a)
                        .into_iter()
                        .flatten()
                        .filter(|b| set.contains(b))
                        .map(move |b| format!("{a} -> {b}"))
                })
                .collect();
            found.push(format!("{krate}: {}", inside.join(", ")));
        }
    }
    assert!(
        found.is_empty(),
        "modules that import each other:\n  {}",
        found.join("\n  ")
    );
}

/// The checker itself, on a tree made for it: a loop through a use tree, a loop through an
/// inline path, and what is not a loop (parent and child, a test module's `super::*`,
/// names in comments and strings).
#[test]
fn the_checker_finds_loops_and_only_loops() {
    let dir = std::env::temp_dir().join(format!("perflab-cycles-{}", std::process::id()));
    let src = dir.join("src");
    std::fs::create_dir_all(src.join("p")).unwrap();
    let files = [
        ("lib.rs", "mod a; mod b; mod c; mod p; use crate::a::X;"),
        (
            "a.rs",
            "use crate::{b::{Y, Z as W}, p};\n// crate::c::nothing\n",
        ),
        ("b.rs", "fn f() { super::a::g(); }"),
        (
            "c.rs",
            "const S: &str = \"crate::a::X\";\n#[cfg(test)]\nmod tests { use super::*; }",
        ),
        ("p/mod.rs", "mod q; pub use q::Q; use crate::c::T;"),
        ("p/q.rs", "use super::P; use super::super::c::T;"),
    ];
    for (name, text) in files {
        std::fs::write(src.join(name), text).unwrap();
    }
    let g = edges(&src);
    let found = cycles(&g);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(found, vec![vec!["a".to_string(), "b".to_string()]], "{g:?}");
    assert_eq!(
        g.get("a").cloned().unwrap_or_default(),
        ["b", "p"].map(String::from).into()
    );
    assert!(!g.contains_key("c"), "{g:?}");
    assert_eq!(
        g.get("p::q").cloned().unwrap_or_default(),
        ["c"].map(String::from).into()
    );
}
