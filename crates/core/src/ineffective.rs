//! How many of a variant's measurements a knob did not hold for: the one count every line
//! that says so reads. A void comparison's reason (`crates/lab/src/void`) and the report's
//! "Ineffective measurements" list once counted this fact apart, the one over the measured
//! CPUs' idle telemetry at a point ("5 of 10 ... (none at this point)"), the other over
//! the knob's own check of every CPU in the run ("12 of 12"): two fractions for one fact.

use std::fmt;

use crate::record::{MeasurementRecord, MeasurementStatus};

/// Of the measurements that ran (any role; a failed one says nothing about a knob, so it
/// is in neither figure), how many were recorded ineffective.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IneffectiveCount {
    pub ineffective: u32,
    pub ran: u32,
}

impl IneffectiveCount {
    /// The count over `ms`: the measurements of one variant, as the caller chose them.
    pub fn of<'a>(ms: impl IntoIterator<Item = &'a MeasurementRecord>) -> Self {
        let mut count = Self::default();
        for m in ms {
            match m.status {
                MeasurementStatus::Failed(_) => continue,
                MeasurementStatus::Ineffective(_) => count.ineffective += 1,
                _ => {}
            }
            count.ran += 1;
        }
        count
    }
}

/// `12 of 12 measurements`: the words are the caller's to add (whose, where).
impl fmt::Display for IneffectiveCount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} of {} measurements", self.ineffective, self.ran)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Role;
    use crate::{Params, WorkloadOutput};

    fn m(status: MeasurementStatus, role: Role) -> MeasurementRecord {
        MeasurementRecord {
            seq: 0,
            point: 0,
            params: Params::default(),
            variant: "poll-only".into(),
            rep: 0,
            status,
            started_at: 0.0,
            elapsed_s: 1.0,
            output: WorkloadOutput::default(),
            telemetry: Vec::new(),
            role,
            monitors: Vec::new(),
        }
    }

    #[test]
    fn failed_measurements_are_in_neither_figure_and_every_role_counts() {
        let ms = [
            m(MeasurementStatus::Ineffective("x".into()), Role::Headline),
            m(MeasurementStatus::Ineffective("x".into()), Role::Telemetry),
            m(MeasurementStatus::Ok, Role::Headline),
            m(MeasurementStatus::Disturbed("y".into()), Role::Headline),
            m(MeasurementStatus::Failed("z".into()), Role::Headline),
        ];
        let count = IneffectiveCount::of(&ms);
        assert_eq!(
            count,
            IneffectiveCount {
                ineffective: 2,
                ran: 4
            }
        );
        assert_eq!(count.to_string(), "2 of 4 measurements");
    }
}
