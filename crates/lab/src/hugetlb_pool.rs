//! A point that maps its buffers from a hugetlb pool is refused before anything runs when
//! the pool cannot hold them and its variant sets no `hugepages` knob of that page size to
//! fill it. Every measurement would otherwise fail on its mmap, and a run of nothing but
//! failures would be stored for what is the machine's set-up, not the workload's result.

use perflab_core::{format_size, parse_size, Params, Workload};
use perflab_sys::hugepages::{pools, HugePool};
use perflab_sys::SysRoot;

use crate::spec::VariantSpec;

/// `Err` names the pool, what it has, what the point needs and how to fill it.
pub fn check(
    workload: &dyn Workload,
    params: &Params,
    variant: &VariantSpec,
    sys: &SysRoot,
) -> Result<(), String> {
    let Some(kb) = workload
        .hugetlb_page_kb(params)
        .map_err(|e| e.to_string())?
    else {
        return Ok(());
    };
    if fills_pool(variant, kb) {
        return Ok(());
    }
    let page = kb.saturating_mul(1024);
    let bytes = workload.memory_bytes(params).map_err(|e| e.to_string())?;
    let need = bytes.div_ceil(page.max(1));
    let name = format_size(page);
    let fill = format!(
        "add the knob `hugepages={name}:auto` to the variant (it reserves the pages and gives \
         them back after the run)"
    );
    let pool = pools(sys)
        .map_err(|e| format!("cannot read the hugetlb pools: {e}"))?
        .into_iter()
        .find(|p| p.size_kb == kb);
    let Some(pool) = pool else {
        return Err(format!(
            "its buffers need {need} huge pages of {name}, and this machine has no {name} \
             hugetlb pool (no /sys/kernel/mm/hugepages/hugepages-{kb}kB)"
        ));
    };
    let can_get = available(&pool, sys);
    if can_get >= need {
        return Ok(());
    }
    Err(format!(
        "its buffers need {need} huge pages of {name}, and the {name} hugetlb pool can give \
         {can_get} ({} free of {}): {fill}, or fill the pool by hand",
        pool.free, pool.nr
    ))
}

/// Whether the variant reserves pages of this size itself.
fn fills_pool(variant: &VariantSpec, kb: u64) -> bool {
    variant.knobs.iter().any(|(knob, value)| {
        knob == "hugepages"
            && value
                .split_once(':')
                .and_then(|(size, _)| parse_size(size.trim()).ok())
                .is_some_and(|bytes| bytes == kb.saturating_mul(1024))
    })
}

/// Pages an mmap can take now: the free ones not promised to an earlier mapping, and the
/// surplus the pool may still grow by when overcommit is allowed.
fn available(pool: &HugePool, sys: &SysRoot) -> u64 {
    let overcommit = sys
        .read_parsed::<u64>(&format!(
            "{}/nr_overcommit_hugepages",
            HugePool::dir(pool.size_kb)
        ))
        .unwrap_or(0);
    pool.free.saturating_sub(pool.resv) + overcommit.saturating_sub(pool.surplus)
}

#[cfg(test)]
mod tests {
    use super::*;
    use perflab_core::KnobSettings;

    fn sys_with_pool(free: u64, nr: u64) -> (tempfile::TempDir, SysRoot) {
        let dir = tempfile::tempdir().unwrap();
        let pool = dir.path().join("sys/kernel/mm/hugepages/hugepages-2048kB");
        std::fs::create_dir_all(&pool).unwrap();
        for (f, v) in [
            ("nr_hugepages", nr),
            ("free_hugepages", free),
            ("resv_hugepages", 0),
            ("surplus_hugepages", 0),
        ] {
            std::fs::write(pool.join(f), format!("{v}\n")).unwrap();
        }
        let sys = SysRoot::at(dir.path());
        (dir, sys)
    }

    fn variant(knobs: &[(&str, &str)]) -> VariantSpec {
        let mut settings = KnobSettings::new();
        for (k, v) in knobs {
            settings.push(*k, *v);
        }
        VariantSpec {
            name: "v".into(),
            knobs: settings,
            params: Default::default(),
        }
    }

    fn xfer_params(backing: &str, size: &str) -> Params {
        let given = [("backing", backing), ("size", size)]
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        perflab_core::resolve("xfer", xfer().info().params, &given).unwrap()
    }

    fn xfer() -> &'static dyn Workload {
        perflab_workloads::by_name("xfer").unwrap()
    }

    #[test]
    fn an_empty_pool_refuses_a_hugetlb_point_naming_the_knob() {
        let (_d, sys) = sys_with_pool(0, 0);
        let err = check(xfer(), &xfer_params("2m", "4M"), &variant(&[]), &sys).unwrap_err();
        assert!(err.contains("can give 0 (0 free of 0)"), "{err}");
        assert!(err.contains("`hugepages=2M:auto`"), "{err}");
        assert!(!err.contains('\n'), "{err}");
    }

    #[test]
    fn a_pool_that_holds_the_buffers_passes() {
        let (_d, sys) = sys_with_pool(64, 64);
        check(xfer(), &xfer_params("2m", "4M"), &variant(&[]), &sys).unwrap();
    }

    #[test]
    fn a_variant_that_fills_the_pool_of_that_size_passes_and_another_size_does_not() {
        let (_d, sys) = sys_with_pool(0, 0);
        let p = xfer_params("2m", "4M");
        check(xfer(), &p, &variant(&[("hugepages", "2M:auto")]), &sys).unwrap();
        check(xfer(), &p, &variant(&[("hugepages", "2048K:8")]), &sys).unwrap();
        assert!(check(xfer(), &p, &variant(&[("hugepages", "1G:1")]), &sys).is_err());
    }

    #[test]
    fn base_pages_and_thp_never_look_at_the_pools() {
        let dir = tempfile::tempdir().unwrap();
        let sys = SysRoot::at(dir.path());
        check(xfer(), &xfer_params("4k", "4M"), &variant(&[]), &sys).unwrap();
        check(xfer(), &xfer_params("thp", "4M"), &variant(&[]), &sys).unwrap();
    }

    #[test]
    fn a_machine_without_the_pool_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let sys = SysRoot::at(dir.path());
        let err = check(xfer(), &xfer_params("1g", "4M"), &variant(&[]), &sys).unwrap_err();
        assert!(err.contains("no 1G hugetlb pool"), "{err}");
    }
}
