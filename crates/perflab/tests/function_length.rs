//! Structure check of issue 24: no non-test function in any crate's `src/` is longer than
//! `MAX_LINES` lines, so each one reads as a few named steps.
//!
//! Every file is parsed with `syn` (a brace-matching scan would have to get strings, raw
//! strings, chars, lifetimes and comments right; the parser already does). A function's
//! length runs from the line of its `fn` keyword to the line of its closing brace, so
//! doc comments and attributes do not count. Free functions, methods and trait default
//! bodies are measured; functions nested in another function are measured on their own
//! too. Test code is left out: items and modules under `#[cfg(test)]` or `#[test]`, and
//! the files of `#[cfg(test)] mod x;` declarations (with everything below them).
//!
//! `ALLOWED` names the offenders that remain in files another change owns; an entry must
//! still be an offender, so the list can only shrink.

use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// Longest a function may be, in lines.
const MAX_LINES: usize = 80;

/// Offenders allowed for now: (file relative to the workspace root, function, reason).
const ALLOWED: &[(&str, &str, &str)] = &[];

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Long {
    file: String,
    line: usize,
    name: String,
    lines: usize,
}

/// Walks one parsed file, collecting long functions and the test modules it declares.
struct Scan<'a> {
    file: &'a str,
    /// Enclosing `impl` type names, innermost last, for `Type::method` names.
    owners: Vec<String>,
    long: Vec<Long>,
    /// `#[cfg(test)] mod x;` declarations: their files are test code.
    test_mods: Vec<String>,
}

fn is_test_attr(attr: &syn::Attribute) -> bool {
    if attr.path().is_ident("test") {
        return true;
    }
    let syn::Meta::List(list) = &attr.meta else {
        return false;
    };
    if !list.path.is_ident("cfg") {
        return false;
    }
    // `cfg(test)` or `cfg(all(test, …))`; `cfg(not(test))` is production code.
    let tokens = list.tokens.to_string();
    let words: Vec<&str> = tokens
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|w| !w.is_empty())
        .collect();
    words.contains(&"test") && !words.contains(&"not")
}

fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(is_test_attr)
}

fn type_name(ty: &syn::Type) -> String {
    match ty {
        syn::Type::Path(p) => p
            .path
            .segments
            .last()
            .map(|s| s.ident.to_string())
            .unwrap_or_default(),
        _ => "_".to_string(),
    }
}

impl Scan<'_> {
    fn measure(&mut self, sig: &syn::Signature, block: &syn::Block) {
        let start = sig.fn_token.span.start().line;
        let end = block.brace_token.span.close().start().line;
        let lines = end + 1 - start;
        if lines > MAX_LINES {
            let name = match self.owners.last() {
                Some(owner) => format!("{owner}::{}", sig.ident),
                None => sig.ident.to_string(),
            };
            self.long.push(Long {
                file: self.file.to_string(),
                line: start,
                name,
                lines,
            });
        }
    }
}

impl<'ast> Visit<'ast> for Scan<'_> {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if is_test(&m.attrs) {
            if m.content.is_none() {
                self.test_mods.push(m.ident.to_string());
            }
            return;
        }
        syn::visit::visit_item_mod(self, m);
    }

    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        if is_test(&f.attrs) {
            return;
        }
        // A free function nested in a method belongs to no impl.
        let owners = std::mem::take(&mut self.owners);
        self.measure(&f.sig, &f.block);
        syn::visit::visit_item_fn(self, f);
        self.owners = owners;
    }

    fn visit_item_impl(&mut self, i: &'ast syn::ItemImpl) {
        if is_test(&i.attrs) {
            return;
        }
        self.owners.push(type_name(&i.self_ty));
        syn::visit::visit_item_impl(self, i);
        self.owners.pop();
    }

    fn visit_item_trait(&mut self, t: &'ast syn::ItemTrait) {
        if is_test(&t.attrs) {
            return;
        }
        self.owners.push(t.ident.to_string());
        syn::visit::visit_item_trait(self, t);
        self.owners.pop();
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if is_test(&f.attrs) {
            return;
        }
        self.measure(&f.sig, &f.block);
        syn::visit::visit_impl_item_fn(self, f);
    }

    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        if is_test(&f.attrs) {
            return;
        }
        if let Some(block) = &f.default {
            self.measure(&f.sig, block);
        }
        syn::visit::visit_trait_item_fn(self, f);
    }
}

/// Long functions of one source text, and the `#[cfg(test)] mod x;` names it declares.
fn scan_source(file: &str, text: &str) -> (Vec<Long>, Vec<String>) {
    let ast = syn::parse_file(text).unwrap_or_else(|e| panic!("{file}: does not parse: {e}"));
    let mut scan = Scan {
        file,
        owners: Vec::new(),
        long: Vec::new(),
        test_mods: Vec::new(),
    };
    scan.visit_file(&ast);
    (scan.long, scan.test_mods)
}

/// The directory holding the child modules of the module in `path`.
fn child_dir(path: &Path) -> PathBuf {
    let dir = path.parent().expect("file in a dir").to_path_buf();
    match path.file_stem().and_then(|s| s.to_str()) {
        Some("mod" | "lib" | "main") => dir,
        Some(stem) => dir.join(stem),
        None => dir,
    }
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src dir") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every long non-test function under `crates/*/src`, sorted by file and line.
fn long_functions() -> Vec<Long> {
    let root = workspace_root();
    let mut files = Vec::new();
    for krate in std::fs::read_dir(root.join("crates")).expect("read crates") {
        let src = krate.expect("crate entry").path().join("src");
        if src.is_dir() {
            rust_files(&src, &mut files);
        }
    }
    files.sort();
    let mut test_paths: Vec<PathBuf> = Vec::new();
    let mut long = Vec::new();
    for path in &files {
        let rel = path.strip_prefix(&root).expect("under root");
        let text = std::fs::read_to_string(path).expect("read source");
        let (found, test_mods) = scan_source(&rel.to_string_lossy(), &text);
        for name in test_mods {
            let dir = child_dir(path);
            test_paths.push(dir.join(format!("{name}.rs")));
            test_paths.push(dir.join(name));
        }
        long.extend(found.into_iter().map(|l| (path.clone(), l)));
    }
    // Files are sorted, so a test module's files come after the file declaring it, but
    // filtering after the walk needs no such order.
    let mut out: Vec<Long> = long
        .into_iter()
        .filter(|(path, _)| !test_paths.iter().any(|t| path.starts_with(t)))
        .map(|(_, l)| l)
        .collect();
    out.sort();
    out
}

#[test]
fn no_function_is_longer_than_the_limit() {
    let long = long_functions();
    let allowed = |l: &Long| ALLOWED.iter().any(|(f, n, _)| *f == l.file && *n == l.name);
    let unexpected: Vec<String> = long
        .iter()
        .filter(|l| !allowed(l))
        .map(|l| format!("{}:{} {} is {} lines", l.file, l.line, l.name, l.lines))
        .collect();
    let stale: Vec<String> = ALLOWED
        .iter()
        .filter(|(f, n, _)| !long.iter().any(|l| l.file == *f && l.name == *n))
        .map(|(f, n, _)| format!("{f} {n}"))
        .collect();
    let mut problems = String::new();
    if !unexpected.is_empty() {
        problems += &format!(
            "{} non-test function(s) longer than {MAX_LINES} lines; split each into named \
             steps:\n  {}\n",
            unexpected.len(),
            unexpected.join("\n  ")
        );
    }
    if !stale.is_empty() {
        problems += &format!(
            "allow-list entries no longer long (remove them from ALLOWED):\n  {}\n",
            stale.join("\n  ")
        );
    }
    assert!(problems.is_empty(), "{problems}");
}

#[cfg(test)]
mod scanner {
    use super::*;

    fn body(lines: usize) -> String {
        (0..lines.saturating_sub(2))
            .map(|i| format!("    let _x{i} = \"}}{{ // not a brace\";\n"))
            .collect()
    }

    fn fn_of(name: &str, lines: usize) -> String {
        format!("fn {name}() {{\n{}}}\n", body(lines))
    }

    #[test]
    fn counts_from_fn_keyword_to_closing_brace() {
        let text = format!(
            "/// doc\n#[inline]\n{}{}",
            fn_of("long", 81),
            fn_of("ok", 80)
        );
        let (long, _) = scan_source("x.rs", &text);
        assert_eq!(
            long,
            vec![Long {
                file: "x.rs".into(),
                line: 3,
                name: "long".into(),
                lines: 81
            }]
        );
    }

    #[test]
    fn braces_in_strings_raw_strings_chars_lifetimes_and_comments_do_not_count() {
        let text = "fn f<'a>(s: &'a str) -> char {\n    let _ = r#\"}}\"#;\n    \
                    /* } */ let _ = '}';\n    let _ = \"{\";\n    '{'\n}\n";
        let (long, _) = scan_source("x.rs", text);
        assert!(long.is_empty());
        let text = format!("{text}{}", fn_of("after", 90));
        let (long, _) = scan_source("x.rs", &text);
        assert_eq!(long[0].line, 7);
        assert_eq!(long[0].lines, 90);
    }

    #[test]
    fn methods_are_named_by_their_type_and_test_code_is_skipped() {
        let text = format!(
            "impl Foo {{\n{}}}\n#[cfg(test)]\nmod tests {{\n{}}}\n#[test]\n{}\
             #[cfg(test)]\nmod more;\n#[cfg(not(test))]\n{}",
            fn_of("method", 85),
            fn_of("in_tests", 85),
            fn_of("a_test", 85),
            fn_of("prod", 85),
        );
        let (long, test_mods) = scan_source("x.rs", &text);
        let names: Vec<&str> = long.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["Foo::method", "prod"]);
        assert_eq!(test_mods, ["more"]);
    }

    #[test]
    fn a_test_module_file_lives_beside_or_below_its_parent() {
        assert_eq!(child_dir(Path::new("a/lib.rs")), Path::new("a"));
        assert_eq!(child_dir(Path::new("a/mod.rs")), Path::new("a"));
        assert_eq!(child_dir(Path::new("a/b.rs")), Path::new("a/b"));
    }
}
