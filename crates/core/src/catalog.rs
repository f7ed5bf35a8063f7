//! The workloads this program has, as descriptors, for the crates that present runs (the
//! report) without linking the workloads' code: `perflab_report` needs a workload's
//! report hints (its latency table, its drill-down's title), not the workload, and the
//! workloads crate links knobs and the QEMU guest code. The binary installs the list
//! once at start; a reader asks by the name a stored run carries.

use std::sync::OnceLock;

use crate::Descriptor;

static WORKLOADS: OnceLock<Vec<&'static Descriptor>> = OnceLock::new();

/// Makes `list` the workloads every later [`workload`] looks in. A program has one set of
/// workloads: the first call wins and later ones are ignored (tests that install the same
/// fixtures from several threads need no order).
pub fn install_workloads(list: Vec<&'static Descriptor>) {
    let _ = WORKLOADS.set(list);
}

/// The descriptor of the workload called `name`; `None` for one this program does not
/// know (an imported run) or before any list was installed.
pub fn workload(name: &str) -> Option<&'static Descriptor> {
    WORKLOADS.get()?.iter().copied().find(|d| d.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Kind, Needs, ReportHints};

    static ONE: Descriptor = Descriptor {
        kind: Kind::Workload,
        name: "one",
        help: "",
        params: &[],
        needs: Needs::NONE,
        report: ReportHints::None,
    };

    #[test]
    fn the_first_list_installed_is_the_one_asked() {
        install_workloads(vec![&ONE]);
        install_workloads(Vec::new());
        assert_eq!(workload("one").map(|d| d.name), Some("one"));
        assert!(workload("two").is_none());
    }
}
