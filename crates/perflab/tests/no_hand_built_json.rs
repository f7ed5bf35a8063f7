//! Check of issue 24: the binary builds no JSON document by hand. Every document it prints
//! is a typed struct or a view's sections through `Section::json`
//! (`perflab_report::views`), so no file of `crates/perflab/src` calls `json!` outside
//! its tests (which may, for fixtures).
//!
//! Files are parsed with `syn`; a `json!` is found as a macro's path, or among the tokens
//! of another macro (`vec![json!(…)]`, `println!("{}", json!(…))`), whose bodies `syn`
//! leaves unparsed. Left out as test code: items and modules under `#[cfg(test)]` or
//! `#[test]`, and the files of `#[cfg(test)] mod x;` declarations.

use std::path::{Path, PathBuf};

use proc_macro2::{TokenStream, TokenTree};
use syn::visit::Visit;

/// `#[test]`, or a `cfg` that holds `test` and no `not` (`cfg(not(test))` is production).
fn marks_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("test")
            || matches!(&a.meta, syn::Meta::List(l) if l.path.is_ident("cfg") && {
                let words = l.tokens.to_string();
                words.split(|c: char| !c.is_alphanumeric()).any(|w| w == "test")
                    && !words.split(|c: char| !c.is_alphanumeric()).any(|w| w == "not")
            })
    })
}

/// The lines of `json!` in one file's production code, and its out-of-line test modules.
#[derive(Default)]
struct Finder {
    lines: Vec<usize>,
    test_mods: Vec<String>,
}

impl Finder {
    /// `json` followed by `!` anywhere in `tokens`, groups included.
    fn scan(&mut self, tokens: TokenStream) {
        let mut after_json: Option<usize> = None;
        for t in tokens {
            match &t {
                TokenTree::Punct(p) if p.as_char() == '!' => {
                    self.lines.extend(after_json);
                }
                TokenTree::Group(g) => self.scan(g.stream()),
                _ => {}
            }
            after_json = match &t {
                TokenTree::Ident(i) if i == "json" => Some(i.span().start().line),
                _ => None,
            };
        }
    }
}

impl<'ast> Visit<'ast> for Finder {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if !marks_test(&m.attrs) {
            syn::visit::visit_item_mod(self, m);
        } else if m.content.is_none() {
            self.test_mods.push(m.ident.to_string());
        }
    }

    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        if !marks_test(&f.attrs) {
            syn::visit::visit_item_fn(self, f);
        }
    }

    fn visit_item_impl(&mut self, i: &'ast syn::ItemImpl) {
        if !marks_test(&i.attrs) {
            syn::visit::visit_item_impl(self, i);
        }
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if !marks_test(&f.attrs) {
            syn::visit::visit_impl_item_fn(self, f);
        }
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        if m.path.segments.last().is_some_and(|s| s.ident == "json") {
            let line = m.path.segments.last().unwrap().ident.span().start().line;
            self.lines.push(line);
        }
        self.scan(m.tokens.clone());
    }
}

fn find(text: &str) -> Finder {
    let ast = syn::parse_file(text).expect("the file parses");
    let mut f = Finder::default();
    f.visit_file(&ast);
    f
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read the source dir") {
        let path = entry.expect("a dir entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn the_binary_builds_no_json_document_by_hand() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    assert!(files.len() > 20, "{files:?}");
    let mut found = Vec::new();
    let mut test_files: Vec<PathBuf> = Vec::new();
    for path in &files {
        let f = find(&std::fs::read_to_string(path).expect("read a source file"));
        // `a.rs` declares its children in `a/`; `mod.rs` and `main.rs` in their own dir.
        let dir = match path.file_stem().and_then(|s| s.to_str()) {
            Some("mod" | "main") => path.parent().unwrap().to_path_buf(),
            _ => path.with_extension(""),
        };
        for m in f.test_mods {
            test_files.push(dir.join(format!("{m}.rs")));
            test_files.push(dir.join(m));
        }
        found.extend(f.lines.into_iter().map(|l| (path.clone(), l)));
    }
    let hand_built: Vec<String> = found
        .into_iter()
        .filter(|(p, _)| !test_files.iter().any(|t| p.starts_with(t)))
        .map(|(p, l)| format!("{}:{l}", p.strip_prefix(&src).unwrap().display()))
        .collect();
    assert!(
        hand_built.is_empty(),
        "json! builds a document by hand; make it a typed struct or a view's sections \
         (perflab_report::views):\n  {}",
        hand_built.join("\n  ")
    );
}

#[test]
fn json_is_found_in_code_and_nested_macros_but_not_in_tests() {
    let text = r#"
        fn a() { let _ = serde_json::json!({ "a": 1 }); }
        fn b() { println!("{}", vec![json!(1)][0]); }
        fn c() { let _ = "json!"; let json = 1; let _ = !json; }
        #[cfg(test)]
        mod tests { fn d() { json!(2); } }
        #[test]
        fn e() { json!(3); }
        #[cfg(not(test))]
        fn f() { json!(4); }
        #[cfg(test)]
        mod more;
    "#;
    let f = find(text);
    assert_eq!(f.lines, [2, 3, 10]);
    assert_eq!(f.test_mods, ["more"]);
}
