//! What presenting a span set needs of it: its spans' names, labels and the condition
//! under which each applies, in declaration order, without the events that match them.
//! The trace monitor parses its sets; the report reads their outlines through
//! [`crate::catalog`], so it does not link the monitors.

use std::collections::BTreeMap;

use serde::Deserialize;

/// The fewest events a span figure (a p50, a p99, a mean) is read from, per row: below it
/// the row shows its count and no figure (issue 32: a wake-up table printed `(2) to idle
/// exit 1945.60` from 1 of 83,132 wake-ups). Twenty events put the median's 95 %
/// distribution-free interval between the 6th and 15th of them.
pub const MIN_SPAN_EVENTS: u64 = 20;

/// A span set as the report reads it.
#[derive(Clone, Debug, PartialEq)]
pub struct SpanSetOutline {
    pub name: String,
    pub spans: Vec<SpanOutline>,
}

/// One span of a set: `name` is its key within the set (`netrx.{name}`), `label` what a
/// person reads.
#[derive(Clone, Debug, PartialEq)]
pub struct SpanOutline {
    pub name: String,
    pub label: String,
    pub when: Option<When>,
}

/// A span that applies only where a knob published a fact (`net.path` = `vm-…`).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct When {
    pub fact: String,
    #[serde(default)]
    pub prefix: String,
}

impl When {
    pub fn holds(&self, facts: &BTreeMap<String, String>) -> bool {
        facts
            .get(&self.fact)
            .is_some_and(|v| v.starts_with(&self.prefix))
    }
}

/// The statistic of a span row that carries the value a split span's durations were
/// tagged with (`idlewake.ipi_idle_exit@C6:split`): the row's value is the value's index
/// (the idle state's number), its label the value's name where the machine names it
/// (`C6`, `haltpoll idle`), else empty. The report reads the state from this row, never
/// from the span's label.
pub const SPLIT_STAT: &str = "split";

/// The statistic of a span row that says how many matches per round trip of the
/// workload the span expects from the study's own work (`netrx.raise:per_round_trip`): left
/// for spans keyed by CPU only, whose matches include whatever else ran on those CPUs.
pub const PER_ROUND_TRIP_STAT: &str = "per_round_trip";

/// The most foreign matches per round trip a CPU-keyed span's figure is read with, as a
/// share of the matches it expects per round trip: foreign = matched − expected × round
/// trips; above half the expected count (more than a third of the matched spans someone
/// else's) the row shows the count and no figure (issue 32: VM spans keyed by CPU matched
/// about 95 foreign events per round trip and printed a p50).
pub const MAX_FOREIGN_PER_EXPECTED: f64 = 0.5;

/// The value a split span's duration was tagged with: the number the kernel recorded
/// (an idle state's index) and, where the set names its values (`names = "cpuidle"`) and
/// the machine has a name for it, that name.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct SplitValue {
    pub index: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl SplitValue {
    /// As a person reads it: the name, else `state N`.
    pub fn display(&self) -> String {
        match &self.name {
            Some(n) => n.clone(),
            None => format!("state {}", self.index),
        }
    }
}
