//! The text side of `exec`: `k=v;k=v` lists (the `args` and `env` parameters) and
//! `{name}` placeholders in the command line.
//!
//! Shell text is full of braces (`awk '{print $2}'`, `${HOME}`, `{ a; b; }`), so only a
//! `{name}` whose name is known is replaced; anything else is left exactly as written,
//! with no escaping needed. Unknown `{word}`s are reported back so a typo such as
//! `{szie}` shows up in the measurement's notes instead of vanishing into the shell.
//! `{{name}}` writes a literal `{name}` for a known name.

use std::collections::BTreeMap;

/// Parses `k=v;k=v` (spaces around keys and values are dropped, empty items skipped).
/// Keys must be identifiers, each given once; `what` names the parameter in errors.
pub(super) fn parse_pairs(what: &str, text: &str) -> Result<Vec<(String, String)>, String> {
    let mut out: Vec<(String, String)> = Vec::new();
    for item in text.split(';') {
        let item = item.trim();
        if item.is_empty() {
            continue;
        }
        let Some((k, v)) = item.split_once('=') else {
            return Err(format!(
                "{what}: {item:?} is not NAME=VALUE (items are separated by ';')"
            ));
        };
        let k = k.trim();
        if !is_ident(k) {
            return Err(format!(
                "{what}: {k:?} is not a name (letters, digits and '_', not starting with a digit)"
            ));
        }
        if out.iter().any(|(seen, _)| seen == k) {
            return Err(format!("{what}: {k} is given twice"));
        }
        out.push((k.to_string(), v.trim().to_string()));
    }
    Ok(out)
}

fn is_ident(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The length of the identifier at the start of `s` (0 if none).
fn ident_len(s: &str) -> usize {
    let first_ok = s
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    if !first_ok {
        return 0;
    }
    s.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(s.len())
}

/// Text with placeholders replaced, and the `{word}`s that named nothing.
#[derive(Debug, PartialEq)]
pub(super) struct Expanded {
    pub text: String,
    pub unknown: Vec<String>,
}

/// Replaces `{name}` with `values[name]`. A `{word}` right after `$` is shell syntax
/// (`${HOME}`) and is neither replaced nor reported.
pub(super) fn expand(text: &str, values: &BTreeMap<String, String>) -> Expanded {
    let mut out = String::with_capacity(text.len());
    let mut unknown: Vec<String> = Vec::new();
    let mut rest = text;
    while let Some(pos) = rest.find('{') {
        out.push_str(&rest[..pos]);
        let after_dollar = out.ends_with('$');
        rest = &rest[pos..];
        // `{{name}}`: a literal `{name}` when name is known.
        if let Some(inner) = rest.strip_prefix("{{") {
            let n = ident_len(inner);
            if n > 0 && inner[n..].starts_with("}}") && values.contains_key(&inner[..n]) {
                out.push('{');
                out.push_str(&inner[..n]);
                out.push('}');
                rest = &inner[n + 2..];
                continue;
            }
        }
        let inner = &rest[1..];
        let n = ident_len(inner);
        if n > 0 && inner[n..].starts_with('}') {
            let name = &inner[..n];
            match values.get(name) {
                Some(v) if !after_dollar => out.push_str(v),
                _ => {
                    if !after_dollar && !unknown.iter().any(|u| u == name) {
                        unknown.push(name.to_string());
                    }
                    out.push_str(&rest[..n + 2]);
                }
            }
            rest = &inner[n + 1..];
        } else {
            out.push('{');
            rest = inner;
        }
    }
    out.push_str(rest);
    Expanded { text: out, unknown }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vals(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn pairs_parse_with_spaces_and_empty_items() {
        let p = parse_pairs("env", " HUGE=1; SIZE = 4K ;;X=a=b;").unwrap();
        assert_eq!(
            p,
            vec![
                ("HUGE".into(), "1".into()),
                ("SIZE".into(), "4K".into()),
                ("X".into(), "a=b".into())
            ]
        );
        assert!(parse_pairs("env", "").unwrap().is_empty());
        let e = parse_pairs("env", "HUGE").unwrap_err();
        assert!(e.contains("NAME=VALUE"), "{e}");
        let e = parse_pairs("args", "1x=2").unwrap_err();
        assert!(e.contains("\"1x\" is not a name"), "{e}");
        let e = parse_pairs("args", "a=1;a=2").unwrap_err();
        assert!(e.contains("a is given twice"), "{e}");
    }

    #[test]
    fn known_names_are_replaced_and_shell_braces_kept() {
        let v = vals(&[("size", "4096"), ("duration", "0.5")]);
        let e = expand(
            "bench -s {size} -t {duration}; awk '{print $2}' | sed 's/{x/y/' ${HOME} {a,b} {size",
            &v,
        );
        assert_eq!(
            e.text,
            "bench -s 4096 -t 0.5; awk '{print $2}' | sed 's/{x/y/' ${HOME} {a,b} {size"
        );
        assert!(e.unknown.is_empty(), "{:?}", e.unknown);
    }

    #[test]
    fn unknown_words_are_kept_and_reported_once() {
        let v = vals(&[("size", "1")]);
        let e = expand("x {szie} {szie} ${size} {print}", &v);
        assert_eq!(e.text, "x {szie} {szie} ${size} {print}");
        assert_eq!(e.unknown, vec!["szie".to_string(), "print".to_string()]);
    }

    #[test]
    fn double_braces_write_a_literal_placeholder() {
        let v = vals(&[("size", "1")]);
        assert_eq!(expand("{{size}} {size}", &v).text, "{size} 1");
        assert_eq!(expand("{{other}}", &v).text, "{{other}}");
        assert_eq!(expand("}}{{", &v).text, "}}{{");
    }

    proptest::proptest! {
        #[test]
        fn expansion_never_panics_and_is_identity_without_names(s in "\\PC{0,60}") {
            let e = expand(&s, &BTreeMap::new());
            proptest::prop_assert_eq!(e.text, s);
            let _ = parse_pairs("args", &e.unknown.join(";"));
        }
    }
}
