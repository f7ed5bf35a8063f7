//! `/proc/stat`: CPU time per CPU in USER_HZ ticks, plus context switches, forks and the
//! tasks runnable at the moment of the read.
//!
//! Columns were added over the years (iowait/irq/softirq in 2.6, steal 2.6.11, guest
//! 2.6.24, guest_nice 2.6.33); an older kernel's missing columns read as 0.

use std::io::BufRead;

use crate::error::{ParseError, SysError};
use crate::root::SysRoot;

/// Cumulative CPU time in USER_HZ ticks (`sysconf(_SC_CLK_TCK)`, normally 100).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuTimes {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    pub steal: u64,
    pub guest: u64,
    pub guest_nice: u64,
}

impl CpuTimes {
    /// Field names in /proc/stat order, for reporting.
    pub const FIELDS: [&'static str; 10] = [
        "user",
        "nice",
        "system",
        "idle",
        "iowait",
        "irq",
        "softirq",
        "steal",
        "guest",
        "guest_nice",
    ];

    /// Values in the order of [`CpuTimes::FIELDS`].
    pub fn values(&self) -> [u64; 10] {
        [
            self.user,
            self.nice,
            self.system,
            self.idle,
            self.iowait,
            self.irq,
            self.softirq,
            self.steal,
            self.guest,
            self.guest_nice,
        ]
    }

    /// A field by name, as listed in [`CpuTimes::FIELDS`].
    pub fn get(&self, field: &str) -> Option<u64> {
        let i = Self::FIELDS.iter().position(|f| *f == field)?;
        Some(self.values()[i])
    }

    fn from_values(v: &[u64]) -> Self {
        let at = |i: usize| v.get(i).copied().unwrap_or(0);
        Self {
            user: at(0),
            nice: at(1),
            system: at(2),
            idle: at(3),
            iowait: at(4),
            irq: at(5),
            softirq: at(6),
            steal: at(7),
            guest: at(8),
            guest_nice: at(9),
        }
    }
}

/// The parts of `/proc/stat` perflab uses.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProcStat {
    /// The aggregate `cpu` line (all CPUs).
    pub total: CpuTimes,
    /// `cpuN` lines of the online CPUs, in file order.
    pub cpus: Vec<(u32, CpuTimes)>,
    pub ctxt: Option<u64>,
    pub processes: Option<u64>,
    /// Tasks runnable at the moment of the read (`procs_running`), this reader included.
    pub procs_running: Option<u64>,
}

impl ProcStat {
    pub fn cpu(&self, cpu: u32) -> Option<&CpuTimes> {
        self.cpus.iter().find(|(c, _)| *c == cpu).map(|(_, t)| t)
    }
}

/// Parses `/proc/stat`. Lines other than `cpu*`, `ctxt` and `processes` are skipped.
pub fn parse_proc_stat(reader: impl BufRead) -> Result<ProcStat, ParseError> {
    let mut out = ProcStat::default();
    let mut have_total = false;
    for (i, line) in reader.lines().enumerate() {
        let line_no = i + 1;
        let line = line.map_err(|e| ParseError::new(line_no, format!("read error: {e}")))?;
        let mut words = line.split_whitespace();
        let Some(key) = words.next() else { continue };
        let number = |w: &str| {
            w.parse::<u64>()
                .map_err(|_| ParseError::new(line_no, format!("{key}: {w:?} is not a number")))
        };
        if let Some(suffix) = key.strip_prefix("cpu") {
            let values = words.map(number).collect::<Result<Vec<u64>, _>>()?;
            // user, nice, system and idle have been there since Linux 1.x.
            if values.len() < 4 {
                return Err(ParseError::new(
                    line_no,
                    format!("{key} has fewer than 4 columns"),
                ));
            }
            let times = CpuTimes::from_values(&values);
            if suffix.is_empty() {
                out.total = times;
                have_total = true;
            } else {
                let cpu = suffix
                    .parse()
                    .map_err(|_| ParseError::new(line_no, format!("{key:?} is not cpu<N>")))?;
                out.cpus.push((cpu, times));
            }
        } else if key == "ctxt" || key == "processes" || key == "procs_running" {
            let v = words
                .next()
                .ok_or_else(|| ParseError::new(line_no, format!("{key} has no value")))
                .and_then(number)?;
            match key {
                "ctxt" => out.ctxt = Some(v),
                "processes" => out.processes = Some(v),
                _ => out.procs_running = Some(v),
            }
        }
    }
    if !have_total {
        return Err(ParseError::new(1, "no aggregate \"cpu\" line"));
    }
    Ok(out)
}

/// Reads and parses `proc/stat` of a root.
pub fn read(sys: &SysRoot) -> Result<ProcStat, SysError> {
    const PATH: &str = "proc/stat";
    parse_proc_stat(sys.open(PATH)?).map_err(|e| e.at(sys.path(PATH)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_modern_stat() {
        let text = "cpu  12101 0 3145 56017 249 0 57 41 0 0\n\
cpu0 5790 0 1427 28484 48 0 23 19 0 0\n\
cpu1 6310 0 1717 27532 201 0 33 22 0 0\n\
intr 145541 0 0 1\n\
ctxt 225680\n\
btime 1795359732\n\
processes 7622\n\
procs_running 3\n\
softirq 70517 0 11404\n";
        let s = parse_proc_stat(text.as_bytes()).unwrap();
        assert_eq!(s.total.user, 12101);
        assert_eq!(s.total.steal, 41);
        assert_eq!(s.cpus.len(), 2);
        assert_eq!(s.cpu(1).unwrap().iowait, 201);
        assert_eq!(s.cpu(1).unwrap().get("idle"), Some(27532));
        assert_eq!(s.cpu(2), None);
        assert_eq!(s.ctxt, Some(225680));
        assert_eq!(s.processes, Some(7622));
        assert_eq!(s.procs_running, Some(3));
    }

    #[test]
    fn tolerates_old_kernels_with_fewer_columns() {
        let s = parse_proc_stat("cpu 1 2 3 4\ncpu3 1 2 3 4 5\n".as_bytes()).unwrap();
        assert_eq!(s.total.idle, 4);
        assert_eq!(s.total.iowait, 0);
        assert_eq!(s.cpu(3).unwrap().iowait, 5);
        assert_eq!(s.ctxt, None);
    }

    #[test]
    fn rejects_broken_cpu_lines() {
        assert!(parse_proc_stat("cpu 1 2 3\n".as_bytes()).is_err());
        assert!(parse_proc_stat("cpu 1 2 3 x\n".as_bytes()).is_err());
        assert!(parse_proc_stat("cpux 1 2 3 4\ncpu 1 2 3 4\n".as_bytes()).is_err());
        assert!(parse_proc_stat("ctxt 5\n".as_bytes()).is_err());
    }

    proptest! {
        #[test]
        fn never_panics(s in "(\\PC{0,30}\n){0,6}") {
            let _ = parse_proc_stat(s.as_bytes());
        }

        #[test]
        fn never_panics_near_format(s in "(cpu[0-9]{0,2}( [0-9]{1,22}){0,11}\n){0,4}(ctxt|processes)( [0-9x]{0,21})?\n") {
            let _ = parse_proc_stat(s.as_bytes());
        }
    }
}
