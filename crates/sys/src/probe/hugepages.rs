//! Huge pages: the hugetlb pools and the transparent huge page mode (`hugepages=`,
//! `thp=`, `thp_defrag=`, xfer's page backings).

use crate::hugepages::{pools, thp, HugePool, ThpMode};
use crate::SysRoot;

/// The pools and the THP mode.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HugePages {
    /// The hugetlb pools, smallest pages first (empty without CONFIG_HUGETLBFS), or why
    /// they could not be read.
    pub pools: Result<Vec<HugePool>, String>,
    pub thp: ThpMode,
}

impl HugePages {
    /// Whether there is at least one hugetlb pool.
    pub fn has_pools(&self) -> bool {
        self.pools.as_ref().is_ok_and(|p| !p.is_empty())
    }

    /// Whether the kernel has transparent huge pages.
    pub fn has_thp(&self) -> bool {
        self.thp.enabled.is_some()
    }
}

pub fn huge_pages(sys: &SysRoot) -> HugePages {
    HugePages {
        pools: pools(sys).map_err(|e| e.to_string()),
        thp: thp(sys),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_tree_has_neither_pools_nor_thp() {
        let dir = tempfile::tempdir().unwrap();
        let h = huge_pages(&SysRoot::at(dir.path()));
        assert_eq!(h.pools, Ok(Vec::new()));
        assert!(!h.has_pools() && !h.has_thp());
    }
}
