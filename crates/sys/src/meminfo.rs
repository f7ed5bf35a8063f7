//! `/proc/meminfo`: `Key:   value kB` lines.

use std::collections::BTreeMap;
use std::io::BufRead;

use crate::error::{ParseError, SysError};
use crate::root::SysRoot;

/// Every field, in bytes (fields without a unit, like `HugePages_Total`, are counts).
pub fn parse_meminfo(reader: impl BufRead) -> Result<BTreeMap<String, u64>, ParseError> {
    let mut out = BTreeMap::new();
    for (i, line) in reader.lines().enumerate() {
        let line = line.map_err(|e| ParseError::new(i + 1, e.to_string()))?;
        let Some((key, rest)) = line.split_once(':') else {
            continue;
        };
        let mut words = rest.split_whitespace();
        let Some(Ok(value)) = words.next().map(str::parse::<u64>) else {
            return Err(ParseError::new(i + 1, format!("{key}: not a number")));
        };
        let scale = match words.next() {
            Some("kB") => 1024,
            None => 1,
            Some(u) => return Err(ParseError::new(i + 1, format!("{key}: unknown unit {u:?}"))),
        };
        out.insert(key.trim().to_string(), value.saturating_mul(scale));
    }
    Ok(out)
}

/// `MemAvailable` in bytes: what can be allocated without swapping.
pub fn available_bytes(sys: &SysRoot) -> Result<u64, SysError> {
    let path = "proc/meminfo";
    let fields = parse_meminfo(sys.open(path)?).map_err(|e| e.at(sys.path(path)))?;
    fields
        .get("MemAvailable")
        .or_else(|| fields.get("MemFree"))
        .copied()
        .ok_or_else(|| SysError::Parse {
            path: sys.path(path),
            line: 0,
            reason: "no MemAvailable or MemFree line".into(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_kilobytes_and_counts() {
        let text =
            "MemTotal:       24589212 kB\nMemAvailable:   20000000 kB\nHugePages_Total:       4\n";
        let m = parse_meminfo(text.as_bytes()).unwrap();
        assert_eq!(m["MemAvailable"], 20_000_000 * 1024);
        assert_eq!(m["HugePages_Total"], 4);
        assert!(parse_meminfo("MemTotal: lots kB\n".as_bytes()).is_err());
        assert!(parse_meminfo("MemTotal: 1 MB\n".as_bytes()).is_err());
    }

    proptest! {
        #[test]
        fn never_panics(s in ".{0,200}") {
            let _ = parse_meminfo(s.as_bytes());
        }
    }
}
