//! Did the threads of a measurement run in parallel, and may their bandwidths be summed?
//!
//! Seed 000 summed per-thread DMA bandwidths into a total and asked whether that was
//! allowed. It is when every thread moved its bytes during the same window, each on a
//! CPU of its own: then the sum of the per-thread bandwidths equals the aggregate
//! bandwidth (all bytes over the union window). When threads ran one after another, or
//! took turns on a shared CPU, each thread's own bandwidth describes a window in which
//! the others were not running, and the sum overstates what the machine moved.
//!
//! [`judge`] takes one [`Span`] per thread (start and end on one clock, bytes, where it
//! ran, and its CPU time where known) and returns a [`Verdict`]: the aggregate and summed
//! bandwidths, the overlap (share of the window in which all threads ran), the effective
//! parallelism (busy time summed over the window), whether summing is valid, and the
//! reasons in concrete terms ("thread c0t3 started 41 ms after thread c0t0 ended", "4
//! threads pinned to CPU 0 shared it for 99% of the window"). It is pure, so xfer (CPU
//! copies), dmatest (kernel DMA threads) and reports of stored runs use the same rules:
//! the workloads store its figures as metrics, and a report judges the stored thread
//! records again with [`judge_stored`] for the reasons (docs/METHODOLOGY.md).

mod judge;
mod sharing;
mod span;
mod text;

pub use judge::{judge, judge_stored, Criteria, Verdict};
pub use sharing::{shared_cpus, SharedCpu};
pub use span::{spans_from_records, Span};
pub use text::{duration_text, percent};

#[cfg(test)]
mod tests;
