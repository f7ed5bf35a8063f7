//! `/proc/softirqs`: one row per softirq vector (`TIMER`, `NET_RX`, …), one column per
//! *possible* CPU (fs/proc/softirqs.c uses for_each_possible_cpu, unlike /proc/interrupts).

use std::io::BufRead;

use crate::error::{ParseError, SysError};
use crate::interrupts::{parse_cpu_header, split_row};
use crate::root::SysRoot;

/// One softirq vector with its per-CPU counts in header order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SoftirqRow {
    pub name: String,
    pub counts: Vec<u64>,
}

impl SoftirqRow {
    pub fn total(&self) -> u64 {
        self.counts.iter().fold(0u64, |a, &c| a.saturating_add(c))
    }
}

/// A parsed `/proc/softirqs`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Softirqs {
    pub cpus: Vec<u32>,
    pub rows: Vec<SoftirqRow>,
}

impl Softirqs {
    pub fn column(&self, cpu: u32) -> Option<usize> {
        self.cpus.iter().position(|&c| c == cpu)
    }

    pub fn count(&self, row: &SoftirqRow, cpu: u32) -> Option<u64> {
        row.counts.get(self.column(cpu)?).copied()
    }

    pub fn row(&self, name: &str) -> Option<&SoftirqRow> {
        self.rows.iter().find(|r| r.name == name)
    }
}

/// Parses `/proc/softirqs`; every row must have one count per header CPU.
pub fn parse_softirqs(reader: impl BufRead) -> Result<Softirqs, ParseError> {
    let mut out = Softirqs::default();
    let mut have_header = false;
    for (i, line) in reader.lines().enumerate() {
        let line_no = i + 1;
        let line = line.map_err(|e| ParseError::new(line_no, format!("read error: {e}")))?;
        if line.trim().is_empty() {
            continue;
        }
        if !have_header {
            out.cpus = parse_cpu_header(&line, line_no)?;
            have_header = true;
            continue;
        }
        let (name, counts, rest) = split_row(&line, out.cpus.len())
            .ok_or_else(|| ParseError::new(line_no, format!("row without a name: {line:?}")))?;
        if counts.len() != out.cpus.len() || !rest.is_empty() {
            return Err(ParseError::new(
                line_no,
                format!("row {name:?} does not have {} counts", out.cpus.len()),
            ));
        }
        out.rows.push(SoftirqRow { name, counts });
    }
    if !have_header {
        return Err(ParseError::new(1, "empty file: no CPU header"));
    }
    Ok(out)
}

/// Reads and parses `proc/softirqs` of a root.
pub fn read(sys: &SysRoot) -> Result<Softirqs, SysError> {
    const PATH: &str = "proc/softirqs";
    parse_softirqs(sys.open(PATH)?).map_err(|e| e.at(sys.path(PATH)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_rows() {
        let text = "                    CPU0       CPU1       \n\
          HI:          0          0\n\
       TIMER:       5205       6199\n\
      NET_RX:       1534       1926\n";
        let s = parse_softirqs(text.as_bytes()).unwrap();
        assert_eq!(s.cpus, vec![0, 1]);
        let timer = s.row("TIMER").unwrap();
        assert_eq!(s.count(timer, 1), Some(6199));
        assert_eq!(timer.total(), 11404);
        assert_eq!(s.row("NET_RX").unwrap().counts, vec![1534, 1926]);
        assert!(s.row("BLOCK").is_none());
    }

    #[test]
    fn rejects_short_rows() {
        assert!(parse_softirqs("CPU0 CPU1\nHI: 1\n".as_bytes()).is_err());
        assert!(parse_softirqs("CPU0\nHI: 1 2\n".as_bytes()).is_err());
        assert!(parse_softirqs("\n\n".as_bytes()).is_err());
    }

    proptest! {
        #[test]
        fn never_panics(s in "(\\PC{0,30}\n){0,6}") {
            let _ = parse_softirqs(s.as_bytes());
        }
    }
}
