//! Huge pages: the hugetlb pools (`kernel/mm/hugepages/hugepages-<size>kB/`) and the
//! transparent huge page mode (`kernel/mm/transparent_hugepage/{enabled,defrag}`).

use std::io::BufRead;

use crate::error::{ParseError, SysError};
use crate::root::SysRoot;

const POOLS: &str = "sys/kernel/mm/hugepages";
const THP: &str = "sys/kernel/mm/transparent_hugepage";

/// One hugetlb pool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HugePool {
    pub size_kb: u64,
    pub nr: u64,
    pub free: u64,
    pub resv: u64,
    pub surplus: u64,
}

impl HugePool {
    /// The pool's directory, relative to the root (for knobs that resize it).
    pub fn dir(size_kb: u64) -> String {
        format!("{POOLS}/hugepages-{size_kb}kB")
    }
}

/// Reads every pool, smallest page size first. No hugepages directory (no
/// CONFIG_HUGETLBFS) is an empty list.
pub fn pools(sys: &SysRoot) -> Result<Vec<HugePool>, SysError> {
    let names = match sys.list_dir(POOLS) {
        Ok(n) => n,
        Err(e) if e.is_not_found() => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut out = Vec::new();
    for name in names {
        let Some(size_kb) = name
            .strip_prefix("hugepages-")
            .and_then(|s| s.strip_suffix("kB"))
            .and_then(|s| s.parse::<u64>().ok())
        else {
            continue;
        };
        let dir = HugePool::dir(size_kb);
        let num = |f: &str| sys.read_parsed::<u64>(&format!("{dir}/{f}"));
        out.push(HugePool {
            size_kb,
            nr: num("nr_hugepages")?,
            free: num("free_hugepages")?,
            resv: num("resv_hugepages")?,
            surplus: num("surplus_hugepages")?,
        });
    }
    out.sort_by_key(|p| p.size_kb);
    Ok(out)
}

/// A sysfs choice list such as `always [madvise] never`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Choice {
    pub selected: String,
    pub options: Vec<String>,
}

/// Parses a choice list; exactly one word must be bracketed.
pub fn parse_choice(mut reader: impl BufRead) -> Result<Choice, ParseError> {
    let mut text = String::new();
    reader
        .read_line(&mut text)
        .map_err(|e| ParseError::new(1, format!("read error: {e}")))?;
    let mut selected = None;
    let mut options = Vec::new();
    for word in text.split_whitespace() {
        match word.strip_prefix('[').and_then(|w| w.strip_suffix(']')) {
            Some(w) => {
                if selected.replace(w.to_string()).is_some() {
                    return Err(ParseError::new(
                        1,
                        format!("more than one selected word in {text:?}"),
                    ));
                }
                options.push(w.to_string());
            }
            None => options.push(word.to_string()),
        }
    }
    let selected = selected
        .filter(|s| !s.is_empty())
        .ok_or_else(|| ParseError::new(1, format!("no [selected] word in {text:?}")))?;
    Ok(Choice { selected, options })
}

/// The transparent huge page settings; `None` where the file is missing or unparsable.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ThpMode {
    pub enabled: Option<String>,
    pub defrag: Option<String>,
}

/// Path of a THP attribute (`enabled`, `defrag`), relative to the root.
pub fn thp_path(attr: &str) -> String {
    format!("{THP}/{attr}")
}

pub fn thp(sys: &SysRoot) -> ThpMode {
    let read = |attr: &str| {
        sys.open(&thp_path(attr))
            .ok()
            .and_then(|r| parse_choice(r).ok())
            .map(|c| c.selected)
    };
    ThpMode {
        enabled: read("enabled"),
        defrag: read("defrag"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn choice_lists() {
        let c = parse_choice("always [madvise] never\n".as_bytes()).unwrap();
        assert_eq!(c.selected, "madvise");
        assert_eq!(c.options, vec!["always", "madvise", "never"]);
        let d = parse_choice("always defer defer+madvise [madvise] never".as_bytes()).unwrap();
        assert_eq!(d.selected, "madvise");
        assert!(parse_choice("always madvise".as_bytes()).is_err());
        assert!(parse_choice("[a] [b]".as_bytes()).is_err());
        assert!(parse_choice("[]".as_bytes()).is_err());
    }

    #[test]
    fn pools_on_a_fake_tree() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sys/kernel/mm/hugepages/hugepages-2048kB");
        std::fs::create_dir_all(&p).unwrap();
        for (f, v) in [
            ("nr_hugepages", "8"),
            ("free_hugepages", "6"),
            ("resv_hugepages", "1"),
            ("surplus_hugepages", "0"),
        ] {
            std::fs::write(p.join(f), format!("{v}\n")).unwrap();
        }
        let sys = SysRoot::at(dir.path());
        let pools = pools(&sys).unwrap();
        assert_eq!(
            pools,
            vec![HugePool {
                size_kb: 2048,
                nr: 8,
                free: 6,
                resv: 1,
                surplus: 0
            }]
        );
        assert_eq!(thp(&sys), ThpMode::default());
        assert!(super::pools(&SysRoot::at(dir.path().join("none")))
            .unwrap()
            .is_empty());
    }

    proptest! {
        #[test]
        fn never_panics(s in "\\PC{0,40}") {
            let _ = parse_choice(s.as_bytes());
        }
    }
}
