//! The file graph of one crate: module → the modules whose items it names, and the
//! strongly connected sets of that graph.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::source::{named_paths, Named, Naming};

/// Module path (`a::b`, "" for the crate root) → file.
pub fn modules(src: &Path) -> BTreeMap<String, PathBuf> {
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

fn split(module: &str) -> Vec<String> {
    if module.is_empty() {
        Vec::new()
    } else {
        module.split("::").map(str::to_string).collect()
    }
}

/// The modules declared directly under `module`.
fn children(module: &str, known: &BTreeMap<String, PathBuf>) -> Vec<String> {
    let depth = split(module).len() + 1;
    known
        .keys()
        .filter(|k| is_ancestor(module, k) && split(k).len() == depth)
        .filter_map(|k| split(k).pop())
        .collect()
}

/// The deepest known module a path names from module `from`, and the segment after it
/// (the item, when the path goes on past a module).
fn resolve(
    from: &str,
    path: &[String],
    inline: usize,
    known: &BTreeMap<String, PathBuf>,
) -> Option<(String, Option<String>)> {
    let mut base = split(from);
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
        // A child module of `from`, named relative to it (`vm::build()`).
        Some(head) if inline == 0 && known.contains_key(&join(&base, head)) => {}
        _ => return None, // another crate, or a name in scope
    }
    let mut best = known
        .contains_key(&base.join("::"))
        .then(|| (base.join("::"), rest.first().cloned()));
    let mut cur = base;
    for (n, seg) in rest.iter().enumerate() {
        cur.push(seg.clone());
        let name = cur.join("::");
        if known.contains_key(&name) {
            best = Some((name, rest.get(n + 1).cloned()));
        }
    }
    best
}

fn join(base: &[String], last: &str) -> String {
    let mut v = base.to_vec();
    v.push(last.to_string());
    v.join("::")
}

pub fn is_ancestor(a: &str, b: &str) -> bool {
    a.is_empty() && !b.is_empty() || b.starts_with(&format!("{a}::"))
}

/// One crate's sources, read once.
pub struct Crate {
    known: BTreeMap<String, PathBuf>,
    named: BTreeMap<String, Vec<Named>>,
}

impl Crate {
    pub fn read(src: &Path) -> Self {
        let known = modules(src);
        let named = known
            .iter()
            .map(|(m, file)| {
                let text = std::fs::read_to_string(file).expect("read source");
                (m.clone(), named_paths(&text, &children(m, &known)))
            })
            .collect();
        Crate { known, named }
    }

    /// The file that defines what `module`'s `item` names: a name `module` re-exports
    /// (`pub use a::b::Item`) is followed to the file it comes from, so a path through a
    /// facade (`crate::netpath::find_tool`) is an edge to the file that has the item.
    fn defining(&self, module: String, item: Option<String>, hops: usize) -> String {
        let Some(item) = item else { return module };
        if hops == 0 {
            return module;
        }
        let reexport = self.named.get(&module).into_iter().flatten().find(|n| {
            n.naming == Naming::Reexport && n.inline == 0 && n.binds.as_deref() == Some(&item)
        });
        let Some(n) = reexport else { return module };
        match resolve(&module, &n.path, 0, &self.known) {
            // The path's last segment is the item itself.
            Some((m, next)) if m != module => self.defining(m, next, hops - 1),
            _ => module,
        }
    }

    /// Edges between files: module → modules it names. A parent's re-export of a child's
    /// item (`pub use child::Item`) is the module tree's facade, not a use, and is left
    /// out; a parent that calls into a child, and a child that uses its parent's items,
    /// are edges like any other.
    pub fn edges(&self) -> BTreeMap<String, BTreeSet<String>> {
        let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (module, named) in &self.named {
            // Paths named inside an inline `mod tests { … }` are the tests' own needs, not
            // the file's.
            for n in named.iter().filter(|n| n.inline == 0) {
                let Some((to, item)) = resolve(module, &n.path, n.inline, &self.known) else {
                    continue;
                };
                let to = self.defining(to, item, 8);
                if &to == module || (n.naming == Naming::Reexport && is_ancestor(module, &to)) {
                    continue;
                }
                out.entry(module.clone()).or_default().insert(to);
            }
        }
        out
    }
}

/// Every strongly connected set of more than one module (Tarjan), each sorted.
pub fn cycles(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
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
