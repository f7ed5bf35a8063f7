//! perf_event_open(2) and its reads, defined in `perflab_core` because every workload
//! thread counts its own events through core's `ThreadTracker`.

pub use perflab_core::perf_event::*;
