//! How an xfer measurement's failures read: one line that says what failed, and for a
//! buffer that could not be mapped or locked, which pool is short and how to fill it.
//! Shared by the single-thread and the threaded measurement.

use perflab_core::{format_size, SysRoot, WorkloadError};

use super::buffer::{Backing, MapError, MapStep};
use super::engine::{peak_bytes, Setup};

pub(super) fn failed(msg: String) -> WorkloadError {
    WorkloadError::Failed(msg)
}

/// The message for a buffer that could not be mapped or locked: which buffer, size and
/// backing, and for hugetlb which pool is short and how to fill it. `held` is what the
/// measurement's other buffers already took, counted back into the pool's free pages.
pub(super) fn map_failure(
    s: &Setup,
    sys: &SysRoot,
    label: &str,
    e: MapError,
    held: u64,
) -> WorkloadError {
    let err = std::io::Error::from_raw_os_error(e.errno);
    let what = format!(
        "xfer: cannot map the {label} ({} with {} backing)",
        format_size(s.size),
        s.backing.name()
    );
    let msg = match (e.step, s.backing.pool_kb()) {
        (MapStep::Map, Some(kb)) => {
            let page = s.backing.page_bytes();
            let need = peak_bytes(s) / page;
            let held = held / page;
            let name = format_size(s.backing.page_bytes());
            let pool = perflab_sys::hugepages::pools(sys)
                .ok()
                .and_then(|ps| ps.into_iter().find(|p| p.size_kb == kb));
            let state = match &pool {
                Some(p) => format!(
                    "the {name} hugetlb pool (hugepages-{kb}kB) had {} free of {} pages, \
                     this measurement needs {need}",
                    p.free + held,
                    p.nr
                ),
                None => format!(
                    "this machine has no {name} hugetlb pool (no \
                     /sys/kernel/mm/hugepages/hugepages-{kb}kB)"
                ),
            };
            let total = pool.as_ref().map_or(need, |p| {
                p.nr.saturating_add(need.saturating_sub(p.free + held))
            });
            let how = if s.backing == Backing::Huge2M {
                format!("`sysctl vm.nr_hugepages={total}`")
            } else {
                format!("`echo {total} > /sys/kernel/mm/hugepages/hugepages-{kb}kB/nr_hugepages`")
            };
            format!(
                "{what}: mmap(MAP_HUGETLB) failed: {err}; {state}; fill it with the perflab \
                 knob `hugepages={name}:auto` or {how}"
            )
        }
        (MapStep::Advise, None) if s.backing == Backing::Thp && e.errno == libc::EINVAL => {
            format!(
                "{what}: madvise(MADV_HUGEPAGE) failed: {err}; this kernel has no \
                 transparent huge pages"
            )
        }
        (MapStep::Lock, _) => format!(
            "{what}: mlock failed: {err}; a pinned buffer must be locked: raise the \
             locked-memory limit (ulimit -l) or run as root"
        ),
        (step, _) => format!("{what}: {step:?} step failed: {err}"),
    };
    failed(msg)
}
