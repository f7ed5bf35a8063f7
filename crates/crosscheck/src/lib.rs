//! Cross-checks: perflab's numbers side by side with the tools kernel engineers already
//! trust, and the cost of perflab's own machinery. Every check runs perflab's side through
//! the lab runner ([`lab_side`]: a run in a throwaway store, executed with a progress
//! sink, or [`perflab_lab::measure_once`] for the monitor check), so what is checked is
//! what `perflab run` measures.
//!
//! - [`ctxsw`]: ctxsw against `perf bench sched pipe -T` on the same CPUs;
//! - [`mem`]: xfer's memcpy engine against `perf bench mem memcpy` at the same sizes;
//! - [`gpu`]: gpuxfer against a plain CUDA-events loop, per direction, host memory, size;
//! - [`net`]: netrr UDP against `sockperf ping-pong` on 127.0.0.1, same pinning;
//! - [`monitors`]: each workload with its monitors on against none, interleaved;
//! - [`trace`]: the trace monitor's BPF backend against its text backend, span by span;
//! - [`trace_cost`]: what each event of a trace set costs a workload (a diagnostic);
//! - [`checks`]: the runner's own cost per measurement, and the ratio checks' tables;
//! - [`report_cost`]: the time and memory `perflab report` needs over a large run;
//! - [`verdicts`]: the seeded simulation of the verdicts' error rates and power;
//! - [`bisect`]: the seeded simulation of `perflab bisect` against fixed repetitions.
//!
//! Each number is held to the tolerance it states in one [`tolerance::Verdicts`], from
//! which the binary takes its exit code. These are benchmarks: no unit test asserts
//! their speeds, because shared machines are noisy.
//!
//! Where this crate sits: above `lab`, `workloads`, `monitors`, `stats` and `report`,
//! below the binary, which only parses arguments into [`Options`] and prints.

pub mod bisect;
pub mod checks;
pub mod ctxsw;
pub mod error;
pub mod gpu;
pub mod gpu_pairs;
pub mod gpu_reference;
pub mod history;
pub mod lab_side;
pub mod mem;
pub mod monitors;
pub mod net;
pub mod null_run;
pub mod options;
pub mod pairs;
pub mod peer_tool;
pub mod report_cost;
pub mod tolerance;
pub mod trace;
pub mod trace_cost;
pub mod verdicts;

pub use checks::run;
pub use error::Error;
pub use options::Options;
pub use tolerance::{Check, Verdicts};

/// `writeln!` to the check's output, ignoring a closed output as `perflab` ignores it
/// elsewhere (the numbers still decide the exit code).
macro_rules! say {
    ($out:expr) => {{
        let _ = writeln!($out);
    }};
    ($out:expr, $($arg:tt)*) => {{
        let _ = writeln!($out, $($arg)*);
    }};
}
pub(crate) use say;
