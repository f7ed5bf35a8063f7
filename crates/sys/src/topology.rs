//! CPU topology from sysfs: online CPUs, cores and SMT siblings.

use std::collections::BTreeMap;

use crate::cpulist::parse_cpu_list;
use crate::error::SysError;
use crate::root::SysRoot;

/// Where one online CPU sits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuPlace {
    pub cpu: u32,
    pub package: i64,
    pub core: i64,
    /// SMT siblings including the CPU itself (thread_siblings_list).
    pub siblings: Vec<u32>,
}

/// The online CPUs of a machine, grouped into cores.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Topology {
    pub online: Vec<u32>,
    pub places: Vec<CpuPlace>,
}

impl Topology {
    /// Reads `devices/system/cpu/online` and each online CPU's `topology/` directory.
    /// A CPU whose topology files are missing (some VMs, old kernels) is its own core.
    pub fn read(sys: &SysRoot) -> Result<Self, SysError> {
        let online_path = "sys/devices/system/cpu/online";
        let online = parse_cpu_list(&sys.read_string(online_path)?)
            .map_err(|e| e.at(sys.path(online_path)))?;
        let mut places = Vec::with_capacity(online.len());
        for &cpu in &online {
            let dir = format!("sys/devices/system/cpu/cpu{cpu}/topology");
            let package = sys
                .read_parsed(&format!("{dir}/physical_package_id"))
                .unwrap_or(0);
            let core = sys
                .read_parsed(&format!("{dir}/core_id"))
                .unwrap_or(cpu as i64);
            let siblings = sys
                .read_string(&format!("{dir}/thread_siblings_list"))
                .ok()
                .and_then(|t| parse_cpu_list(&t).ok())
                .filter(|s| s.contains(&cpu))
                .unwrap_or_else(|| vec![cpu]);
            places.push(CpuPlace {
                cpu,
                package,
                core,
                siblings,
            });
        }
        Ok(Self { online, places })
    }

    pub fn is_online(&self, cpu: u32) -> bool {
        self.online.binary_search(&cpu).is_ok()
    }

    pub fn place(&self, cpu: u32) -> Option<&CpuPlace> {
        self.places.iter().find(|p| p.cpu == cpu)
    }

    /// Cores as lists of online CPUs, ordered by their first CPU. Siblings are grouped by
    /// (package, core id), as the kernel's own thread_siblings are.
    pub fn cores(&self) -> Vec<Vec<u32>> {
        let mut by_core: BTreeMap<(i64, i64), Vec<u32>> = BTreeMap::new();
        for p in &self.places {
            by_core.entry((p.package, p.core)).or_default().push(p.cpu);
        }
        let mut cores: Vec<Vec<u32>> = by_core.into_values().collect();
        cores.sort_by_key(|c| c[0]);
        cores
    }

    /// Largest number of hardware threads on one core.
    pub fn threads_per_core(&self) -> usize {
        self.cores().iter().map(Vec::len).max().unwrap_or(0)
    }

    /// One partner CPU on every core, for a wakeup study anchored at `anchor`: the first
    /// CPU of each other core, and on the anchor's own core a sibling thread where one
    /// exists, else the anchor itself (the no-IPI baseline).
    pub fn partners_one_per_core(&self, anchor: u32) -> Vec<u32> {
        let mut out = Vec::new();
        for core in self.cores() {
            if core.contains(&anchor) {
                out.push(
                    core.iter()
                        .copied()
                        .find(|&c| c != anchor)
                        .unwrap_or(anchor),
                );
            } else {
                out.push(core[0]);
            }
        }
        out.sort_unstable();
        out
    }
}
