//! The memory this process may lock (mlock): RLIMIT_MEMLOCK (`ulimit -l`, 8 MiB by default
//! for a user), or no limit with CAP_IPC_LOCK. Pinned buffers beyond it cannot be locked:
//! xfer's `state=pinned` points that need more are left out before a run starts.

use crate::probe::privileges::has_capability;
use crate::SysRoot;

/// CAP_IPC_LOCK (linux/capability.h): mlock without a limit.
const CAP_IPC_LOCK: u32 = 14;

/// How to raise the limit, for the run's note and `perflab doctor`'s hint.
pub const RAISE_IT: &str = "raise the locked-memory limit before perflab starts \
    (`ulimit -l unlimited`, or a `memlock` line in /etc/security/limits.conf) or run \
    perflab as root";

/// What this process may lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockedMemory {
    /// A captured tree: whoever runs perflab now is not whoever captured it.
    NotChecked,
    /// CAP_IPC_LOCK is effective: mlock has no limit.
    Capable,
    /// RLIMIT_MEMLOCK is unlimited.
    Unlimited,
    /// At most this many bytes per process (RLIMIT_MEMLOCK's soft limit).
    Limit(u64),
}

impl LockedMemory {
    /// The bytes one process may lock, where there is a limit.
    pub fn limit(self) -> Option<u64> {
        match self {
            LockedMemory::Limit(b) => Some(b),
            _ => None,
        }
    }
}

/// This process's locked-memory limit, on the live machine; `NotChecked` on a tree.
pub fn locked_memory(sys: &SysRoot) -> LockedMemory {
    if !sys.is_host() {
        return LockedMemory::NotChecked;
    }
    if has_capability(sys, CAP_IPC_LOCK) {
        return LockedMemory::Capable;
    }
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the limit into our own struct.
    if unsafe { libc::getrlimit(libc::RLIMIT_MEMLOCK, &mut lim) } != 0
        || lim.rlim_cur == libc::RLIM_INFINITY
    {
        return LockedMemory::Unlimited;
    }
    LockedMemory::Limit(lim.rlim_cur)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tree_is_not_checked_and_the_host_answers() {
        assert_eq!(
            locked_memory(&SysRoot::at("/nonexistent")),
            LockedMemory::NotChecked
        );
        let host = locked_memory(&SysRoot::host());
        assert_ne!(host, LockedMemory::NotChecked);
        assert_eq!(LockedMemory::Limit(8 << 20).limit(), Some(8 << 20));
        assert_eq!(LockedMemory::Capable.limit(), None);
    }
}
