//! The regression distribution of the seed study: how many rows fall in each bucket of
//! regression percent (positive = worse), how many of those moved (better, worse or
//! changed), read the same or are undecided, and which rows they are.

use perflab_stats::{Bucket, Buckets, Verdict};
use serde::Serialize;

use crate::error::ReportError;
use crate::tables::compare::design::Design;
use crate::tables::compare::{ComparisonTable, UnavailableNote};

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BucketCount {
    pub bucket: Bucket,
    pub label: String,
    pub dir: String,
    pub count: usize,
    /// Rows in this bucket whose verdict is better, worse or changed.
    pub significant: usize,
    /// Rows in this bucket read `same` (inside ±threshold).
    pub same: usize,
    /// Rows in this bucket still undecided.
    pub undecided: usize,
    pub rows: Vec<BucketRow>,
}

/// A row of the comparison as it falls in a bucket.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BucketRow {
    pub label: String,
    pub regression_pct: f64,
    pub p_value: f64,
    /// Adjusted for the other rows of the comparison (Benjamini-Hochberg).
    pub p_adjusted: f64,
    /// The verdict moved (better, worse or changed).
    pub significant: bool,
    pub verdict: Verdict,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Distribution {
    pub metric: String,
    pub a_label: String,
    pub b_label: String,
    /// What the comparison rests on, as its table says.
    pub design: Design,
    pub alpha: f64,
    /// Rows classified; unclassified and unmatched ones are listed separately.
    pub total: usize,
    pub regressions: Vec<BucketCount>,
    pub improvements: Vec<BucketCount>,
    /// Rows in no bucket: void ones (`LABEL (void)`: they tested nothing) and those whose
    /// change in percent is undefined (baseline median 0).
    pub unclassified: Vec<String>,
    /// Points the table could not compare, with the reason.
    pub unmatched: Vec<String>,
    pub unavailable: Vec<UnavailableNote>,
}

/// Classifies every row of `table` by its regression percent.
pub fn distribution(table: &ComparisonTable, buckets: &Buckets) -> Distribution {
    let all = buckets.all();
    let mut counts: Vec<BucketCount> = all
        .iter()
        .map(|b| BucketCount {
            bucket: *b,
            label: b.label(),
            dir: b.dir_name(),
            count: 0,
            significant: 0,
            same: 0,
            undecided: 0,
            rows: Vec::new(),
        })
        .collect();
    let mut unclassified = Vec::new();
    let mut total = 0;
    for r in &table.rows {
        // A void row tested nothing: its change belongs in no bucket.
        if r.cmp.verdict == Verdict::Void {
            unclassified.push(format!("{} (void)", r.label));
            continue;
        }
        let Some(reg) = r.cmp.regression_pct else {
            unclassified.push(r.label.clone());
            continue;
        };
        let b = buckets.classify(reg);
        if let Some(c) = counts.iter_mut().find(|c| c.bucket == b) {
            c.count += 1;
            let significant = r.cmp.verdict.moved();
            c.significant += usize::from(significant);
            c.same += usize::from(r.cmp.verdict == Verdict::Same);
            c.undecided += usize::from(r.cmp.verdict == Verdict::Undecided);
            c.rows.push(BucketRow {
                label: row_name(r),
                regression_pct: reg,
                p_value: r.cmp.p_value,
                p_adjusted: r.cmp.p_adjusted,
                significant,
                verdict: r.cmp.verdict,
            });
            total += 1;
        }
    }
    let improvements = counts.split_off(counts.len() / 2);
    Distribution {
        metric: table.metric.clone(),
        a_label: table.a_label.clone(),
        b_label: table.b_label.clone(),
        design: table.design,
        alpha: table.config.alpha,
        total,
        regressions: counts,
        improvements,
        unclassified,
        unmatched: table
            .unmatched
            .iter()
            .map(|u| format!("{}: {}", u.label, u.reason))
            .collect(),
        unavailable: table.unavailable.clone(),
    }
}

fn row_name(r: &crate::tables::compare::Row) -> String {
    match &r.variant {
        Some(v) => format!("{} [{v}]", r.label),
        None => r.label.clone(),
    }
}

impl Distribution {
    pub fn to_json(&self) -> Result<String, ReportError> {
        Ok(serde_json::to_string_pretty(self)?)
    }

    /// The headline: what is compared, on which design, how many rows.
    pub(crate) fn headline(&self) -> String {
        format!(
            "Regression of {}: {} vs {} ({}; positive = worse), {} instances",
            self.metric,
            self.b_label,
            self.a_label,
            self.design.name(),
            self.total
        )
    }

    /// The buckets a table or histogram shows: every regression bucket, and the
    /// improvement buckets that hold rows.
    pub(crate) fn shown_buckets(&self) -> impl Iterator<Item = &BucketCount> + '_ {
        self.regressions
            .iter()
            .chain(&self.improvements)
            .filter(|c| c.count > 0 || self.regressions.iter().any(|r| r.bucket == c.bucket))
    }

    /// The rows of a bucket, `*` after the ones that moved, `=` after the same ones and
    /// `?` after the undecided ones.
    pub(crate) fn marked(&self, c: &BucketCount) -> String {
        let mark = |v: Verdict| match v {
            Verdict::Same => "=",
            Verdict::Undecided => "?",
            _ => "*",
        };
        let names: Vec<String> = c
            .rows
            .iter()
            .map(|r| format!("{}{}", r.label, mark(r.verdict)))
            .collect();
        names.join(" ")
    }
}
