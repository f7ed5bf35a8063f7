//! The integration tests of this crate, linked as one test binary: each file under
//! tests/ is a module here (cargo would otherwise link every dependency once per
//! file). A new test file needs its `mod` line below; `tests_are_all_linked` in
//! crates/perflab/tests/test_layout.rs fails on one that lacks it.

mod behaviour;
mod benchstat;
mod browser;
mod changed;
mod common;
mod counters;
mod design;
mod full_report;
mod gpu_xfer;
mod irq_cpu;
mod latency_percentiles;
mod lock_wait;
mod markdown;
mod metric_names;
mod no_note_parsing;
mod param_names;
mod plot;
mod robustness;
mod scan;
mod single;
mod slim;
mod snapshots;
mod spans;
mod spans_foreign;
mod spans_idlewake;
mod spans_vm;
mod telemetry_ab;
mod verdicts;
mod views;
