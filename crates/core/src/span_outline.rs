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
