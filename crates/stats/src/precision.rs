//! How many repetitions would make a median's interval narrow enough to see a change of
//! a given size: the "too wide to conclude" rule of the run summary.
//!
//! An interval of the median shrinks about as 1/√n (for the bootstrap interval as for
//! the normal one; Efron & Tibshirani 1993, ch. 13), so narrowing today's half-width h
//! (from n repetitions) to a target t takes about n·(h/t)² repetitions. That is a rough
//! guide: the answer is rounded up to two significant digits, and beyond
//! [`PRACTICAL_REPS`] it is no answer at all, because the cause of such a spread is
//! worth finding before repeating that often.

/// Beyond this many repetitions the advice to repeat is not practical advice any more.
pub const PRACTICAL_REPS: u64 = 10_000;

/// Repetitions needed to narrow a median interval of half-width `half_width_pct` (in
/// percent of the median, measured with `n` repetitions) to `target_pct`: n·(h/t)²,
/// rounded up to two significant digits and never fewer than `n`. `None` when that is
/// above [`PRACTICAL_REPS`], or when the inputs give no number (a target ≤ 0, a
/// non-finite or negative width, n = 0).
pub fn reps_for_half_width(n: usize, half_width_pct: f64, target_pct: f64) -> Option<u64> {
    let ok = |x: f64| x.is_finite() && x >= 0.0;
    if n == 0 || !ok(half_width_pct) || !ok(target_pct) || target_pct == 0.0 {
        return None;
    }
    let need = rough(n as f64 * (half_width_pct / target_pct).powi(2)).max(n as f64);
    // Comparing as floats first keeps a huge `need` from saturating the cast silently.
    (need <= PRACTICAL_REPS as f64).then_some(need as u64)
}

/// Rounded up to two significant digits: the 1/√n rule is a rough guide, and "about
/// 583" would claim a precision it does not have.
fn rough(x: f64) -> f64 {
    if x <= 100.0 {
        return x.ceil();
    }
    let step = 10f64.powi(x.log10().floor() as i32 - 1);
    (x / step).ceil() * step
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rough_keeps_two_significant_digits_rounding_up() {
        assert_eq!(rough(4.2), 5.0);
        assert_eq!(rough(100.0), 100.0);
        assert_eq!(rough(583.0), 590.0);
        assert_eq!(rough(1234.5), 1300.0);
    }

    #[test]
    fn known_answers_and_limits() {
        // 5 repetitions at ±2% need 5·2² = 20 for ±1%.
        assert_eq!(reps_for_half_width(5, 2.0, 1.0), Some(20));
        // 5·(3.3)² = 54.45 -> 55.
        assert_eq!(reps_for_half_width(5, 3.3, 1.0), Some(55));
        // 10·(11)² = 1210 -> 1300 (two significant digits, up).
        assert_eq!(reps_for_half_width(10, 11.0, 1.0), Some(1300));
        // Already narrow enough: today's count.
        assert_eq!(reps_for_half_width(7, 0.5, 1.0), Some(7));
        // 5·(50)² = 12,500: beyond practical.
        assert_eq!(reps_for_half_width(5, 50.0, 1.0), None);
        assert_eq!(reps_for_half_width(5, 2.0, 0.0), None);
        assert_eq!(reps_for_half_width(5, f64::NAN, 1.0), None);
        assert_eq!(reps_for_half_width(0, 2.0, 1.0), None);
    }

    proptest::proptest! {
        #[test]
        fn monotone_in_width_and_never_below_n(
            n in 1usize..200, h1 in 0.0f64..100.0, h2 in 0.0f64..100.0, t in 0.01f64..10.0
        ) {
            let (lo, hi) = if h1 <= h2 { (h1, h2) } else { (h2, h1) };
            let (a, b) = (reps_for_half_width(n, lo, t), reps_for_half_width(n, hi, t));
            match (a, b) {
                // A wider interval never needs fewer repetitions.
                (Some(a), Some(b)) => proptest::prop_assert!(a <= b, "{a} > {b}"),
                // Once beyond practical, wider stays beyond practical.
                (None, Some(b)) => proptest::prop_assert!(false, "None then Some({b})"),
                _ => {}
            }
            if let Some(need) = b {
                proptest::prop_assert!(need >= n as u64);
                proptest::prop_assert!(need <= PRACTICAL_REPS);
                if hi > t {
                    proptest::prop_assert!(need as f64 >= n as f64 * (hi / t).powi(2) - 1e-6);
                }
            }
        }
    }
}
