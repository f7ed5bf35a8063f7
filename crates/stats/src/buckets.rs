//! Buckets of a regression distribution, as in the seed study: a regression percent r
//! (positive = worse) falls into `<=1`, `(1-2]`, … `(50-100]`, `>100`; improvements
//! (r < 0) fall into buckets of their own by |r|. Each bucket has a directory name for
//! per-bucket drill-downs: the upper edge ("1" … "100", "inf"), negated for improvements.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use crate::config::trim_float;
use crate::error::StatsError;

/// The seed's edges, in percent.
pub const DEFAULT_EDGES: [f64; 8] = [1.0, 2.0, 3.0, 5.0, 10.0, 20.0, 50.0, 100.0];

/// Strictly increasing positive edges in percent.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Buckets {
    edges: Vec<f64>,
}

/// One bucket: `index` 0 is `<= edges[0]`, `index == edges.len()` is `> last edge`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Bucket {
    pub improvement: bool,
    pub index: usize,
    /// Exclusive lower edge; `None` for the first bucket (which includes 0).
    pub lower: Option<f64>,
    /// Inclusive upper edge; `None` for the last bucket.
    pub upper: Option<f64>,
}

impl Default for Buckets {
    fn default() -> Self {
        Self {
            edges: DEFAULT_EDGES.to_vec(),
        }
    }
}

impl Buckets {
    pub fn new(edges: Vec<f64>) -> Result<Self, StatsError> {
        let text = edges
            .iter()
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
            .join(",");
        check_edges(&edges).map_err(|reason| StatsError::BadEdges { text, reason })?;
        Ok(Self { edges })
    }

    /// Parses `1,2,5,10`.
    pub fn parse(text: &str) -> Result<Self, StatsError> {
        let bad = |reason: String| StatsError::BadEdges {
            text: text.to_string(),
            reason,
        };
        let mut edges = Vec::new();
        for part in text.split(',') {
            let part = part.trim();
            if part.is_empty() {
                return Err(bad("an edge is empty".to_string()));
            }
            let v: f64 = part
                .parse()
                .map_err(|_| bad(format!("{part:?} is not a number")))?;
            edges.push(v);
        }
        check_edges(&edges).map_err(bad)?;
        Ok(Self { edges })
    }

    pub fn edges(&self) -> &[f64] {
        &self.edges
    }

    /// The bucket of a regression percent (positive = worse, negative = improvement).
    pub fn classify(&self, regression_pct: f64) -> Bucket {
        let improvement = regression_pct < 0.0;
        let r = regression_pct.abs();
        // NaN has no place; it lands in the last bucket rather than panicking.
        let index = self
            .edges
            .iter()
            .position(|&e| r <= e)
            .unwrap_or(self.edges.len());
        self.bucket(improvement, index)
    }

    /// Every regression bucket in increasing order, then every improvement bucket.
    pub fn all(&self) -> Vec<Bucket> {
        let mut v: Vec<Bucket> = (0..=self.edges.len())
            .map(|i| self.bucket(false, i))
            .collect();
        v.extend((0..=self.edges.len()).map(|i| self.bucket(true, i)));
        v
    }

    fn bucket(&self, improvement: bool, index: usize) -> Bucket {
        Bucket {
            improvement,
            index,
            lower: index.checked_sub(1).map(|i| self.edges[i]),
            upper: self.edges.get(index).copied(),
        }
    }
}

impl FromStr for Buckets {
    type Err = StatsError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

/// The rule of `compare.buckets` in an experiment file, so `--buckets` says the same.
fn check_edges(edges: &[f64]) -> Result<(), String> {
    perflab_core::limits::check_bucket_edges("edges", edges)
        .map_err(|e| e.trim_start_matches("edges: ").to_string())
}

impl Bucket {
    /// Compact label: `<=1`, `(1-2]`, `>100`, with `improved ` in front for improvements.
    pub fn label(&self) -> String {
        let core = match (self.lower, self.upper) {
            (None, Some(u)) => format!("<={}", trim_float(u)),
            (Some(l), Some(u)) => format!("({}-{}]", trim_float(l), trim_float(u)),
            (Some(l), None) => format!(">{}", trim_float(l)),
            (None, None) => "any".to_string(),
        };
        self.prefixed(core)
    }

    /// The seed's spaced form: `<= 1`, `(1 - 2]`, `> 100`.
    pub fn range_text(&self) -> String {
        let core = match (self.lower, self.upper) {
            (None, Some(u)) => format!("<= {}", trim_float(u)),
            (Some(l), Some(u)) => format!("({} - {}]", trim_float(l), trim_float(u)),
            (Some(l), None) => format!("> {}", trim_float(l)),
            (None, None) => "any".to_string(),
        };
        self.prefixed(core)
    }

    /// Directory name: the upper edge, `inf` for the last bucket, `improved-` in front
    /// for improvements. (The seed wrote `-5`; a name starting with `-` reads as an option
    /// to `ls`, `rm` and most other tools.)
    pub fn dir_name(&self) -> String {
        let core = self.upper.map_or_else(|| "inf".to_string(), trim_float);
        if self.improvement {
            format!("improved-{core}")
        } else {
            core
        }
    }

    fn prefixed(&self, core: String) -> String {
        if self.improvement {
            format!("improved {core}")
        } else {
            core
        }
    }
}

impl fmt::Display for Bucket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_buckets_and_their_directories() {
        let b = Buckets::default();
        let labels: Vec<String> = b.all().iter().map(|x| x.label()).collect();
        assert_eq!(labels[0], "<=1");
        assert_eq!(labels[1], "(1-2]");
        assert_eq!(labels[7], "(50-100]");
        assert_eq!(labels[8], ">100");
        assert_eq!(labels[9], "improved <=1");
        assert_eq!(labels[17], "improved >100");
        let dirs: Vec<String> = b.all().iter().map(|x| x.dir_name()).collect();
        assert_eq!(
            &dirs[..9],
            &["1", "2", "3", "5", "10", "20", "50", "100", "inf"]
        );
        assert_eq!(dirs[9], "improved-1");
        assert_eq!(dirs[17], "improved-inf");
        assert!(dirs.iter().all(|d| !d.starts_with('-')), "{dirs:?}");
        assert_eq!(b.all()[1].range_text(), "(1 - 2]");
    }

    #[test]
    fn classify_uses_half_open_intervals() {
        let b = Buckets::default();
        assert_eq!(b.classify(0.0).label(), "<=1");
        assert_eq!(b.classify(1.0).label(), "<=1");
        assert_eq!(b.classify(1.0001).label(), "(1-2]");
        assert_eq!(b.classify(4.36).label(), "(3-5]");
        assert_eq!(b.classify(4.36).dir_name(), "5");
        assert_eq!(b.classify(250.0).label(), ">100");
        assert_eq!(b.classify(-0.5).label(), "improved <=1");
        assert_eq!(b.classify(-7.0).dir_name(), "improved-10");
    }

    #[test]
    fn parses_custom_edges_and_refuses_bad_ones() {
        let b = Buckets::parse(" 1, 2.5 ,5,10").unwrap();
        assert_eq!(b.edges(), &[1.0, 2.5, 5.0, 10.0]);
        assert_eq!(b.classify(2.0).label(), "(1-2.5]");
        assert_eq!(b.classify(2.0).dir_name(), "2.5");
        for bad in [
            "", "1,,2", "1,x", "2,1", "1,1", "0,1", "-1,2", "1,inf", "NaN",
        ] {
            let e = Buckets::parse(bad).unwrap_err();
            assert!(matches!(e, StatsError::BadEdges { .. }), "{bad}: {e}");
        }
        let e = Buckets::parse("5,3").unwrap_err().to_string();
        assert!(e.contains("3 does not come after 5"), "{e}");
        assert!(Buckets::new(vec![]).is_err());
    }
}
