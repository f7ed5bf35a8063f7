//! Seeded series with known change points, for measuring detectors: the shapes a stored
//! history takes (a step, a regression then its fix, a change of spread) and the ones it
//! must not be fooled by (noise only, single outlying runs, steady outliers).
//!
//! Values are 100 + σ·z with σ = 1 and z standard normal from [`crate::simulate::Gen`],
//! so a step of 3 is three noise standard deviations.

use crate::simulate::Gen;

/// One generated series and where its changes really are.
#[derive(Clone, Debug, PartialEq)]
pub struct Generated {
    pub family: &'static str,
    pub values: Vec<f64>,
    pub truth: Vec<usize>,
}

/// The families measured, in the order the tables show them.
pub const FAMILIES: [&str; 9] = [
    "step-2σ",
    "step-4σ",
    "steps-3x2σ",
    "regression-fix",
    "spread-x4",
    "step+outliers",
    "noise",
    "outlier",
    "outliers-5%",
];

/// The series of `family` with `n` values, drawn with `seed`.
pub fn generate(family: &str, n: usize, seed: u64) -> Generated {
    let mut g = Gen::new(seed);
    let mut noise = |sigma: f64| 100.0 + sigma * g.z();
    let half = n / 2;
    let (values, truth): (Vec<f64>, Vec<usize>) = match family {
        "step-2σ" | "step-4σ" => {
            let d = if family == "step-2σ" { 2.0 } else { 4.0 };
            let v = (0..n).map(|i| noise(1.0) + if i >= half { d } else { 0.0 });
            (v.collect(), vec![half])
        }
        // Three 2σ steps up, evenly spaced: otava-test-data's multiple-changes shape.
        "steps-3x2σ" => {
            let q = n / 4;
            let v = (0..n).map(|i| noise(1.0) + 2.0 * (i / q.max(1)).min(3) as f64);
            (v.collect(), vec![q, 2 * q, 3 * q])
        }
        "regression-fix" => {
            let (a, b) = (n / 3, n / 3 + (n / 3).min(20));
            let v = (0..n).map(|i| noise(1.0) + if (a..b).contains(&i) { 4.0 } else { 0.0 });
            (v.collect(), vec![a, b])
        }
        "spread-x4" => {
            let v = (0..n).map(|i| noise(if i >= half { 4.0 } else { 1.0 }));
            (v.collect(), vec![half])
        }
        "step+outliers" => {
            let v = (0..n).map(|i| noise(1.0) + if i >= half { 3.0 } else { 0.0 });
            (
                with_outliers(v.collect(), &mut Gen::new(seed ^ 1), 0.05),
                vec![half],
            )
        }
        "noise" => ((0..n).map(|_| noise(1.0)).collect(), vec![]),
        "outlier" => {
            let mut v: Vec<f64> = (0..n).map(|_| noise(1.0)).collect();
            v[half] += 10.0;
            (v, vec![])
        }
        "outliers-5%" => {
            let v = (0..n).map(|_| noise(1.0)).collect();
            (with_outliers(v, &mut Gen::new(seed ^ 1), 0.05), vec![])
        }
        other => panic!("no generated family {other}"),
    };
    Generated {
        family: FAMILIES
            .iter()
            .find(|f| **f == family)
            .copied()
            .unwrap_or("?"),
        values,
        truth,
    }
}

/// Makes about `share` of the values 8 σ slower (a run disturbed by other work).
fn with_outliers(mut v: Vec<f64>, g: &mut Gen, share: f64) -> Vec<f64> {
    for x in &mut v {
        // z > 1.645 has probability 0.05.
        if g.z() > normal_quantile(1.0 - share) {
            *x += 8.0;
        }
    }
    v
}

fn normal_quantile(p: f64) -> f64 {
    use statrs::distribution::{ContinuousCDF, Normal};
    Normal::standard().inverse_cdf(p)
}
