//! IRQ affinity: the interrupts whose CPUs can be set (`irqaffinity=`).

use crate::SysRoot;

/// An IRQ's affinity file, relative to the root.
pub fn affinity_path(irq: u32) -> String {
    format!("proc/irq/{irq}/smp_affinity_list")
}

/// The IRQs with an affinity file, and how many of them this process may write.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IrqAffinity {
    pub irqs: usize,
    pub writable: usize,
}

pub fn irq_affinity(sys: &SysRoot) -> IrqAffinity {
    let irqs: Vec<u32> = sys
        .list_dir("proc/irq")
        .unwrap_or_default()
        .iter()
        .filter_map(|n| n.parse().ok())
        .filter(|&n| sys.exists(&affinity_path(n)))
        .collect();
    IrqAffinity {
        irqs: irqs.len(),
        writable: irqs
            .iter()
            .filter(|&&n| sys.writable(&affinity_path(n)))
            .count(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_numbered_irqs_with_an_affinity_file_count() {
        let dir = tempfile::tempdir().unwrap();
        let sys = SysRoot::at(dir.path());
        for rel in ["proc/irq/7", "proc/irq/8", "proc/irq/default_smp_affinity"] {
            std::fs::create_dir_all(sys.path(rel)).unwrap();
        }
        std::fs::write(sys.path(&affinity_path(7)), "0-1\n").unwrap();
        let a = irq_affinity(&sys);
        assert_eq!(a.irqs, 1);
        assert!(a.writable <= 1);
    }
}
