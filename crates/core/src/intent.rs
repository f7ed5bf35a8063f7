//! What a knob or a variant's parameter is meant to move, in telemetry the run records, and
//! a comparison that moved none of it (issue 32: an idle-ipi run whose idle driver ignored
//! `disable`, an `irqs-away` with no device interrupt on the fill CPU, a `2m` backing on
//! which no huge page was used). Such a comparison tested nothing: its verdict is `void`,
//! with the reason, never "needs more repetitions".
//!
//! A knob declares its intent (`Knob::intent` in perflab-knobs), a workload the intent of
//! its parameters ([`crate::Workload::intent`]); perflab-lab reads both sides' telemetry
//! and judges.

use serde::{Deserialize, Serialize};

/// The telemetry a setting is meant to move.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Intent {
    /// Which idle states the measured CPUs enter (`cpuidle` telemetry: each state's
    /// `disabled` flag and its `usage`, per measured CPU).
    IdleStates,
    /// Where the steered device interrupts are handled: their counts on the measured CPUs
    /// (`interrupts` telemetry, the numbered rows).
    IrqsMoved { irqs: IrqSet, to: Vec<u32> },
    /// The share of the workload's buffers on huge pages (its `huge_fraction` metric, read
    /// from smaps: AnonHugePages or the hugetlb mapping).
    HugePages,
}

/// Which interrupts an [`Intent::IrqsMoved`] steers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IrqSet {
    /// Every numbered (device) interrupt.
    Devices,
    Numbers(Vec<u32>),
    /// Interrupts whose /proc/interrupts description names this device or queue.
    Name(String),
}

impl IrqSet {
    /// Whether the /proc/interrupts row `key` (its name) with description `label` is one
    /// of these. Only numbered rows are device interrupts (LOC, RES, CAL are not).
    pub fn holds(&self, key: &str, label: &str) -> bool {
        if key.is_empty() || !key.bytes().all(|b| b.is_ascii_digit()) {
            return false;
        }
        match self {
            IrqSet::Devices => true,
            IrqSet::Numbers(n) => key.parse().is_ok_and(|k: u32| n.contains(&k)),
            IrqSet::Name(name) => label.split_whitespace().any(|w| {
                w.strip_prefix(name.as_str())
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with(['-', '.', ':', '_']))
            }),
        }
    }
}

/// A comparison of a variant with the baseline, at one point, that tested nothing: what
/// its settings were meant to move did not move.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct VoidComparison {
    /// The grid point (index), and as `k=v` of the parameters that vary (empty: one point).
    pub point: u32,
    pub point_label: String,
    pub baseline: String,
    pub variant: String,
    /// Why, naming the telemetry read: "poll-only entered haltpoll idle, where it is
    /// disabled: … (3 of 5 measurements of poll-only, all points, were ineffective; …)",
    /// a count of measurements only as [`crate::IneffectiveCount`] gives it.
    pub reason: String,
}

impl VoidComparison {
    /// One line: `void: all vs poll-only at cpu_b=1: REASON`.
    pub fn line(&self) -> String {
        let at = match self.point_label.is_empty() {
            true => String::new(),
            false => format!(" at {}", self.point_label),
        };
        format!(
            "void: {} vs {}{at}: {}",
            self.variant, self.baseline, self.reason
        )
    }

    /// Whether this void comparison is of `variant` against `baseline` at `point`.
    pub fn is(&self, point: u32, baseline: &str, variant: &str) -> bool {
        self.point == point && self.baseline == baseline && self.variant == variant
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_rows_only() {
        assert!(IrqSet::Devices.holds("24", "PCI-MSI virtio0-input.0"));
        assert!(!IrqSet::Devices.holds("LOC", "Local timer interrupts"));
        assert!(IrqSet::Numbers(vec![24]).holds("24", ""));
        assert!(!IrqSet::Numbers(vec![24]).holds("25", ""));
        let virtio = IrqSet::Name("virtio0".into());
        assert!(virtio.holds("24", "PCI-MSI 49153-edge virtio0-input.0"));
        assert!(!virtio.holds("24", "PCI-MSI 49153-edge virtio01-input.0"));
    }
}
