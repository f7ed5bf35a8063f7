//! cpufreq: the frequency driver and each online CPU's governor.

use std::collections::BTreeMap;

use crate::cpufreq::{driver, governor};
use crate::{SysRoot, Topology};

/// The online CPUs by governor.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Cpufreq {
    /// The driver of the first online CPU.
    pub driver: Option<String>,
    /// Governor → the CPUs it runs on, in CPU order.
    pub by_governor: BTreeMap<String, Vec<u32>>,
    /// Online CPUs without a cpufreq policy.
    pub without: Vec<u32>,
}

impl Cpufreq {
    /// Whether any CPU has a cpufreq driver (else the hypervisor or firmware decides).
    pub fn present(&self) -> bool {
        !self.by_governor.is_empty()
    }
}

pub fn cpufreq(sys: &SysRoot) -> Cpufreq {
    let cpus = Topology::read(sys).map(|t| t.online).unwrap_or_default();
    let mut out = Cpufreq {
        driver: cpus.first().and_then(|&c| driver(sys, c)),
        ..Cpufreq::default()
    };
    for &cpu in &cpus {
        match governor(sys, cpu) {
            Some(g) => out.by_governor.entry(g).or_default().push(cpu),
            None => out.without.push(cpu),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_tree_has_no_cpufreq() {
        let dir = tempfile::tempdir().unwrap();
        let c = cpufreq(&SysRoot::at(dir.path()));
        assert!(!c.present());
        assert_eq!(c, Cpufreq::default());
    }
}
