use serde::{Deserialize, Serialize};

/// The unit of a metric or telemetry value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    Count,
    PerSecond,
    Nanoseconds,
    Microseconds,
    Milliseconds,
    Seconds,
    Bytes,
    BytesPerSecond,
    MibPerSecond,
    Percent,
    Ratio,
}

impl Unit {
    /// Short symbol for tables.
    pub fn symbol(self) -> &'static str {
        match self {
            Unit::Count => "",
            Unit::PerSecond => "/s",
            Unit::Nanoseconds => "ns",
            Unit::Microseconds => "us",
            Unit::Milliseconds => "ms",
            Unit::Seconds => "s",
            Unit::Bytes => "B",
            Unit::BytesPerSecond => "B/s",
            Unit::MibPerSecond => "MiB/s",
            Unit::Percent => "%",
            Unit::Ratio => "x",
        }
    }

    /// Whether a value of this unit may be below zero. Counts, rates, durations, sizes and
    /// bandwidths cannot; a percentage or a ratio may be a change or a difference. Checked
    /// where figures come in from outside (`crate::plausible`).
    pub fn may_be_negative(self) -> bool {
        matches!(self, Unit::Percent | Unit::Ratio)
    }

    /// What a value of this unit is, for a sentence: "a rate cannot be negative".
    pub fn noun(self) -> &'static str {
        match self {
            Unit::Count => "a count",
            Unit::PerSecond => "a rate",
            Unit::Nanoseconds | Unit::Microseconds | Unit::Milliseconds | Unit::Seconds => {
                "a duration"
            }
            Unit::Bytes => "a size",
            Unit::BytesPerSecond | Unit::MibPerSecond => "a bandwidth",
            Unit::Percent => "a percentage",
            Unit::Ratio => "a ratio",
        }
    }
}

/// Which direction of change is an improvement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Better {
    Higher,
    Lower,
    /// Descriptive figures (counts of events) with no better direction.
    Neither,
}
