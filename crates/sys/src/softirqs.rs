//! `/proc/softirqs`: one row per softirq vector (`TIMER`, `NET_RX`, …), one column per
//! *possible* CPU (fs/proc/softirqs.c uses for_each_possible_cpu, unlike /proc/interrupts).

use std::io::BufRead;

use crate::error::{ParseError, SysError};
use crate::percpu_table::{column, parse_table, saturating_sum, RawRow};
use crate::root::SysRoot;

/// One softirq vector with its per-CPU counts in header order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SoftirqRow {
    pub name: String,
    pub counts: Vec<u64>,
}

impl SoftirqRow {
    pub fn total(&self) -> u64 {
        saturating_sum(&self.counts)
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
        column(&self.cpus, cpu)
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
    let table = parse_table(reader, |row, line_no, ncpu| {
        let RawRow { name, counts, rest } = row;
        if counts.len() != ncpu || !rest.is_empty() {
            return Err(ParseError::new(
                line_no,
                format!("row {name:?} does not have {ncpu} counts"),
            ));
        }
        Ok(SoftirqRow { name, counts })
    })?;
    Ok(Softirqs {
        cpus: table.cpus,
        rows: table.rows,
    })
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
