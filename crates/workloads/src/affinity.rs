//! CPU affinity of threads, with errors a person can act on.

use nix::sched::{sched_setaffinity, CpuSet};
use nix::unistd::Pid;

/// Restricts thread `tid` (0: the calling thread) to `cpus`.
pub fn pin(tid: i32, cpus: &[u32]) -> Result<(), String> {
    let mut set = CpuSet::new();
    for &cpu in cpus {
        set.set(cpu as usize).map_err(|e| {
            format!(
                "{e} (CPU {cpu} is beyond the {} CPUs an affinity mask can name)",
                CpuSet::count()
            )
        })?;
    }
    sched_setaffinity(Pid::from_raw(tid), &set).map_err(|e| {
        let list = cpus
            .iter()
            .map(|c| c.to_string())
            .collect::<Vec<_>>()
            .join(",");
        format!("{e} (is CPU {list} online and allowed? see /sys/devices/system/cpu/online)")
    })
}
