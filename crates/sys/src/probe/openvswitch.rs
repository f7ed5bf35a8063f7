//! Open vSwitch, which `netpath=ovs` and `netpath=vm-ovs` bridge through: installed, its
//! database reachable (ovsdb-server), and its switch daemon (ovs-vswitchd) running.

use super::tools::{ask, find_tool};
use crate::ovs_db::OvsDbFailure;
use crate::SysRoot;

/// How far Open vSwitch is usable here.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ovs {
    /// A captured tree: the daemons of another machine are not here to ask.
    NotChecked,
    /// No `ovs-vsctl`.
    NotInstalled,
    /// `ovs-vsctl` cannot reach the database, and why.
    DbUnreachable(OvsDbFailure),
    /// ovsdb-server answers, ovs-vswitchd does not.
    NoSwitchd,
    /// Both run; the version the database gives.
    Running { version: String },
}

/// Whether Open vSwitch can take a bridge on the live machine. Every call passes the
/// tool's own timeout option, so none hangs on a dead daemon.
pub fn openvswitch(sys: &SysRoot) -> Ovs {
    if !sys.is_host() {
        return Ovs::NotChecked;
    }
    let Some(vsctl) = find_tool("ovs-vsctl") else {
        return Ovs::NotInstalled;
    };
    let version = match ask(
        &vsctl,
        &["--timeout=2", "get", "Open_vSwitch", ".", "ovs_version"],
    ) {
        Ok(version) => version.trim_matches('"').to_string(),
        Err(stderr) => return Ovs::DbUnreachable(OvsDbFailure::from_stderr(&stderr)),
    };
    let switchd = find_tool("ovs-appctl")
        .and_then(|appctl| ask(&appctl, &["--timeout=2", "-t", "ovs-vswitchd", "version"]).ok());
    match switchd {
        Some(_) => Ovs::Running { version },
        None => Ovs::NoSwitchd,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tree_is_not_checked_and_the_host_follows_what_is_installed() {
        assert_eq!(openvswitch(&SysRoot::at("/nonexistent")), Ovs::NotChecked);
        let host = openvswitch(&SysRoot::host());
        assert_eq!(
            host == Ovs::NotInstalled,
            find_tool("ovs-vsctl").is_none(),
            "{host:?}"
        );
    }
}
