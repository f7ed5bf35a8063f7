//! How a cross-check decides one row (a CPU pair, a size, a GPU direction × memory kind ×
//! size): perflab and the peer tool are measured in interleaved pairs, the order
//! alternating (P R, R P, …), and the row is the **median of the per-pair ratios**
//! perflab / peer with its distribution-free interval (order statistics of the ratios,
//! binomial coverage ≥ 95 %). The interval is judged against ±tolerance, in the project's
//! verdict words: inside → within (the two agree), wholly outside → OUTSIDE (they
//! disagree), across an edge → undecided (the pairs cannot tell), and an undecided row gets
//! more pairs until it is decided or its plan's most are spent.
//!
//! Why pairs: a machine drifts (on the H100 the pageable reference loop moved by ±25 % from
//! one run to the next; on the 2-vCPU guests `crosscheck memcpy` at 16M read 1.090, 1.111
//! and 0.812 as ratios of medians taken apart). Neighbours in time share the drift; their
//! ratio cancels it, and the median of ratios ignores a pair a burst hit on one side. A
//! check can therefore neither pass nor fail on three rounds of noise: it says undecided.
//! The extra looks are few and bounded, and the interval at each look already covers
//! ≥ 95 %, so the sequential procedure stays conservative enough for a cross-check.

/// Pairs added to an undecided row at each further look.
pub const MORE: usize = 6;
/// Least coverage of the interval.
pub const COVERAGE: f64 = 0.95;

/// (first look, most) pairs of the CPU checks (ctxsw, memcpy, netrr): six pairs are the
/// fewest whose order statistics cover 95 %; an undecided row grows by [`MORE`] to four
/// times that. At the default 5 s per pair a row spends 30 s to 2 min per tool.
pub const CPU_PLAN: (usize, usize) = (6, 24);

/// What the pairs of one row say.
#[derive(Clone, Debug, PartialEq)]
pub struct Estimate {
    /// Median of the per-pair ratios.
    pub median: f64,
    /// The interval's ends, order statistics of the ratios.
    pub ci: (f64, f64),
    /// Its coverage by the binomial law, ≥ [`COVERAGE`].
    pub coverage: f64,
    pub pairs: usize,
}

/// Within, outside or undecided against ±tolerance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Judgement {
    Within,
    Outside,
    Undecided,
}

impl Judgement {
    pub fn word(self) -> &'static str {
        match self {
            Judgement::Within => "within",
            Judgement::Outside => "OUTSIDE",
            Judgement::Undecided => "undecided",
        }
    }
}

/// The median of `ratios` and its order-statistic interval: with the ratios sorted,
/// [r(k), r(n+1-k)] for the largest k with 2·P(Bin(n, ½) < k) ≤ 1 − [`COVERAGE`]. `None`
/// with too few pairs for any such interval (fewer than 6) or a ratio that is not a
/// positive finite number.
pub fn estimate(ratios: &[f64]) -> Option<Estimate> {
    if ratios.iter().any(|r| !r.is_finite() || *r <= 0.0) {
        return None;
    }
    let mut r = ratios.to_vec();
    r.sort_by(f64::total_cmp);
    let n = r.len();
    let alpha = 1.0 - COVERAGE;
    // P(Bin(n, ½) <= j), accumulated.
    let mut below = 0.0;
    let mut k = 0;
    for j in 0..n / 2 {
        below += binom(n, j) / 2f64.powi(n as i32);
        if 2.0 * below <= alpha + 1e-12 {
            k = j + 1;
        } else {
            break;
        }
    }
    if k == 0 {
        return None;
    }
    // Coverage of [r(k), r(n+1-k)] = 1 − 2·P(Bin ≤ k−1).
    let tail: f64 = (0..k).map(|j| binom(n, j)).sum::<f64>() / 2f64.powi(n as i32);
    let median = if n % 2 == 1 {
        r[n / 2]
    } else {
        (r[n / 2 - 1] + r[n / 2]) / 2.0
    };
    Some(Estimate {
        median,
        ci: (r[k - 1], r[n - k]),
        coverage: 1.0 - 2.0 * tail,
        pairs: n,
    })
}

fn binom(n: usize, k: usize) -> f64 {
    (0..k).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64)
}

/// The interval against 1 ± `pct` % (edges count as inside, as `ratio_within` does).
pub fn judge(ci: (f64, f64), pct: f64) -> Judgement {
    let (lo, hi) = (1.0 - pct / 100.0 - 1e-12, 1.0 + pct / 100.0 + 1e-12);
    if ci.0 >= lo && ci.1 <= hi {
        Judgement::Within
    } else if ci.1 < lo || ci.0 > hi {
        Judgement::Outside
    } else {
        Judgement::Undecided
    }
}

/// A decided row: its estimate, the judgement, and every (perflab, reference) pair.
pub type Decided = (Estimate, Judgement, Vec<(f64, f64)>);

/// Measures pairs with `pair(k)` (k counts from 0; the caller alternates the order by it)
/// until the row is decided or the plan's most pairs are spent; returns the estimate and
/// its judgement. `pair` gives (perflab, reference) MiB/s.
pub fn decide<E>(
    (first, most): (usize, usize),
    pct: f64,
    mut pair: impl FnMut(usize) -> Result<(f64, f64), E>,
) -> Result<Decided, E> {
    let mut got: Vec<(f64, f64)> = Vec::new();
    let mut want = first;
    loop {
        while got.len() < want {
            got.push(pair(got.len())?);
        }
        let ratios: Vec<f64> = got.iter().map(|(p, r)| p / r).collect();
        let e = estimate(&ratios).unwrap_or(Estimate {
            median: f64::NAN,
            ci: (f64::NAN, f64::NAN),
            coverage: 0.0,
            pairs: got.len(),
        });
        let j = if e.median.is_finite() {
            judge(e.ci, pct)
        } else {
            Judgement::Outside
        };
        if j != Judgement::Undecided || want >= most {
            return Ok((e, j, got));
        }
        want = (want + MORE).min(most);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_are_order_statistics_with_at_least_95_percent_coverage() {
        let six = estimate(&[1.0, 1.01, 0.99, 1.02, 0.98, 1.0]).unwrap();
        assert_eq!(six.ci, (0.98, 1.02));
        assert!((six.coverage - (1.0 - 2.0 / 64.0)).abs() < 1e-12);
        // 12 pairs: [r(3), r(10)], 1 − 2·79/4096.
        let r: Vec<f64> = (1..=12).map(|i| 0.9 + 0.01 * i as f64).collect();
        let e = estimate(&r).unwrap();
        assert_eq!(e.ci, (r[2], r[9]));
        assert!((e.coverage - (1.0 - 2.0 * 79.0 / 4096.0)).abs() < 1e-12);
        assert!(e.coverage >= COVERAGE);
        assert!((e.median - (r[5] + r[6]) / 2.0).abs() < 1e-12);
        assert_eq!(estimate(&[1.0; 5]), None, "5 pairs cannot give 95 %");
        assert_eq!(estimate(&[1.0, 1.0, 1.0, 1.0, 1.0, f64::NAN]), None);
    }

    #[test]
    fn the_interval_is_judged_against_the_tolerance() {
        assert_eq!(judge((0.98, 1.03), 3.0), Judgement::Within);
        assert_eq!(judge((1.031, 1.2), 3.0), Judgement::Outside);
        assert_eq!(judge((0.5, 0.96), 3.0), Judgement::Outside);
        assert_eq!(judge((0.9, 1.0), 3.0), Judgement::Undecided);
    }

    #[test]
    fn an_undecided_row_gets_more_pairs_up_to_the_plan() {
        // Alternate ratios 0.9 and 1.1: always across the edges.
        let mut calls = 0;
        let (e, j, pairs) = decide::<()>((12, 24), 3.0, |k| {
            calls += 1;
            Ok((if k % 2 == 0 { 0.9 } else { 1.1 }, 1.0))
        })
        .unwrap();
        assert_eq!(
            (j, pairs.len(), calls, e.pairs),
            (Judgement::Undecided, 24, 24, 24)
        );
        // Steady ratios decide at the first look.
        let (e, j, pairs) = decide::<()>((6, 12), 3.0, |_| Ok((101.0, 100.0))).unwrap();
        assert_eq!((j, pairs.len()), (Judgement::Within, 6));
        assert!((e.median - 1.01).abs() < 1e-12);
        let (_, j, _) = decide::<()>((6, 12), 3.0, |_| Ok((120.0, 100.0))).unwrap();
        assert_eq!(j, Judgement::Outside);
    }
}
