//! The kernel command line (`/proc/cmdline`), split the way the kernel does (next_arg in
//! lib/cmdline.c): words separated by whitespace outside double quotes, `key=value` at the
//! first `=`, surrounding quotes dropped from values, and everything after a lone `--`
//! handed to init rather than the kernel.

use std::io::BufRead;

use crate::error::{ParseError, SysError};
use crate::root::SysRoot;

/// One kernel parameter: `quiet` has no value, `isolcpus=2-5` has one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelParam {
    pub key: String,
    pub value: Option<String>,
}

/// A parsed command line.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Cmdline {
    /// Kernel parameters in order (duplicates kept: for most, the last one wins).
    pub params: Vec<KernelParam>,
    /// Words after `--`, which the kernel passes to init.
    pub init_args: Vec<String>,
}

/// The kernel treats `-` and `_` in parameter names alike (parameq in kernel/params.c).
fn same_key(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .all(|(x, y)| x == y || (matches!(x, b'-' | b'_') && matches!(y, b'-' | b'_')))
}

impl Cmdline {
    /// Parses command-line text (all of it; /proc/cmdline is one line).
    pub fn parse_str(text: &str) -> Self {
        let mut out = Cmdline::default();
        let mut words = split_words(text).into_iter();
        for word in words.by_ref() {
            if word == "--" {
                break;
            }
            out.params.push(split_param(&word));
        }
        out.init_args = words.collect();
        out
    }

    /// The value of the last occurrence of `key`; `Some(None)` when present without value.
    pub fn get(&self, key: &str) -> Option<Option<&str>> {
        self.params
            .iter()
            .rev()
            .find(|p| same_key(&p.key, key))
            .map(|p| p.value.as_deref())
    }

    /// The value of the last occurrence of `key`, if it has one.
    pub fn value(&self, key: &str) -> Option<&str> {
        self.get(key).flatten()
    }

    pub fn has(&self, key: &str) -> bool {
        self.get(key).is_some()
    }
}

/// Reads a command line from a reader (the whole content is used).
pub fn parse_cmdline(mut reader: impl BufRead) -> Result<Cmdline, ParseError> {
    let mut bytes = Vec::new();
    reader
        .read_to_end(&mut bytes)
        .map_err(|e| ParseError::new(1, format!("read error: {e}")))?;
    Ok(Cmdline::parse_str(&String::from_utf8_lossy(&bytes)))
}

fn split_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_quote = false;
    let mut started = false;
    for c in text.chars() {
        if c.is_whitespace() && !in_quote {
            if started {
                words.push(std::mem::take(&mut cur));
                started = false;
            }
            continue;
        }
        if c == '"' {
            in_quote = !in_quote;
        }
        cur.push(c);
        started = true;
    }
    if started {
        words.push(cur);
    }
    words
}

fn split_param(word: &str) -> KernelParam {
    // A whole word may be quoted: `"key=a b"`.
    let word = match word.strip_prefix('"') {
        Some(w) => w.strip_suffix('"').unwrap_or(w),
        None => word,
    };
    match word.split_once('=') {
        None => KernelParam {
            key: word.to_string(),
            value: None,
        },
        Some((key, value)) => {
            let value = match value.strip_prefix('"') {
                Some(v) => v.strip_suffix('"').unwrap_or(v),
                None => value,
            };
            KernelParam {
                key: key.to_string(),
                value: Some(value.to_string()),
            }
        }
    }
}

/// Reads and parses `proc/cmdline` of a root.
pub fn read(sys: &SysRoot) -> Result<Cmdline, SysError> {
    const PATH: &str = "proc/cmdline";
    parse_cmdline(sys.open(PATH)?).map_err(|e| e.at(sys.path(PATH)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn splits_params_and_init_args() {
        let c = Cmdline::parse_str(
            "BOOT_IMAGE=/vmlinuz ro quiet isolcpus=managed_irq,domain,2-5 \
             dyndbg=\"file foo.c +p\" rcu-nocbs=2-5 -- --init-flag x=1\n",
        );
        assert_eq!(c.value("isolcpus"), Some("managed_irq,domain,2-5"));
        assert_eq!(c.value("dyndbg"), Some("file foo.c +p"));
        assert_eq!(c.get("quiet"), Some(None));
        assert!(c.has("ro"));
        assert_eq!(
            c.value("rcu_nocbs"),
            Some("2-5"),
            "dash and underscore are the same"
        );
        assert!(!c.has("x"), "init arguments are not kernel parameters");
        assert_eq!(c.init_args, vec!["--init-flag", "x=1"]);
    }

    #[test]
    fn last_occurrence_wins_and_quoted_words() {
        let c = Cmdline::parse_str("a=1 a=2 \"b=x y\" c=");
        assert_eq!(c.value("a"), Some("2"));
        assert_eq!(c.value("b"), Some("x y"));
        assert_eq!(c.get("c"), Some(Some("")));
        assert_eq!(Cmdline::parse_str("").params.len(), 0);
        assert_eq!(
            parse_cmdline("x=\"unterminated".as_bytes())
                .unwrap()
                .value("x"),
            Some("unterminated")
        );
    }

    proptest! {
        #[test]
        fn never_panics(s in "\\PC{0,60}") {
            let c = Cmdline::parse_str(&s);
            let _ = c.value("isolcpus");
        }
    }
}
