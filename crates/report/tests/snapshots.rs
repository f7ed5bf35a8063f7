//! Snapshots of what a person reads: the table, the distribution, a drill-down.

use crate::common;

use perflab_report::{compare_runs, compare_variants, distribution, render_pair};
use perflab_report::{Format, Section};
use perflab_stats::{Buckets, StatsConfig};

fn table() -> perflab_report::ComparisonTable {
    let run = common::run_info(7);
    let ms = common::records(1.0, None);
    compare_variants(&run, &ms, "poll-only", "all", None, &StatsConfig::default()).unwrap()
}

#[test]
fn variant_table_text() {
    insta::assert_snapshot!("variant_table", table().render(Format::Text));
}

#[test]
fn run_table_text() {
    let a = common::run_info(7);
    let b = common::run_info(8);
    let a_ms = common::records(1.0, Some(&[0, 8, 24, 28]));
    let b_ms = common::records(0.97, Some(&[0, 8, 12]));
    let t = compare_runs(&a, &a_ms, &b, &b_ms, None, &StatsConfig::default()).unwrap();
    insta::assert_snapshot!("run_table", t.render(Format::Text));
}

#[test]
fn distribution_text() {
    let d = distribution(&table(), &Buckets::default());
    insta::assert_snapshot!("distribution", d.render(Format::Text));
}

#[test]
fn drilldown_of_pair_4_24() {
    let run = common::run_info(7);
    let ms = common::records(1.0, None);
    let text = render_pair(&run, &ms, &table(), 4, 24).unwrap();
    insta::assert_snapshot!("drilldown_4_24", text);
}
