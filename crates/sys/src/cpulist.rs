//! The kernel's CPU list format: `0-3,8,10-11` (cpulist_parse in lib/bitmap.c),
//! including the stride form `0-15:2/4` is not accepted by sysfs output, so only ranges.

use crate::error::ParseError;

/// Parses `0-3,8` into a sorted, deduplicated list. Empty text is an empty list.
pub fn parse_cpu_list(text: &str) -> Result<Vec<u32>, ParseError> {
    let mut cpus = Vec::new();
    let text = text.trim();
    if text.is_empty() {
        return Ok(cpus);
    }
    for part in text.split(',') {
        let part = part.trim();
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (parse_cpu(a)?, parse_cpu(b)?),
            None => {
                let c = parse_cpu(part)?;
                (c, c)
            }
        };
        if hi < lo {
            return Err(ParseError::new(1, format!("descending CPU range {part:?}")));
        }
        if hi - lo > 1 << 16 {
            return Err(ParseError::new(
                1,
                format!("CPU range {part:?} is too large"),
            ));
        }
        cpus.extend(lo..=hi);
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

fn parse_cpu(s: &str) -> Result<u32, ParseError> {
    s.trim()
        .parse()
        .map_err(|_| ParseError::new(1, format!("{s:?} is not a CPU number")))
}

/// Formats a list the way the kernel does: `0-3,8`.
pub fn format_cpu_list(cpus: &[u32]) -> String {
    let mut sorted = cpus.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut out = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let start = sorted[i];
        let mut end = start;
        while i + 1 < sorted.len() && sorted[i + 1] == end + 1 {
            i += 1;
            end = sorted[i];
        }
        out.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    out.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_ranges_and_singles() {
        assert_eq!(parse_cpu_list("0-3,8\n").unwrap(), vec![0, 1, 2, 3, 8]);
        assert_eq!(parse_cpu_list("").unwrap(), Vec::<u32>::new());
        assert!(parse_cpu_list("3-1").is_err());
        assert!(parse_cpu_list("x").is_err());
        assert!(parse_cpu_list("0-99999999").is_err());
    }

    proptest! {
        #[test]
        fn format_then_parse_round_trips(cpus in proptest::collection::btree_set(0u32..512, 0..64)) {
            let v: Vec<u32> = cpus.into_iter().collect();
            prop_assert_eq!(parse_cpu_list(&format_cpu_list(&v)).unwrap(), v);
        }

        #[test]
        fn never_panics(s in ".{0,40}") {
            let _ = parse_cpu_list(&s);
        }
    }
}
