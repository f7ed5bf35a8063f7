//! Reports over stored measurements: comparison tables (variant vs variant, run vs run),
//! size scans of them (`scan_tables`), the regression distribution of the seed study,
//! per-pair drill-downs, and for a run with one measurable variant its summary and
//! single-variant drill-down. Every table is a [`Section`] described once as blocks
//! (`blocks`, [`doc`]); each command's view ([`views`]) is a list of sections, rendered
//! through [`section::render`] as text, 72-column mail, Markdown or HTML, and through
//! [`section::json`] as JSON keyed by section id.
//!
//! Inputs are `perflab_core::record` types, so this crate never touches the database.
//! Only successful measurements are numbers; failed ones are counted and named.

pub mod benchstat;
pub mod blocks;
pub mod changed;
pub mod compare;
pub mod counters;
pub mod coverage;
pub mod design;
pub mod distribution;
pub mod doc;
pub mod drilldown;
pub mod error;
mod family;
pub mod fmt;
pub mod full;
pub mod gpu_figure;
pub mod gpu_table;
mod gpu_words;
pub mod hints;
pub mod irq_cpu;
pub mod latency_percentiles;
pub mod latency_table;
pub mod lock_wait;
pub mod parallel;
mod parallel_legacy;
pub mod plot;
pub mod scan;
mod scan_exec;
mod scan_render;
pub mod section;
mod section_data;
mod sections;
pub mod select;
pub mod single;
pub mod slim;
pub mod spans;
pub mod spans_ab;
pub mod spans_seed;
pub mod spans_seen;
mod spans_text;
pub mod spans_wake;
mod spans_wake_text;
pub mod summary;
mod summary_text;
mod table_text;
pub mod telemetry;
pub mod trace_rows;
#[cfg(test)]
mod unknown_monitor_tests;
mod verdict_text;
pub mod views;

pub use blocks::Changes;
pub use changed::{changes_for_table, involved_cpus, what_changed, RowChanges, TelemetryChange};
pub use compare::{
    compare_runs, compare_variants, run_label, ComparisonTable, Row, TableKind, UnavailableNote,
    Unmatched,
};
pub use counters::{counter_table, CounterRow, CounterTable};
pub use design::{Design, DriftGuard};
pub use distribution::{distribution, BucketCount, BucketRow, Distribution};
pub use drilldown::{render_pair, render_row, write_drilldown};
pub use error::ReportError;
pub use gpu_table::{backing_table, BackingRow, BackingSection, BackingTable};
pub use irq_cpu::{irq_cpu_table, IrqCpuRow, IrqCpuTable};
pub use latency_percentiles::{latency_percentiles, PercentileRow, PercentileTable};
pub use latency_table::{
    compare_latency_runs, latency_table, LatencyRow, LatencySection, LatencyTable,
};
pub use lock_wait::{lock_wait_table, LockWaitRow, LockWaitTable};
pub use parallel::{parallel_table, render_threads, ParallelRow, ParallelTable};
pub use scan::{
    scan_tables, Crossing, Direction, Parting, ScanPoint, ScanReport, ScanSection, ScanSummary,
};
pub use section::{Format, Section};
pub use select::{baseline_variant, measured_variants};
pub use single::{render_single_pair, write_single_drilldown};
pub use spans::{span_table, SpanFigure, SpanGroup, SpanRow, SpanTable};
pub use spans_ab::{span_comparisons, SpanCmpRow, SpanComparison};
pub use spans_seed::{seed_span_table, SeedSpanTable};
pub use summary::{summarize_run, SummaryRow, SummaryTable};
