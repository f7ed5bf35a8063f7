//! The size of a parameter grid, counted from its axes' lengths before any point is built:
//! a grid of 10^9 points would take tens of gigabytes to expand only to be refused, so the
//! refusal must come from arithmetic alone.

use crate::error::{LabError, Result};

/// The most points a grid may have: more would not finish in any reasonable time and
/// would make the stored spec and plan unwieldy.
pub const MAX_POINTS: u64 = 100_000;

/// The number of points the axes cross into; `None` when it overflows `u64` (a grid that
/// large is refused all the same).
pub fn count_points(lengths: impl IntoIterator<Item = usize>) -> Option<u64> {
    lengths
        .into_iter()
        .try_fold(1u64, |acc, n| acc.checked_mul(n as u64))
}

/// Refuses a grid of more than [`MAX_POINTS`] points, naming every axis with more than one
/// value and the product they make.
pub fn check(axes: &[(String, Vec<String>)]) -> Result<()> {
    let count = count_points(axes.iter().map(|(_, v)| v.len()));
    if count.is_some_and(|c| c <= MAX_POINTS) {
        return Ok(());
    }
    let factors: Vec<String> = axes
        .iter()
        .filter(|(_, v)| v.len() > 1)
        .map(|(name, v)| format!("{name} {}", v.len()))
        .collect();
    let total = match count {
        Some(c) => describe(c),
        None => format!("more than {}", u64::MAX),
    };
    Err(LabError::Input(format!(
        "the parameter grid has {total} points ({}); at most {MAX_POINTS} are allowed: \
         give fewer values to some axis",
        factors.join(" × ")
    )))
}

/// `1000000000 (10^9)` for an exact power of ten, the plain number otherwise.
pub(crate) fn describe(n: u64) -> String {
    let mut m = n;
    let mut exp = 0;
    while m >= 10 && m.is_multiple_of(10) {
        m /= 10;
        exp += 1;
    }
    if m == 1 && exp >= 6 {
        format!("{n} (10^{exp})")
    } else {
        n.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn axes(lens: &[usize]) -> Vec<(String, Vec<String>)> {
        lens.iter()
            .enumerate()
            .map(|(i, &n)| (format!("a{i}"), vec![String::new(); n]))
            .collect()
    }

    #[test]
    fn products_are_counted_without_overflow() {
        assert_eq!(count_points([10; 9]), Some(1_000_000_000));
        assert_eq!(count_points([]), Some(1));
        assert_eq!(count_points([0, 5]), Some(0));
        assert_eq!(count_points([usize::MAX, usize::MAX]), None);
    }

    #[test]
    fn a_grid_over_the_limit_is_named_axis_by_axis() {
        assert!(check(&axes(&[10, 10, 10, 10, 10])).is_ok());
        let e = check(&axes(&[10, 1, 10, 10, 10, 10, 10, 10, 10, 10]))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("the parameter grid has 1000000000 (10^9) points (a0 10 × a2 10 × "),
            "{e}"
        );
        assert!(!e.contains("a1 "), "{e}");
        assert!(e.contains("at most 100000"), "{e}");
        let huge = check(&axes(&[10; 20])).unwrap_err().to_string();
        assert!(
            huge.contains("more than 18446744073709551615 points"),
            "{huge}"
        );
    }
}
