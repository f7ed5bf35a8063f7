//! Markdown renderings of the seed-shaped comparison and distribution: pipe tables whose
//! raw text lines up, so they paste into a mail as well as into a pull request.

use crate::common;

use perflab_report::{compare_runs, compare_variants, distribution, ComparisonTable};
use perflab_report::{Format, Section};
use perflab_stats::{Buckets, StatsConfig};

fn table() -> ComparisonTable {
    let run = common::run_info(7);
    let ms = common::records(1.0, None);
    compare_variants(&run, &ms, "poll-only", "all", None, &StatsConfig::default()).unwrap()
}

/// Every line of a pipe table has as many cells as its header, and the delimiter row
/// says which columns are right-aligned.
fn pipe_lines(md: &str) -> Vec<&str> {
    md.lines().filter(|l| l.starts_with('|')).collect()
}

#[test]
fn variant_table_markdown() {
    let md = table().render(Format::Markdown);
    let lines = pipe_lines(&md);
    assert_eq!(lines.len(), 2 + 5, "{md}");
    let cols = lines[0].matches(" |").count();
    assert!(
        lines.iter().all(|l| l.matches(" |").count() == cols),
        "{md}"
    );
    assert!(lines[1].starts_with("| :---"), "{md}");
    assert!(lines[1].contains("-: |"), "{md}");
    assert!(
        md.contains("- 4-28: no successful value in all (5 failed)"),
        "{md}"
    );
    insta::assert_snapshot!("variant_table_markdown", md);
}

#[test]
fn distribution_markdown() {
    let md = distribution(&table(), &Buckets::default()).render(Format::Markdown);
    assert!(
        md.contains("(3 - 5] pct difference : 1 instances (1 moved): 4-24*\n"),
        "{md}"
    );
    assert!(md.contains("(* better/worse, = same, ? undecided)"), "{md}");
    insta::assert_snapshot!("distribution_markdown", md);
}

#[test]
fn run_labels_name_the_sides() {
    let mut a = common::run_info(7);
    let mut b = common::run_info(8);
    a.label = Some("kernel 6.1".into());
    b.label = Some("  kernel 6.6 ".into());
    let a_ms = common::records(1.0, Some(&[0, 8]));
    let b_ms = common::records(0.97, Some(&[0, 12]));
    let cfg = StatsConfig::default();
    let t = compare_runs(&a, &a_ms, &b, &b_ms, None, &cfg).unwrap();
    assert_eq!(
        (t.a_label.as_str(), t.b_label.as_str()),
        ("kernel 6.1", "kernel 6.6")
    );
    assert!(t
        .unmatched
        .iter()
        .any(|u| u.reason == "not measured in kernel 6.6"));
    let md = t.render(Format::Markdown);
    assert!(md.contains("A = kernel 6.1, B = kernel 6.6"), "{md}");
    // The same label twice would leave two columns of one name.
    b.label = a.label.clone();
    let t = compare_runs(&a, &a_ms, &b, &b_ms, None, &cfg).unwrap();
    assert_eq!(
        (t.a_label.as_str(), t.b_label.as_str()),
        ("kernel 6.1 (run 7)", "kernel 6.1 (run 8)")
    );
    b.label = Some(" ".into());
    let t = compare_runs(&a, &a_ms, &b, &b_ms, None, &cfg).unwrap();
    assert_eq!(t.b_label, "run 8");
    // An unmatched point keeps the median of the side that has values.
    let u = t.unmatched.iter().find(|u| u.label == "4-8").unwrap();
    assert!(u.median_a.is_some() && u.median_b.is_none(), "{u:?}");
}
