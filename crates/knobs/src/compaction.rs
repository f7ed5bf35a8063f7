//! Growing a huge page pool on a machine whose free memory is fragmented: the kernel finds
//! fewer contiguous free blocks than pages asked for, though enough memory is free. Asking
//! it to compact memory (`/proc/sys/vm/compact_memory`) moves movable pages together, and
//! asking for the pool size again then often gets the rest.
//!
//! Compaction changes no setting (the file is a trigger, it reads back nothing to
//! restore), so it is not journaled. Dropping the page cache would free more, but it
//! throws away other processes' cached data: perflab does not do that for anyone.

use perflab_sys::{SysError, SysRoot};

/// The trigger: writing 1 compacts all zones, synchronously.
pub const COMPACT_MEMORY: &str = "proc/sys/vm/compact_memory";

/// How many times memory is compacted before a short pool is given up.
pub const ATTEMPTS: u32 = 3;

/// What growing the pool came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grown {
    /// The pool's size as read back after the last attempt.
    pub now: u64,
    /// Times memory was compacted (0: the first write was enough, or it cannot be).
    pub compactions: u32,
}

/// Writes `target` to the pool size `rel` and reads back with `observe` what the kernel
/// allocated; while that is short of `target`, compacts memory and asks again, up to
/// [`ATTEMPTS`] times. A machine where compaction cannot be asked for (no such file, not
/// root, a test tree without it) gets the first answer.
pub fn grow_pool(
    sys: &SysRoot,
    rel: &str,
    target: u64,
    observe: impl Fn(&SysRoot, &str) -> Result<u64, SysError>,
) -> Result<Grown, SysError> {
    let value = target.to_string();
    sys.write(rel, value.as_bytes())?;
    let mut grown = Grown {
        now: observe(sys, rel)?,
        compactions: 0,
    };
    while grown.now < target && grown.compactions < ATTEMPTS {
        if sys.write(COMPACT_MEMORY, b"1").is_err() {
            break;
        }
        grown.compactions += 1;
        sys.write(rel, value.as_bytes())?;
        grown.now = observe(sys, rel)?;
    }
    Ok(grown)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    fn tree(with_compact: bool) -> (tempfile::TempDir, SysRoot) {
        let dir = tempfile::tempdir().unwrap();
        let sys = SysRoot::at(dir.path());
        std::fs::create_dir_all(sys.path("pool")).unwrap();
        std::fs::write(sys.path("pool/nr"), "0\n").unwrap();
        if with_compact {
            std::fs::create_dir_all(sys.path("proc/sys/vm")).unwrap();
            std::fs::write(sys.path(COMPACT_MEMORY), "").unwrap();
        }
        (dir, sys)
    }

    /// The kernel finds 3 of 4 pages until memory was compacted, then all 4.
    #[test]
    fn a_short_pool_is_compacted_and_asked_again() {
        let (_dir, sys) = tree(true);
        let compacted = |sys: &SysRoot| std::fs::read(sys.path(COMPACT_MEMORY)).unwrap() == b"1";
        let grown = grow_pool(&sys, "pool/nr", 4, |sys, _| {
            Ok(if compacted(sys) { 4 } else { 3 })
        })
        .unwrap();
        assert_eq!(
            grown,
            Grown {
                now: 4,
                compactions: 1
            }
        );
        assert_eq!(std::fs::read(sys.path("pool/nr")).unwrap(), b"4");
    }

    #[test]
    fn compaction_is_tried_a_bounded_number_of_times_and_the_count_is_told() {
        let (_dir, sys) = tree(true);
        let asked = Cell::new(0);
        let grown = grow_pool(&sys, "pool/nr", 4, |_, _| {
            asked.set(asked.get() + 1);
            Ok(3)
        })
        .unwrap();
        assert_eq!(
            grown,
            Grown {
                now: 3,
                compactions: ATTEMPTS
            }
        );
        assert_eq!(asked.get(), 1 + ATTEMPTS);
    }

    #[test]
    fn a_full_pool_is_not_compacted_and_no_trigger_means_the_first_answer() {
        let (_dir, sys) = tree(true);
        let grown = grow_pool(&sys, "pool/nr", 4, |_, _| Ok(4)).unwrap();
        assert_eq!(grown.compactions, 0);
        assert_eq!(std::fs::read(sys.path(COMPACT_MEMORY)).unwrap(), b"");
        let (_dir, sys) = tree(false);
        let grown = grow_pool(&sys, "pool/nr", 4, |_, _| Ok(3)).unwrap();
        assert_eq!(
            grown,
            Grown {
                now: 3,
                compactions: 0
            }
        );
    }
}
