//! Fitting an experiment to the machine's memory: points whose buffers cannot fit in the
//! available memory are left out (saying which and why), a point that could not fit even in
//! an empty machine is an input error, and `hugepages = "2M:auto"` becomes the page count
//! the largest point of its variant needs.

use perflab_core::{format_size, parse_size, Grid, RunSpec, Workload};
use perflab_sys::meminfo::parse_meminfo;
use perflab_sys::SysRoot;

use crate::error::{LabError, Result};
use crate::point_fit;

/// Total and available memory in bytes, or why they are unknown.
fn memory(sys: &SysRoot) -> std::result::Result<(u64, u64), String> {
    let path = "proc/meminfo";
    let reader = sys.open(path).map_err(|e| e.to_string())?;
    let m = parse_meminfo(reader).map_err(|e| e.at(sys.path(path)).to_string())?;
    let total = m
        .get("MemTotal")
        .copied()
        .ok_or("no MemTotal in /proc/meminfo")?;
    let avail = m
        .get("MemAvailable")
        .or_else(|| m.get("MemFree"))
        .copied()
        .ok_or("no MemAvailable in /proc/meminfo")?;
    Ok((total, avail))
}

/// Leaves out points that do not fit; returns notes for the person running.
pub fn fit_memory(
    spec: &mut RunSpec,
    grid: &mut Grid,
    workload: &dyn Workload,
    sys: &SysRoot,
) -> Result<Vec<String>> {
    let needs = point_fit::needs(grid, |p| workload.memory_bytes(p))?;
    if needs.iter().all(|&n| n == 0) {
        return Ok(Vec::new());
    }
    let (total, avail) = match memory(sys) {
        Ok(m) => m,
        Err(why) => return Ok(vec![format!("memory not checked: {why}")]),
    };
    if let Some((point, &need)) = spec.points.iter().zip(&needs).find(|(_, &n)| n > total) {
        return Err(LabError::Input(format!(
            "{} needs {} of buffers but this machine has {} of memory in all",
            point_fit::describe(point),
            format_size(need),
            human(total)
        )));
    }
    let skipped = point_fit::skip(spec, grid, |i| {
        (needs[i] > avail).then(|| {
            format!(
                "needs {} of buffers, {} is available",
                format_size(needs[i]),
                human(avail)
            )
        })
    });
    if spec.points.is_empty() {
        return Err(LabError::Input(format!(
            "no point of {} fits in the {} of available memory",
            spec.name,
            human(avail)
        )));
    }
    Ok(skipped
        .into_iter()
        .map(|(point, reason)| format!("skipping {point}: {reason}"))
        .collect())
}

/// Replaces `hugepages = "SIZE:auto"` by the count of SIZE pages the variant's largest
/// point needs.
pub fn resolve_auto_pools(spec: &mut RunSpec, grid: &Grid, workload: &dyn Workload) -> Result<()> {
    for i in 0..spec.variants.len() {
        let autos: Vec<String> = spec.variants[i]
            .knobs
            .iter()
            .filter(|(k, v)| *k == "hugepages" && v.ends_with(":auto"))
            .map(|(_, v)| v.to_string())
            .collect();
        for value in autos {
            let size = value.strip_suffix(":auto").unwrap_or_default();
            let page = parse_size(size).ok().filter(|&p| p > 0).ok_or_else(|| {
                LabError::Input(format!(
                    "variant {:?}: hugepages = {value:?}: {size:?} is not a page size (2M, 1G)",
                    spec.variants[i].name
                ))
            })?;
            let mut need = 0;
            for point in 0..grid.points() {
                need = need.max(workload.memory_bytes(grid.params(point, i))?);
            }
            let count = need.div_ceil(page);
            for v in spec.variants[i].knobs.values_mut("hugepages") {
                if *v == value {
                    *v = format!("{size}:{count}");
                }
            }
        }
    }
    Ok(())
}

fn human(bytes: u64) -> String {
    const GIB: f64 = (1u64 << 30) as f64;
    const MIB: f64 = (1u64 << 20) as f64;
    if bytes as f64 >= GIB {
        format!("{:.1} GiB", bytes as f64 / GIB)
    } else {
        format!("{:.0} MiB", bytes as f64 / MIB)
    }
}
