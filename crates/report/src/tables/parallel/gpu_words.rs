//! gpuxfer's bidir points judged as copy engines, not CPU threads. The parallelism judge
//! speaks of threads and of time on a CPU; a copy engine has no CPU time: a "thread" is
//! one direction's chain of copies on its stream, and its busy time the time its bytes
//! take at that direction's solo bandwidth (docs/gpu-xfer.md).

/// The workload whose thread records are copy engines.
pub(crate) const WORKLOAD: &str = "gpuxfer";

/// The threads table's title line for copy engines.
pub(crate) const TITLE: &str =
    "May the two directions' bandwidths be summed? (medians over repetitions; aggregate = \
     all bytes over the shared window of the two copy engines)";
/// The line under it.
pub(crate) const UNITS: &str = "(aggregate and summed in MiB/s; threads = copy engines; \
     parallel = each direction's bytes at its solo bandwidth over the window, 2: the \
     engines overlapped, 1: they took turns)";

/// One reason of the judge's in copy-engine words.
pub(crate) fn engine_reason(reason: &str) -> String {
    if let Some(rest) = reason.strip_prefix("effective parallelism ") {
        let value = rest.split_whitespace().next().unwrap_or("?");
        return format!(
            "effective parallelism {value} of 2 copy engines: at their solo bandwidths the \
             two directions' bytes did not fill the shared window together (the engines \
             took turns, or shared the link or the driver's staging)"
        );
    }
    reason
        .replace(
            "all threads ran together",
            "both directions copied together",
        )
        .replace("per-thread", "per-direction")
        .replace("threads", "directions")
        .replace("thread ", "direction ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_speak_of_copy_engines_not_cpus() {
        let r = engine_reason(
            "effective parallelism 1.02 of 2 threads: on average each was on a CPU for 51% \
             of the window (off it the rest: preempted by other tasks, or waiting)",
        );
        assert!(
            r.starts_with("effective parallelism 1.02 of 2 copy engines"),
            "{r}"
        );
        assert!(!r.contains("CPU") && !r.contains("thread"), "{r}");
        assert_eq!(
            engine_reason(
                "thread d2h started 3 ms after thread h2d ended: they never ran together"
            ),
            "direction d2h started 3 ms after direction h2d ended: they never ran together"
        );
    }
}
