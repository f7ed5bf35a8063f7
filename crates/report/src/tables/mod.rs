//! The report's tables: each a type built from stored records that is a
//! [`crate::section::Section`] (its blocks in every format, its JSON). A table is one file
//! (or a folder, when its text has a file of its own).
//!
//! A table of one run that `show` prints beside the summary and `report` as a part of its
//! own (one per run) is one file here and one line of [`per_run_tables!`] below: the line
//! declares its module, its `--section` id and the heading of its part, and registers its
//! constructor; `show`, `report`, the JSON keys and `--section`'s lists all read that line.

pub mod blocks;
pub mod compare;
pub mod coverage;
pub mod distribution;
pub mod gpu;
pub mod latency;
pub mod lock_wait;
pub mod parallel;
pub mod percentiles;
pub mod scan;
pub mod summary;
pub mod telemetry_ab;
pub mod tool_summary;

use perflab_core::record::{MeasurementRecord, RunInfo};

use crate::section::Section;

/// A run's table, when it has the data for one.
pub type Build = fn(&RunInfo, &[MeasurementRecord]) -> Option<Box<dyn Section>>;

/// One table of a run: its id, the heading of its part in a report (`TITLE of run N`), and
/// how it is built from a run, `None` where the run has no data for it.
pub struct PerRun {
    pub id: TableId,
    pub title: &'static str,
    pub build: Build,
    /// The report's comparisons hold the table's figures, B against A (the telemetry
    /// comparison of each): where two variants of a run are compared, the report names
    /// `show` for it instead of printing it again.
    pub compared: bool,
}

/// A table as a boxed section.
fn boxed<T: Section + 'static>(t: Option<T>) -> Option<Box<dyn Section>> {
    t.map(|t| Box::new(t) as Box<dyn Section>)
}

/// Declares each per-run table's module and registers it: its [`TableId`] (with the
/// `--section` text), the heading of its report part, its constructor (`fn(&RunInfo,
/// &[MeasurementRecord]) -> Option<T>`, `T` a [`Section`]) and whether the comparisons
/// hold its figures.
macro_rules! per_run_tables {
    ($($module:ident: $id:ident = $text:literal, $title:literal, $build:ident, $compared:literal;)*) => {
        $(pub mod $module;)*

        /// The id of a table of [`PER_RUN`], [`crate::section::SectionId::Table`].
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum TableId {
            $($id,)*
        }

        impl TableId {
            /// The id as `--section` and JSON spell it.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(TableId::$id => $text,)*
                }
            }
        }

        /// The tables of a run, in the order `show` and `report` print them.
        pub const PER_RUN: &[PerRun] = &[$(PerRun {
            id: TableId::$id,
            title: $title,
            build: |info, ms| boxed($module::$build(info, ms)),
            compared: $compared,
        },)*];
    };
}

per_run_tables! {
    // module: id = "--section id", "report part's heading", constructor, compared;
    irq_cpu: Interrupts = "interrupts", "Interrupts", irq_cpu_table, false;
    counters: Counters = "counters", "Counters", counter_table, true;
    failures: Failures = "failures", "Failed measurements", failure_table, false;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::section::{REPORT, SHOW};

    /// A table registered by its one line is in `show`'s and `report`'s `--section`
    /// lists, after the lock waits, with an id of its own.
    #[test]
    fn a_registered_table_is_selectable_in_show_and_report() {
        for (i, part) in PER_RUN.iter().enumerate() {
            let id = part.id.as_str();
            let after_lock_wait = |list: &[&str]| {
                let lw = list.iter().position(|s| *s == "lock-wait").unwrap();
                list.get(lw + 1 + i) == Some(&id)
            };
            assert!(after_lock_wait(SHOW), "{id} in {SHOW:?}");
            assert!(after_lock_wait(REPORT), "{id} in {REPORT:?}");
            assert_eq!(PER_RUN.iter().filter(|p| p.id.as_str() == id).count(), 1);
        }
    }
}
