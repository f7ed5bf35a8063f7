//! Scoring found change points against known ones: a found point within `tolerance` of a
//! known one not yet matched is a true positive (the rule of otava-test-data's explorer,
//! whose default tolerance is 5 points); the rest of the found are false alarms and the
//! rest of the known are misses.

use serde::Serialize;

/// Counts over one or many series; precision, recall and F1 are read from them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Score {
    pub true_positives: usize,
    pub false_positives: usize,
    pub false_negatives: usize,
}

impl Score {
    pub fn add(&mut self, other: Score) {
        self.true_positives += other.true_positives;
        self.false_positives += other.false_positives;
        self.false_negatives += other.false_negatives;
    }

    /// 1 when nothing was found (no false alarm was raised).
    pub fn precision(&self) -> f64 {
        let found = self.true_positives + self.false_positives;
        if found == 0 {
            1.0
        } else {
            self.true_positives as f64 / found as f64
        }
    }

    /// 1 when there was nothing to find.
    pub fn recall(&self) -> f64 {
        let known = self.true_positives + self.false_negatives;
        if known == 0 {
            1.0
        } else {
            self.true_positives as f64 / known as f64
        }
    }

    /// Harmonic mean of precision and recall; 1 for a series with nothing to find and
    /// nothing found, 0 for one with nothing to find and a false alarm.
    pub fn f1(&self) -> f64 {
        if self.true_positives + self.false_positives + self.false_negatives == 0 {
            return 1.0;
        }
        let (p, r) = (self.precision(), self.recall());
        if p + r == 0.0 {
            0.0
        } else {
            2.0 * p * r / (p + r)
        }
    }
}

/// Matches `found` against `known`, each found point taking the first unmatched known
/// point within `tolerance`.
pub fn match_points(known: &[usize], found: &[usize], tolerance: usize) -> Score {
    let mut matched = vec![false; known.len()];
    let mut tp = 0;
    for &f in found {
        if let Some(k) =
            (0..known.len()).find(|&k| !matched[k] && known[k].abs_diff(f) <= tolerance)
        {
            matched[k] = true;
            tp += 1;
        }
    }
    Score {
        true_positives: tp,
        false_positives: found.len() - tp,
        false_negatives: known.len() - tp,
    }
}
