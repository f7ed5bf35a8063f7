//! The false discovery rate over the rows of one comparison: Benjamini & Hochberg (1995),
//! "Controlling the false discovery rate: a practical and powerful approach to multiple
//! testing", J. R. Statist. Soc. B 57(1).
//!
//! A comparison of 40 CPU pairs runs 40 tests; at alpha = 0.05 about two of them come out
//! significant by chance when nothing changed. The step-up procedure adjusts each p-value
//! so that "adjusted p < alpha" keeps the expected share of false discoveries among the
//! rows called different at most alpha (for independent or positively dependent tests).
//!
//! With the m p-values sorted, p(1) ≤ … ≤ p(m), the adjusted value of the i-th is
//! q(i) = min over j ≥ i of min(1, m/j · p(j)): R's `p.adjust(p, "BH")`.

use serde::Serialize;

use crate::decide::Prior;

/// Benjamini-Hochberg adjusted p-values, in the order given. A value that is not a
/// probability (NaN) is read as 1: it can never be a discovery, and it still counts in m.
pub fn benjamini_hochberg(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let clean: Vec<f64> = p
        .iter()
        .map(|&x| if x.is_nan() { 1.0 } else { x.clamp(0.0, 1.0) })
        .collect();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&i, &j| clean[i].total_cmp(&clean[j]));
    let mut adjusted = vec![1.0; m];
    let mut running = 1.0f64;
    // From the largest p down, so each q is the minimum over the ranks above it.
    for (rank0, &i) in order.iter().enumerate().rev() {
        let scaled = clean[i] * m as f64 / (rank0 + 1) as f64;
        running = running.min(scaled).min(1.0);
        // Never below the raw value (it cannot be, but rounding must not make it so).
        adjusted[i] = running.max(clean[i]);
    }
    adjusted
}

/// How the rows of one comparison were decided together, for the reader and for JSON.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FamilyAdjustment {
    /// Always `benjamini_hochberg`.
    pub method: &'static str,
    /// The rows adjusted together (m).
    pub rows: usize,
    /// Rows with a raw p below alpha whose adjusted p is not: decided only when read
    /// alone.
    pub lost: usize,
    /// The variance the rows borrowed from each other (moderated t), when they could.
    pub prior: Option<Prior>,
    /// Confidence of every interval shown: 1 − R·alpha/m for R decided rows of m.
    pub level: f64,
}

impl FamilyAdjustment {
    /// A single comparison, which needs no adjustment.
    pub fn single() -> Self {
        Self {
            method: "benjamini_hochberg",
            rows: 1,
            lost: 0,
            prior: None,
            level: 0.95,
        }
    }
}

/// How many rows of a family of `rows` must reach p = `floor` (the smallest p-value their
/// repetitions allow, [`crate::min_p_value`]) before their adjusted p falls below
/// `alpha`: 1 when a single changed row can show on its own. With k rows at the floor and
/// the rest far above it, the adjusted value of those k is floor · rows / k.
pub fn rows_needed_together(floor: f64, rows: usize, alpha: f64) -> usize {
    (1..=rows.max(1))
        .find(|&k| floor * rows as f64 / (k as f64) < alpha)
        .unwrap_or(rows.max(1) + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: &[f64], b: &[f64]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-12)
    }

    #[test]
    fn matches_a_hand_computed_example() {
        // Sorted: 0.005, 0.01, 0.03, 0.04; m/i·p = 0.02, 0.02, 0.04, 0.04; R's
        // p.adjust(c(0.01, 0.04, 0.03, 0.005), "BH") = 0.02 0.04 0.04 0.02.
        let q = benjamini_hochberg(&[0.01, 0.04, 0.03, 0.005]);
        assert!(close(&q, &[0.02, 0.04, 0.04, 0.02]), "{q:?}");
    }

    #[test]
    fn the_papers_example_rejects_four() {
        // Benjamini & Hochberg (1995), section 4: 15 p-values, q* = 0.05 rejects the
        // four smallest (the Bonferroni procedure only three).
        let p = [
            0.0001, 0.0004, 0.0019, 0.0095, 0.0201, 0.0278, 0.0298, 0.0344, 0.0459, 0.3240, 0.4262,
            0.5719, 0.6528, 0.7590, 1.0000,
        ];
        let q = benjamini_hochberg(&p);
        assert_eq!(q.iter().filter(|&&x| x < 0.05).count(), 4, "{q:?}");
        assert!((q[3] - 0.0095 * 15.0 / 4.0).abs() < 1e-12);
        // The fifth is held up by the smallest m/j·p(j) above it, 0.0201·15/5.
        assert!((q[4] - 0.0603).abs() < 1e-12, "{}", q[4]);
        assert_eq!(q[14], 1.0);
    }

    #[test]
    fn how_many_rows_must_change_together() {
        // 5 vs 5: floor 2/252. Alone it is significant; among 40 rows, 7 must reach it
        // (0.0079 · 40 / 7 = 0.045), with 7 vs 7 (floor 2/3432) one is enough.
        let five = crate::min_p_value(5, 5);
        assert_eq!(rows_needed_together(five, 1, 0.05), 1);
        assert_eq!(rows_needed_together(five, 40, 0.05), 7);
        assert_eq!(rows_needed_together(crate::min_p_value(7, 7), 40, 0.05), 1);
        // 3 vs 3 (floor 0.1) can never be significant, however many rows change.
        assert_eq!(rows_needed_together(0.1, 10, 0.05), 11);
    }

    #[test]
    fn edge_cases() {
        assert!(benjamini_hochberg(&[]).is_empty());
        assert_eq!(benjamini_hochberg(&[0.03]), vec![0.03]);
        assert_eq!(benjamini_hochberg(&[f64::NAN, 0.01]), vec![1.0, 0.02]);
        assert!(close(
            &benjamini_hochberg(&[0.2, 0.2, 0.2]),
            &[0.2, 0.2, 0.2]
        ));
    }
}
