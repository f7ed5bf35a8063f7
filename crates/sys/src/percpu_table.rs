//! The table /proc/interrupts and /proc/softirqs share: a header of `CPU<n>` words naming
//! the count columns, then rows of `name: count count … [text]`. What a row may look like
//! (how many counts, trailing text) differs per file, so each file checks its own rows.

use std::io::BufRead;

use crate::error::ParseError;

/// A row split into its parts, before the file-specific checks.
pub(crate) struct RawRow<'a> {
    /// The text before the colon, trimmed.
    pub name: String,
    /// The leading counts, at most one per header CPU.
    pub counts: Vec<u64>,
    /// The words after the counts.
    pub rest: Vec<&'a str>,
}

/// The parsed header and the rows `row` made of the lines after it.
pub(crate) struct Table<T> {
    pub cpus: Vec<u32>,
    pub rows: Vec<T>,
}

/// Parses the table: the first non-empty line must be the CPU header; a later line without
/// a `name:` is an error, since it means the format is not what perflab expects. `row`
/// turns each split row into the file's own row type, or rejects it; it gets the line
/// number and the header's CPU count.
pub(crate) fn parse_table<T>(
    reader: impl BufRead,
    mut row: impl FnMut(RawRow<'_>, usize, usize) -> Result<T, ParseError>,
) -> Result<Table<T>, ParseError> {
    let mut cpus: Option<Vec<u32>> = None;
    let mut rows = Vec::new();
    for (i, line) in reader.lines().enumerate() {
        let line_no = i + 1;
        let line = line.map_err(|e| ParseError::new(line_no, format!("read error: {e}")))?;
        if line.trim().is_empty() {
            continue;
        }
        let Some(header) = &cpus else {
            cpus = Some(parse_cpu_header(&line, line_no)?);
            continue;
        };
        let raw = split_row(&line, header.len())
            .ok_or_else(|| ParseError::new(line_no, format!("row without a name: {line:?}")))?;
        rows.push(row(raw, line_no, header.len())?);
    }
    let cpus = cpus.ok_or_else(|| ParseError::new(1, "empty file: no CPU header"))?;
    Ok(Table { cpus, rows })
}

/// Column index of a CPU in the header, if the header lists it.
pub(crate) fn column(cpus: &[u32], cpu: u32) -> Option<usize> {
    cpus.iter().position(|&c| c == cpu)
}

/// Sum of a row's counts; saturating, since a wrapped counter on another machine's capture
/// must not panic or wrap the total.
pub(crate) fn saturating_sum(counts: &[u64]) -> u64 {
    counts.iter().fold(0u64, |a, &c| a.saturating_add(c))
}

/// Parses a header line of `CPU<n>` words.
fn parse_cpu_header(line: &str, line_no: usize) -> Result<Vec<u32>, ParseError> {
    let mut cpus = Vec::new();
    for word in line.split_whitespace() {
        let n = word
            .strip_prefix("CPU")
            .and_then(|n| n.parse::<u32>().ok())
            .ok_or_else(|| {
                ParseError::new(line_no, format!("header word {word:?} is not CPU<n>"))
            })?;
        cpus.push(n);
    }
    if cpus.is_empty() {
        return Err(ParseError::new(line_no, "header lists no CPUs"));
    }
    Ok(cpus)
}

/// Splits a row into its name, up to `max` leading counts, and the remaining words.
fn split_row(line: &str, max: usize) -> Option<RawRow<'_>> {
    let (name, rest) = line.split_once(':')?;
    let name = name.trim();
    if name.is_empty() || name.contains(char::is_whitespace) {
        return None;
    }
    let mut words = rest.split_whitespace().peekable();
    let mut counts = Vec::new();
    while counts.len() < max {
        match words.peek().and_then(|w| w.parse::<u64>().ok()) {
            Some(v) => {
                counts.push(v);
                words.next();
            }
            None => break,
        }
    }
    Some(RawRow {
        name: name.to_string(),
        counts,
        rest: words.collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn names(text: &str) -> Result<Table<String>, ParseError> {
        parse_table(text.as_bytes(), |r, _, _| Ok(r.name))
    }

    #[test]
    fn splits_header_and_rows() {
        let t = parse_table(
            "\n  CPU0   CPU3\n\nLOC:  1  2  Local timer\nERR: 7\n".as_bytes(),
            |r, line, ncpu| Ok((r.name, r.counts, r.rest.join(" "), line, ncpu)),
        )
        .unwrap();
        assert_eq!(t.cpus, vec![0, 3]);
        assert_eq!(
            t.rows[0],
            (
                "LOC".to_string(),
                vec![1, 2],
                "Local timer".to_string(),
                4,
                2
            )
        );
        assert_eq!(t.rows[1], ("ERR".to_string(), vec![7], String::new(), 5, 2));
        assert_eq!(column(&t.cpus, 3), Some(1));
        assert_eq!(column(&t.cpus, 1), None);
        assert_eq!(saturating_sum(&[u64::MAX, 1]), u64::MAX);
    }

    #[test]
    fn rejects_bad_header_and_nameless_rows() {
        assert_eq!(names("").err().map(|e| e.line), Some(1));
        assert!(names("CPU0 x\n").is_err());
        assert!(names("CPU0\n two words: 1\n").is_err());
        assert_eq!(
            names("CPU0\nLOC: 1\nno colon\n").err().map(|e| e.line),
            Some(3)
        );
    }

    proptest! {
        #[test]
        fn never_panics(s in "(\\PC{0,30}\n){0,6}") {
            let _ = names(&s);
        }
    }
}
