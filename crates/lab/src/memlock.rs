//! Fitting an experiment to the memory this process may lock: a point whose pinned
//! buffers need more than RLIMIT_MEMLOCK (`ulimit -l`; 8 MiB for a user by default) is left
//! out before the run, saying so and how to raise the limit. Run anyway, its mlock fails,
//! or xfer's pvm peer dies and takes the measurement with it (issue 31 item 15: memxfer as
//! a user died of SIGPIPE). Root, CAP_IPC_LOCK or an unlimited limit lock anything.

use perflab_core::{format_bytes, Grid, RunSpec, Workload};
use perflab_sys::probe::memlock::{locked_memory, LockedMemory, RAISE_IT};
use perflab_sys::SysRoot;

use crate::error::{LabError, Result};
use crate::point_fit;

/// Leaves out the points that would lock more than this process may; returns notes for
/// the person running. Every point left out is an input error.
pub fn fit_locked(
    spec: &mut RunSpec,
    grid: &mut Grid,
    workload: &dyn Workload,
    sys: &SysRoot,
) -> Result<Vec<String>> {
    fit_under(spec, grid, workload, locked_memory(sys))
}

fn fit_under(
    spec: &mut RunSpec,
    grid: &mut Grid,
    workload: &dyn Workload,
    may_lock: LockedMemory,
) -> Result<Vec<String>> {
    let Some(limit) = may_lock.limit() else {
        return Ok(Vec::new());
    };
    let needs = point_fit::needs(grid, |p| workload.locked_bytes(p))?;
    if needs.iter().all(|&n| n <= limit) {
        return Ok(Vec::new());
    }
    let reason = |need: u64| {
        format!(
            "its pinned buffers lock {} in one process, above the locked-memory limit of {} \
             (ulimit -l); {RAISE_IT}",
            format_bytes(need),
            format_bytes(limit)
        )
    };
    let skipped = point_fit::skip(spec, grid, |i| (needs[i] > limit).then(|| reason(needs[i])));
    let most = needs.iter().copied().max().unwrap_or(0);
    if spec.points.is_empty() {
        return Err(LabError::Input(format!(
            "no point of {} can lock its buffers: {}",
            spec.name,
            reason(most)
        )));
    }
    // One note for all: a scan leaves out many sizes for the same reason.
    Ok(vec![format!(
        "skipping {} point(s) with pinned buffers ({}): {}",
        skipped.len(),
        skipped
            .iter()
            .map(|(point, _)| point.as_str())
            .collect::<Vec<_>>()
            .join("; "),
        reason(most)
    )])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prepare::find_workload;
    use crate::spec::ExperimentSpec;

    /// memxfer's shape: xfer, pvm and memcpy, sizes to 32M, in the given states.
    fn prepared(states: &str) -> (RunSpec, Grid) {
        let text = format!(
            r#"
            name = "t"
            workload = "xfer"
            [params]
            size = ["32K", "4M", "32M"]
            engine = ["pvm", "memcpy"]
            state = {states}
            duration = "0.1s"
            "#
        );
        let spec = ExperimentSpec::from_toml("t.toml", &text).unwrap();
        let w = find_workload("xfer").unwrap();
        let topo = perflab_sys::Topology::read(&SysRoot::host()).unwrap();
        let expanded =
            crate::expand::expand(&spec, w, &topo, perflab_monitors::default_names()).unwrap();
        let info = w.info();
        let grid = expanded.resolve_grid(info.name, info.params).unwrap();
        (expanded, grid)
    }

    fn fit(states: &str, may: LockedMemory) -> (RunSpec, Grid, Result<Vec<String>>) {
        let (mut spec, mut grid) = prepared(states);
        let r = fit_under(&mut spec, &mut grid, find_workload("xfer").unwrap(), may);
        (spec, grid, r)
    }

    #[test]
    fn pinned_points_beyond_the_limit_are_left_out_with_the_fix() {
        let all = r#"["pinned", "unpinned"]"#;
        let before = prepared(all).0.points.len();
        let (spec, grid, notes) = fit(all, LockedMemory::Limit(8 << 20));
        let notes = notes.unwrap();
        // pvm locks one buffer here (32M: out), memcpy two (4M: 8M, in; 32M: out).
        let left: Vec<String> = spec
            .skipped
            .iter()
            .map(|s| {
                format!(
                    "{} {} {}",
                    s.point["engine"], s.point["state"], s.point["size"]
                )
            })
            .collect();
        assert_eq!(left.len(), 2, "{left:?}");
        assert!(left.contains(&"pvm pinned 32M".to_string()), "{left:?}");
        assert!(left.contains(&"memcpy pinned 32M".to_string()), "{left:?}");
        assert_eq!(spec.points.len(), before - 2);
        assert_eq!(grid.points(), spec.points.len());
        assert_eq!(notes.len(), 1);
        assert!(
            notes[0].contains("above the locked-memory limit of 8M (ulimit -l)")
                && notes[0].contains("ulimit -l unlimited"),
            "{notes:?}"
        );
        assert!(
            spec.skipped
                .iter()
                .any(|s| s.reason.contains("lock 64M in one process")),
            "{:?}",
            spec.skipped
        );
    }

    #[test]
    fn no_limit_or_a_tree_leaves_every_point() {
        let all = r#"["pinned", "unpinned"]"#;
        let n = prepared(all).0.points.len();
        for may in [
            LockedMemory::Capable,
            LockedMemory::Unlimited,
            LockedMemory::NotChecked,
        ] {
            let (spec, _, notes) = fit(all, may);
            assert!(notes.unwrap().is_empty());
            assert_eq!(spec.points.len(), n);
        }
    }

    #[test]
    fn a_run_of_nothing_but_pinned_points_beyond_the_limit_is_refused() {
        let (_, _, r) = fit(r#""pinned""#, LockedMemory::Limit(4096));
        let e = r.unwrap_err().to_string();
        assert!(
            e.starts_with("no point of t can lock its buffers: its pinned buffers lock")
                && e.contains("limit of 4K")
                && !e.contains('\n'),
            "{e}"
        );
        // Unpinned points lock nothing: a limit of one page leaves them all.
        let (spec, _, r) = fit(r#""unpinned""#, LockedMemory::Limit(4096));
        assert!(r.unwrap().is_empty() && spec.skipped.is_empty());
    }
}
