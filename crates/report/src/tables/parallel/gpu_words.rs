//! The threads table's words where the workers are copy engines (gpuxfer's bidir points):
//! a "thread" is one direction's chain of copies on its stream, and its busy time the time
//! its bytes take at that direction's solo bandwidth (docs/gpu-xfer.md). The reasons are
//! worded by `perflab_core::note::Reason::text`, from the same values as the threads'.

/// The threads table's title line for copy engines.
pub(crate) const TITLE: &str =
    "May the two directions' bandwidths be summed? (medians over repetitions; aggregate = \
     all bytes over the shared window of the two copy engines)";
/// The line under it.
pub(crate) const UNITS: &str = "(aggregate and summed in MiB/s; threads = copy engines; \
     parallel = each direction's bytes at its solo bandwidth over the window, 2: the \
     engines overlapped, 1: they took turns)";
