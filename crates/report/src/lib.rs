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
pub mod doc;
pub mod drilldown;
pub mod error;
pub mod fmt;
pub mod full;
pub mod hints;
pub mod plot;
pub mod section;
pub mod select;
pub mod slim;
pub mod spans;
pub mod tables;
pub mod telemetry;
#[cfg(test)]
mod unknown_monitor_tests;
pub mod views;

pub use drilldown::single::{render_single_pair, write_single_drilldown};
pub use drilldown::{render_pair, render_row, write_drilldown};
pub use error::ReportError;
pub use section::{Format, Section};
pub use select::{baseline_variant, measured_variants};
pub use spans::ab::{span_comparisons, SpanCmpRow, SpanComparison};
pub use spans::seed::{seed_span_table, SeedSpanTable};
pub use spans::{span_table, SpanFigure, SpanGroup, SpanRow, SpanTable};
pub use tables::blocks::Changes;
pub use tables::compare::changed::{
    changes_for_table, involved_cpus, what_changed, RowChanges, TelemetryChange,
};
pub use tables::compare::design::{Design, DriftGuard};
pub use tables::compare::{
    compare_runs, compare_variants, run_label, ComparisonTable, Row, TableKind, UnavailableNote,
    Unmatched,
};
pub use tables::counters::{counter_table, CounterRow, CounterTable};
pub use tables::distribution::{distribution, BucketCount, BucketRow, Distribution};
pub use tables::gpu::{backing_table, BackingRow, BackingSection, BackingTable};
pub use tables::irq_cpu::{irq_cpu_table, IrqCpuRow, IrqCpuTable};
pub use tables::latency::{
    compare_latency_runs, latency_table, LatencyRow, LatencySection, LatencyTable,
};
pub use tables::lock_wait::{lock_wait_table, LockWaitRow, LockWaitTable};
pub use tables::parallel::{parallel_table, render_threads, ParallelRow, ParallelTable};
pub use tables::percentiles::{latency_percentiles, PercentileRow, PercentileTable};
pub use tables::scan::{
    scan_tables, size_scan, Crossing, Direction, Parting, ScanPoint, ScanReport, ScanSection,
    ScanSummary,
};
pub use tables::summary::{summarize_run, SummaryRow, SummaryTable};
