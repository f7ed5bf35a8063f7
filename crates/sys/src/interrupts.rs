//! `/proc/interrupts`: one row per interrupt source, one count column per online CPU.
//!
//! The header names the online CPUs (`CPU0 CPU1 CPU4`, offline CPUs are simply absent),
//! device rows are `NN: counts… chip hwirq-type handler` (kernel/irq/proc.c) and
//! architecture rows are `LOC: counts… Local timer interrupts` (arch_show_interrupts).
//! Names are not unique: POWER prints two `LOC` rows, told apart only by their text.
//! A few x86 rows (`ERR`, `MIS`) carry one machine-wide total instead of per-CPU counts.

use std::io::BufRead;

use crate::error::{ParseError, SysError};
use crate::percpu_table::{column, parse_table, saturating_sum, RawRow};
use crate::root::SysRoot;

/// One row of `/proc/interrupts`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IrqRow {
    /// The text before the colon: `LOC`, `24`, `WDG`.
    pub name: String,
    /// Per-CPU counts in header order, or a single total when `per_cpu` is false.
    pub counts: Vec<u64>,
    /// True when `counts` has one value per header CPU; false for total-only rows such as
    /// x86 `ERR`/`MIS`, whose one number is not attributable to a CPU.
    pub per_cpu: bool,
    /// The rest of the line, whitespace collapsed: `Local timer interrupts`,
    /// `IO-APIC 5-edge ACPI:Ged`.
    pub desc: String,
}

impl IrqRow {
    /// Sum over all columns (or the single total).
    pub fn total(&self) -> u64 {
        saturating_sum(&self.counts)
    }
}

/// A parsed `/proc/interrupts`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Interrupts {
    /// CPU numbers of the count columns, from the header.
    pub cpus: Vec<u32>,
    pub rows: Vec<IrqRow>,
}

impl Interrupts {
    /// Column index of a CPU, if the header lists it (it is online).
    pub fn column(&self, cpu: u32) -> Option<usize> {
        column(&self.cpus, cpu)
    }

    /// The count of a row on a CPU; `None` for an offline CPU or a total-only row.
    pub fn count(&self, row: &IrqRow, cpu: u32) -> Option<u64> {
        if !row.per_cpu {
            return None;
        }
        row.counts.get(self.column(cpu)?).copied()
    }

    /// Rows with this name, in file order (POWER has two `LOC` rows).
    pub fn rows_named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a IrqRow> + 'a {
        self.rows.iter().filter(move |r| r.name == name)
    }
}

/// Parses `/proc/interrupts`. The first non-empty line must be the CPU header; a row that
/// has no `name:` is an error, since it means the format is not what perflab expects.
pub fn parse_interrupts(reader: impl BufRead) -> Result<Interrupts, ParseError> {
    let table = parse_table(reader, |row, line_no, ncpu| {
        let RawRow { name, counts, rest } = row;
        if counts.is_empty() {
            return Err(ParseError::new(
                line_no,
                format!("row {name:?} has no counts"),
            ));
        }
        let per_cpu = counts.len() == ncpu;
        // A short row is only credible as a single machine-wide total (ERR, MIS); anything
        // else would misattribute counts to CPUs.
        if !per_cpu && counts.len() != 1 {
            return Err(ParseError::new(
                line_no,
                format!("row {name:?} has {} counts for {ncpu} CPUs", counts.len()),
            ));
        }
        Ok(IrqRow {
            name,
            counts,
            per_cpu,
            desc: rest.join(" "),
        })
    })?;
    Ok(Interrupts {
        cpus: table.cpus,
        rows: table.rows,
    })
}

/// Reads and parses `proc/interrupts` of a root.
pub fn read(sys: &SysRoot) -> Result<Interrupts, SysError> {
    const PATH: &str = "proc/interrupts";
    parse_interrupts(sys.open(PATH)?).map_err(|e| e.at(sys.path(PATH)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const X86: &str = "           CPU0       CPU1       \n  \
 24:          1          0  IO-APIC   5-edge      ACPI:Ged\n \
 36:          0       7077 PCI-MSIX-0000:00:02.0   1-edge      virtio1-req.0\n\
NMI:          0          0   Non-maskable interrupts\n\
LOC:      27018      28334   Local timer interrupts\n\
ERR:          0\n\
MIS:          0\n\
PIN:          0          0   Posted-interrupt notification event\n";

    #[test]
    fn parses_x86_rows() {
        let t = parse_interrupts(X86.as_bytes()).unwrap();
        assert_eq!(t.cpus, vec![0, 1]);
        assert_eq!(t.rows.len(), 7);
        assert_eq!(t.rows[0].name, "24");
        assert_eq!(t.rows[0].desc, "IO-APIC 5-edge ACPI:Ged");
        assert_eq!(t.rows[1].counts, vec![0, 7077]);
        let loc = t.rows_named("LOC").next().unwrap();
        assert_eq!(loc.desc, "Local timer interrupts");
        assert_eq!(t.count(loc, 1), Some(28334));
        assert_eq!(t.count(loc, 2), None);
        let err = t.rows_named("ERR").next().unwrap();
        assert!(!err.per_cpu);
        assert_eq!(err.counts, vec![0]);
        assert_eq!(err.desc, "");
        assert_eq!(t.count(err, 0), None);
    }

    #[test]
    fn keeps_duplicate_power_loc_rows_and_offline_gaps() {
        let text = "           CPU0       CPU4       CPU24\n\
 16:        100        200        300  XIVE-IPI   0 Edge      IPI\n\
LOC:       3792       3793       3791   Local timer interrupts for timer event device\n\
LOC:       1806       1813       1800   Local timer interrupts for others\n\
WDG:  4294967295 18446744073709551615 0   Watchdog soft-NMI interrupts\n";
        let t = parse_interrupts(text.as_bytes()).unwrap();
        assert_eq!(t.cpus, vec![0, 4, 24]);
        let locs: Vec<_> = t.rows_named("LOC").collect();
        assert_eq!(locs.len(), 2);
        assert_eq!(locs[1].desc, "Local timer interrupts for others");
        assert_eq!(t.count(locs[0], 24), Some(3791));
        let wdg = t.rows_named("WDG").next().unwrap();
        assert_eq!(wdg.counts[1], u64::MAX);
        assert_eq!(wdg.total(), u64::MAX);
    }

    #[test]
    fn arm64_ipi_rows() {
        let text = "           CPU0       CPU1\n\
IPI0:       1234       2345       Rescheduling interrupts\n\
IPI6:          0          0       Timer broadcast interrupts\n\
Err:          0\n";
        let t = parse_interrupts(text.as_bytes()).unwrap();
        assert_eq!(t.rows[0].name, "IPI0");
        assert_eq!(t.rows[1].desc, "Timer broadcast interrupts");
        assert!(!t.rows[2].per_cpu);
    }

    #[test]
    fn rejects_malformed_text() {
        assert!(parse_interrupts("".as_bytes()).is_err());
        assert!(parse_interrupts("CPU0 x\n".as_bytes()).is_err());
        assert!(parse_interrupts("CPU0 CPU1\nno colon here\n".as_bytes()).is_err());
        assert!(parse_interrupts("CPU0 CPU1 CPU2\nLOC: 1 2 x\n".as_bytes()).is_err());
        assert!(parse_interrupts("CPU0\nLOC: text\n".as_bytes()).is_err());
    }

    proptest! {
        #[test]
        fn never_panics(s in "(\\PC{0,30}\n){0,6}") {
            let _ = parse_interrupts(s.as_bytes());
        }

        #[test]
        fn never_panics_near_format(s in "( *CPU[0-9]{1,2}){0,3}\n([ A-Z0-9]{1,4}:( +[0-9]{1,25}){0,4}( +[a-zA-Z:-]{0,8}){0,3}\n){0,5}") {
            let _ = parse_interrupts(s.as_bytes());
        }
    }
}
