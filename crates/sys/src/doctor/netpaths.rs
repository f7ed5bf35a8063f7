//! The tools `netpath=` variants build with: iproute2's `ip` for every path, and a running
//! Open vSwitch for `netpath=ovs`.

use perflab_core::Need;

use super::check::{Check, NOT_CHECKED, RUN_ON_HOST};
use crate::ovs_db::OvsDbFailure;
use crate::probe::ip_tool::{ip_tool as probe_ip, IpTool};
use crate::probe::openvswitch::{openvswitch as probe_ovs, Ovs};
use crate::root::SysRoot;

const OVS_START: &str = "systemctl start openvswitch-switch (without systemd: \
                         /usr/share/openvswitch/scripts/ovs-ctl start)";

/// The openvswitch row when `ovs-vsctl` cannot reach the database: a user who may not
/// open the socket is told so (run as root), not to start a daemon that runs already.
fn db_unreachable(why: &OvsDbFailure) -> Check {
    let remedy = if why.needs_start() {
        OVS_START.to_string()
    } else {
        "run perflab as root (sudo) for netpath=ovs".to_string()
    };
    Check::partial(
        Need::OpenVswitch,
        format!("installed; {}: netpath=ovs is unavailable", why.reason()),
        remedy,
    )
}

pub(super) fn ip_tool(sys: &SysRoot) -> Check {
    const NAME: Need = Need::IpTool;
    match probe_ip(sys) {
        IpTool::NotChecked => Check::partial(NAME, format!("iproute2 {NOT_CHECKED}"), RUN_ON_HOST),
        IpTool::Missing => Check::missing(
            NAME,
            "no `ip` (iproute2): netpath= variants cannot build namespaces and links",
            "apt-get install iproute2",
        ),
        IpTool::Found { path, version } => {
            Check::ok(NAME, format!("{} ({version})", path.display()))
        }
    }
}

pub(super) fn openvswitch(sys: &SysRoot) -> Check {
    const NAME: Need = Need::OpenVswitch;
    match probe_ovs(sys) {
        Ovs::NotChecked => Check::partial(NAME, format!("Open vSwitch {NOT_CHECKED}"), RUN_ON_HOST),
        Ovs::NotInstalled => Check::missing(
            NAME,
            "not installed: netpath=ovs is unavailable",
            format!("apt-get install openvswitch-switch, then {OVS_START}"),
        ),
        Ovs::DbUnreachable(why) => db_unreachable(&why),
        Ovs::NoSwitchd => Check::partial(
            NAME,
            "ovsdb-server runs, but ovs-vswitchd does not: netpath=ovs is unavailable",
            OVS_START,
        ),
        Ovs::Running { version } => Check::ok(
            NAME,
            format!("Open vSwitch {version} running (ovsdb-server and ovs-vswitchd)"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doctor::Status;
    use crate::probe::tools::find_tool;

    #[test]
    fn a_user_who_may_not_open_the_socket_is_told_so_not_to_start_ovs() {
        let check = db_unreachable(&OvsDbFailure::from_stderr(
            "ovs-vsctl: unix:/var/run/openvswitch/db.sock: database connection failed (Permission denied)",
        ));
        assert_eq!(check.status, Status::Partial);
        assert!(
            check.detail.contains("permission denied"),
            "{}",
            check.detail
        );
        assert!(!check.detail.contains("not running"), "{}", check.detail);
        let stopped = db_unreachable(&OvsDbFailure::from_stderr(
            "ovs-vsctl: unix:/var/run/openvswitch/db.sock: database connection failed (No such file or directory)",
        ));
        assert!(stopped.detail.contains("not running"), "{}", stopped.detail);
    }

    #[test]
    fn a_fixture_tree_is_not_checked_and_says_where_to_run() {
        let tree = SysRoot::at("/nonexistent");
        for check in [ip_tool(&tree), openvswitch(&tree)] {
            assert_eq!(check.status, Status::Partial);
            assert!(check.detail.contains(NOT_CHECKED), "{}", check.detail);
            assert_eq!(check.hint.as_deref(), Some(RUN_ON_HOST));
        }
    }

    #[test]
    fn on_the_host_the_verdicts_follow_what_is_installed() {
        let host = SysRoot::host();
        let ip = ip_tool(&host);
        assert_eq!(ip.status == Status::Ok, find_tool("ip").is_some(), "{ip:?}");
        let ovs = openvswitch(&host);
        if find_tool("ovs-vsctl").is_none() {
            assert_eq!(ovs.status, Status::Missing);
            assert!(ovs
                .hint
                .unwrap()
                .contains("apt-get install openvswitch-switch"));
        } else if ovs.status != Status::Ok {
            assert!(ovs
                .hint
                .unwrap()
                .contains("systemctl start openvswitch-switch"));
        }
    }
}
