//! Root or CAP_SYS_ADMIN: what writing /sys, holding PM QoS, making namespaces and ftrace
//! instances need.

use crate::SysRoot;

/// What this process may do, as far as perflab's knobs and monitors care.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Privileges {
    /// A captured tree: whoever runs perflab now is not whoever captured it.
    NotChecked,
    Root,
    /// Not root, but CAP_SYS_ADMIN is in the effective set.
    CapSysAdmin,
    Unprivileged,
}

impl Privileges {
    /// Root or CAP_SYS_ADMIN on the live machine.
    pub fn allowed(self) -> bool {
        matches!(self, Privileges::Root | Privileges::CapSysAdmin)
    }
}

/// This process's privileges, on the live machine; `NotChecked` on a tree.
pub fn privileges(sys: &SysRoot) -> Privileges {
    if !sys.is_host() {
        Privileges::NotChecked
    } else if is_root() {
        Privileges::Root
    } else if has_cap_sys_admin(sys) {
        Privileges::CapSysAdmin
    } else {
        Privileges::Unprivileged
    }
}

/// Whether the effective uid is 0.
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Whether this process has CAP_SYS_ADMIN in its effective set (bit 21 of CapEff in
/// /proc/self/status).
pub fn has_cap_sys_admin(sys: &SysRoot) -> bool {
    const CAP_SYS_ADMIN: u32 = 21;
    has_capability(sys, CAP_SYS_ADMIN)
}

/// Whether capability number `cap` (linux/capability.h) is in this process's effective
/// set, bit `cap` of CapEff in /proc/self/status.
pub fn has_capability(sys: &SysRoot, cap: u32) -> bool {
    sys.read_string("proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("CapEff:"))
                .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        })
        .is_some_and(|caps| caps & (1 << cap) != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tree_is_not_checked_and_the_host_follows_the_effective_uid() {
        assert_eq!(
            privileges(&SysRoot::at("/nonexistent")),
            Privileges::NotChecked
        );
        let host = privileges(&SysRoot::host());
        assert_eq!(host == Privileges::Root, is_root(), "{host:?}");
        assert!(!Privileges::NotChecked.allowed() && Privileges::CapSysAdmin.allowed());
    }

    #[test]
    fn cap_sys_admin_is_bit_21_of_cap_eff() {
        let dir = tempfile::tempdir().unwrap();
        let sys = SysRoot::at(dir.path());
        std::fs::create_dir_all(dir.path().join("proc/self")).unwrap();
        std::fs::write(sys.path("proc/self/status"), "CapEff:\t0000000000200000\n").unwrap();
        assert!(has_cap_sys_admin(&sys));
        std::fs::write(sys.path("proc/self/status"), "CapEff:\t00000000001fffff\n").unwrap();
        assert!(!has_cap_sys_admin(&sys));
    }
}
