//! CPU isolation: what the kernel command line asks (isolcpus=, nohz_full=, rcu_nocbs=),
//! what sysfs says took effect, and whether the kernel was built to honour it.

use crate::isolation::{kernel_has_nohz_full, kernel_support, Isolation, KernelSupport};
use crate::SysRoot;

/// The isolation asked for and what the kernel can do of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IsolationProbe {
    pub iso: Isolation,
    /// Whether sysfs has `nohz_full` (only a NO_HZ_FULL kernel lists it).
    pub nohz_full_kernel: bool,
    pub support: KernelSupport,
}

impl IsolationProbe {
    /// The CPUs isolcpus= names, where it names any.
    pub fn isolcpus(&self) -> Option<Vec<u32>> {
        self.iso.isolcpus.as_ref().map(|i| i.cpus.clone())
    }
}

/// The isolation of `sys`, or why the command line cannot be read.
pub fn isolation(sys: &SysRoot) -> Result<IsolationProbe, String> {
    let iso = Isolation::read(sys).map_err(|e| e.to_string())?;
    let support = kernel_support(sys, &iso);
    Ok(IsolationProbe {
        nohz_full_kernel: kernel_has_nohz_full(sys),
        iso,
        support,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_command_line_there_is_no_answer() {
        let dir = tempfile::tempdir().unwrap();
        assert!(isolation(&SysRoot::at(dir.path())).is_err());
    }
}
