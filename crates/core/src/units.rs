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
