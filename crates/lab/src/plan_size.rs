//! The size of a run's plan, counted before any measurement is planned: the grid is
//! bounded and so are the repetitions, but not their product, and a plan of 10^9
//! measurements would fill the database (and, held whole, the memory) only to never end.

use crate::error::{LabError, Result};
use crate::grid_size::describe;

/// The most measurements a run may plan, its adaptive repetitions' cap included: ten
/// million is months of the fastest workload's measurements, and a plan row is stored
/// per measurement.
pub const MAX_MEASUREMENTS: u64 = 10_000_000;

/// What a plan crosses: its points and variants, the headline repetitions each point and
/// variant may reach (the adaptive cap where one is above the planned repetitions), and
/// its telemetry repetitions.
#[derive(Clone, Copy, Debug)]
pub struct PlanShape {
    pub points: u64,
    pub variants: u64,
    pub repetitions: u64,
    /// Where the repetitions are an adaptive cap rather than the planned number.
    pub capped: bool,
    pub telemetry: u64,
}

impl PlanShape {
    /// The measurements the plan can hold; `None` when that overflows `u64`.
    pub fn measurements(&self) -> Option<u64> {
        let per_cell = self.repetitions.checked_add(self.telemetry)?;
        self.points
            .checked_mul(self.variants)?
            .checked_mul(per_cell)
    }

    /// Refuses a plan of more than [`MAX_MEASUREMENTS`], naming its factors.
    pub fn check(&self) -> Result<()> {
        let count = self.measurements();
        if count.is_some_and(|c| c <= MAX_MEASUREMENTS) {
            return Ok(());
        }
        let total = match count {
            Some(c) => describe(c),
            None => format!("more than {}", u64::MAX),
        };
        let reps = match (self.telemetry, self.capped) {
            (0, false) => format!("{} repetitions", self.repetitions),
            (0, true) => format!("{} repetitions (the adaptive cap)", self.repetitions),
            (t, capped) => format!(
                "({} repetitions{} + {t} telemetry)",
                self.repetitions,
                if capped { " (the adaptive cap)" } else { "" }
            ),
        };
        let variants = match self.variants {
            1 => "1 variant".to_string(),
            n => format!("{n} variants"),
        };
        Err(LabError::Input(format!(
            "the plan has {total} measurements ({} points × {variants} × {reps}); at most \
             {MAX_MEASUREMENTS} are allowed: give fewer points, variants or repetitions",
            self.points
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(points: u64, repetitions: u64) -> PlanShape {
        PlanShape {
            points,
            variants: 1,
            repetitions,
            capped: false,
            telemetry: 0,
        }
    }

    #[test]
    fn a_plan_over_the_limit_is_refused_with_its_factors() {
        assert!(shape(100_000, 100).check().is_ok());
        let e = shape(100_000, 10_000).check().unwrap_err().to_string();
        assert_eq!(
            e,
            "the plan has 1000000000 (10^9) measurements (100000 points × 1 variant × 10000 \
             repetitions); at most 10000000 are allowed: give fewer points, variants or \
             repetitions"
        );
        let capped = PlanShape {
            variants: 4,
            capped: true,
            telemetry: 1,
            ..shape(100_000, 30)
        };
        let e = capped.check().unwrap_err().to_string();
        assert!(
            e.contains(
                "(100000 points × 4 variants × (30 repetitions (the adaptive cap) + 1 telemetry))"
            ),
            "{e}"
        );
        assert!(e.starts_with("the plan has 12400000 measurements"), "{e}");
    }

    #[test]
    fn products_are_counted_without_overflow() {
        let huge = PlanShape {
            variants: u64::MAX,
            ..shape(u64::MAX, 2)
        };
        assert_eq!(huge.measurements(), None);
        let e = huge.check().unwrap_err().to_string();
        assert!(
            e.contains("more than 18446744073709551615 measurements"),
            "{e}"
        );
        assert_eq!(shape(0, 10_000).measurements(), Some(0));
    }
}
