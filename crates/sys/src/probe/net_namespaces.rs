//! Network namespaces, which every `netpath=` variant builds its topology in.

use super::privileges::{privileges, Privileges};
use crate::SysRoot;

/// Whether this process can make a network namespace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NetNamespaces {
    /// No /proc/self/ns/net: a kernel without CONFIG_NET_NS.
    Absent,
    /// The kernel has them; whether this process may make one is asked of the live
    /// machine only.
    NotChecked,
    /// unshare(CLONE_NEWNET) is allowed (root or CAP_SYS_ADMIN).
    Allowed,
    /// The kernel has them, but making one needs CAP_SYS_ADMIN.
    NeedsCapSysAdmin,
}

/// Whether namespaces exist and may be made. unshare itself is not tried: it would move
/// this process into a new namespace.
pub fn net_namespaces(sys: &SysRoot) -> NetNamespaces {
    if !sys.exists("proc/self/ns/net") {
        return NetNamespaces::Absent;
    }
    match privileges(sys) {
        Privileges::NotChecked => NetNamespaces::NotChecked,
        p if p.allowed() => NetNamespaces::Allowed,
        _ => NetNamespaces::NeedsCapSysAdmin,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tree_says_whether_the_kernel_has_them_and_no_more() {
        let dir = tempfile::tempdir().unwrap();
        let sys = SysRoot::at(dir.path());
        assert_eq!(net_namespaces(&sys), NetNamespaces::Absent);
        std::fs::create_dir_all(sys.path("proc/self/ns")).unwrap();
        std::fs::write(sys.path("proc/self/ns/net"), b"").unwrap();
        assert_eq!(net_namespaces(&sys), NetNamespaces::NotChecked);
    }
}
