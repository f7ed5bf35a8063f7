//! Reading one source file: the module paths it names, each with how it names it.

/// How a file names a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Naming {
    /// `use a::b;` (or `pub(crate) use`, which only widens a name within the crate).
    Use,
    /// `pub use a::b;`: a re-export, which makes the path's item reachable from here.
    Reexport,
    /// A path written in code (`crate::a::f()`, `super::X`, `child::g()`).
    Inline,
}

/// One path a file names: its segments, the name it binds (a `use` binds the last
/// segment or its alias; `*` binds every item), the inline `mod x { … }` depth it sits
/// at (where `super` means the file's own module) and how it is named.
#[derive(Clone, Debug, PartialEq)]
pub struct Named {
    pub path: Vec<String>,
    pub binds: Option<String>,
    pub inline: usize,
    pub naming: Naming,
}

/// The text without comments and string literals, so words in them are no edges.
pub fn code_only(text: &str) -> String {
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
pub enum Tok {
    Ident(String),
    Colons,
    Open,
    Close,
    Comma,
    Star,
    Other,
}

pub fn tokens(text: &str) -> Vec<Tok> {
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
            '*' => out.push(Tok::Star),
            c if c.is_whitespace() => {}
            _ => out.push(Tok::Other),
        }
        i += 1;
    }
    out
}

/// Every path of a use tree starting at `toks[*i]`, prefixed by `prefix`, with the name
/// each binds (`None` for a glob).
fn use_tree(
    toks: &[Tok],
    i: &mut usize,
    prefix: &[String],
    out: &mut Vec<(Vec<String>, Option<String>)>,
) {
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
                let mut binds = id.clone();
                if matches!(toks.get(*i), Some(Tok::Ident(a)) if a == "as") {
                    if let Some(Tok::Ident(alias)) = toks.get(*i + 1) {
                        binds = alias.clone();
                    }
                    *i += 2;
                }
                // `use a::b::{self}` binds `b`.
                if id == "self" {
                    path.pop();
                    binds = path.last().cloned().unwrap_or_default();
                }
                out.push((path, Some(binds)));
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
            // `*` and anything else: the path so far, binding every item.
            _ => {
                *i += 1;
                out.push((path, None));
                return;
            }
        }
    }
}

/// Whether the `use` at `toks[i]` is `pub use` (not `pub(crate)`, `pub(super)`: those
/// only share a name inside the crate, as a private `use` does for a module's children).
fn is_reexport(toks: &[Tok], i: usize) -> bool {
    i >= 1 && matches!(&toks[i - 1], Tok::Ident(p) if p == "pub")
}

/// The paths a file names: use trees, and inline paths that start at `crate`, `super`,
/// `self` or one of `children` (the modules the file declares).
pub fn named_paths(text: &str, children: &[String]) -> Vec<Named> {
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
                let naming = if is_reexport(&toks, i) {
                    Naming::Reexport
                } else {
                    Naming::Use
                };
                i += 1;
                let mut paths = Vec::new();
                use_tree(&toks, &mut i, &[], &mut paths);
                out.extend(paths.into_iter().map(|(path, binds)| Named {
                    path,
                    binds,
                    inline,
                    naming,
                }));
            }
            Tok::Ident(head)
                if toks.get(i + 1) == Some(&Tok::Colons)
                    && (i == 0 || toks[i - 1] != Tok::Colons)
                    && (["crate", "super", "self"].contains(&head.as_str())
                        || (inline == 0 && children.contains(head))) =>
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
                out.push(Named {
                    path,
                    binds: None,
                    inline,
                    naming: Naming::Inline,
                });
            }
            _ => i += 1,
        }
    }
    out
}
