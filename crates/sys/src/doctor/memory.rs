use super::Check;
use crate::hugepages::{pools, thp};
use crate::root::SysRoot;

pub(super) fn huge_pages(sys: &SysRoot) -> Check {
    const NAME: &str = "huge pages";
    let pools = pools(sys);
    let mode = thp(sys);
    let pool_text = match &pools {
        Ok(p) if !p.is_empty() => p
            .iter()
            .map(|p| format!("{}kB pool {} pages ({} free)", p.size_kb, p.nr, p.free))
            .collect::<Vec<_>>()
            .join(", "),
        Ok(_) => "no hugetlb pools".into(),
        Err(e) => format!("hugetlb pools unreadable: {e}"),
    };
    let thp_text = match (&mode.enabled, &mode.defrag) {
        (Some(e), Some(d)) => format!("THP {e} (defrag {d})"),
        (Some(e), None) => format!("THP {e}"),
        _ => "no transparent huge pages".into(),
    };
    let detail = format!("{pool_text}; {thp_text}");
    let have_pools = pools.as_ref().is_ok_and(|p| !p.is_empty());
    match (have_pools, mode.enabled.is_some()) {
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
