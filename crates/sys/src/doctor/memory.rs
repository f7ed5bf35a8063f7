use perflab_core::Need;

use super::check::{Check, NOT_CHECKED, RUN_ON_HOST};
use crate::probe::hugepages::huge_pages as probe;
use crate::root::SysRoot;

pub(super) fn huge_pages(sys: &SysRoot) -> Check {
    const NAME: Need = Need::HugePages;
    let found = probe(sys);
    let pool_text = match &found.pools {
        Ok(p) if !p.is_empty() => p
            .iter()
            .map(|p| format!("{}kB pool {} pages ({} free)", p.size_kb, p.nr, p.free))
            .collect::<Vec<_>>()
            .join(", "),
        Ok(_) => "no hugetlb pools".into(),
        Err(e) => format!("hugetlb pools unreadable: {e}"),
    };
    let thp_text = match (&found.thp.enabled, &found.thp.defrag) {
        (Some(e), Some(d)) => format!("THP {e} (defrag {d})"),
        (Some(e), None) => format!("THP {e}"),
        _ => "no transparent huge pages".into(),
    };
    let detail = format!("{pool_text}; {thp_text}");
    match (found.has_pools(), found.has_thp()) {
        (true, true) => Check::ok(NAME, detail),
        (false, false) => Check::missing(
            NAME,
            detail,
            "use a kernel with CONFIG_HUGETLBFS and CONFIG_TRANSPARENT_HUGEPAGE",
        ),
        (false, true) => Check::partial(
            NAME,
            detail,
            "use a kernel with CONFIG_HUGETLBFS for hugetlb pools",
        ),
        (true, false) => Check::partial(
            NAME,
            detail,
            "use a kernel with CONFIG_TRANSPARENT_HUGEPAGE for THP modes",
        ),
    }
}

pub(super) fn locked_memory(sys: &SysRoot) -> Check {
    use crate::probe::memlock::{locked_memory as probe, LockedMemory, RAISE_IT};
    const NAME: Need = Need::LockedMemory;
    match probe(sys) {
        LockedMemory::NotChecked => Check::partial(NAME, NOT_CHECKED, RUN_ON_HOST),
        LockedMemory::Capable => Check::ok(NAME, "no limit: CAP_IPC_LOCK is effective"),
        LockedMemory::Unlimited => Check::ok(NAME, "no limit (ulimit -l unlimited)"),
        LockedMemory::Limit(bytes) => Check::partial(
            NAME,
            format!(
                "{} per process (ulimit -l): pinned buffers beyond it cannot be locked, and \
                 xfer's state=pinned points that need more are left out",
                perflab_core::format_bytes(bytes)
            ),
            RAISE_IT,
        ),
    }
}
