//! A 2 MiB hugetlb pool for tests, the perflab way: the `hugepages` knob, journaled in
//! perflab's journal before the pool changes and given back when the reservation drops
//! (a failed assertion unwinds through it too); after a hard kill `perflab restore`
//! replays the journal. Only the pages missing from the free pool are reserved, so a
//! machine that has a pool already is left as it is.

use perflab_core::SysRoot;
use perflab_knobs::{parse_setting, AppliedVariant, Journal, Settings};

const FREE: &str = "/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages";

/// Free 2 MiB pages now.
pub fn free_pages() -> u64 {
    std::fs::read_to_string(FREE)
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0)
}

/// Holds the pages reserved (nothing when the pool had them free); restores on drop.
pub struct Reserved {
    _applied: Option<AppliedVariant>,
}

/// `pages` free 2 MiB pages for as long as the result lives, or why they cannot be had:
/// not root, no pool, not enough memory (the knob's own reasons, one line).
pub fn reserve(pages: u64) -> Result<Reserved, String> {
    let missing = pages.saturating_sub(free_pages());
    if missing == 0 {
        return Ok(Reserved { _applied: None });
    }
    if !perflab_testkit::is_root() {
        return Err(format!(
            "{missing} more free 2 MiB hugetlb pages needed, and only root can reserve them"
        ));
    }
    let knob = parse_setting(&format!("hugepages=2M:{missing}")).map_err(|e| e.to_string())?;
    let journal = Journal::open(Journal::default_path()).map_err(|e| e.to_string())?;
    let applied = Settings::new(vec![knob])
        .apply(&SysRoot::host(), &journal)
        .map_err(|e| e.to_string())?;
    if free_pages() < pages {
        // Another process took them meanwhile; `applied` gives back what was added.
        return Err(format!(
            "reserved {missing} 2 MiB pages, but only {} are free",
            free_pages()
        ));
    }
    Ok(Reserved {
        _applied: Some(applied),
    })
}
