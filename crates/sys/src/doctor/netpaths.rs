//! The tools `netpath=` variants build with: iproute2's `ip` for every path, and a running
//! Open vSwitch for `netpath=ovs`.

use std::path::PathBuf;
use std::process::Command;

use super::{Check, NOT_CHECKED, RUN_ON_HOST};
use crate::ovs_db::OvsDbFailure;
use crate::root::SysRoot;
use crate::tools::find_tool;

const OVS_START: &str = "systemctl start openvswitch-switch (without systemd: \
                         /usr/share/openvswitch/scripts/ovs-ctl start)";

/// The tool's stdout when it exits 0, else its stderr. Every call passes the tool's own
/// timeout option, so none can hang on a dead daemon.
fn run(tool: &PathBuf, args: &[&str]) -> Result<String, String> {
    let out = Command::new(tool)
        .args(args)
        .output()
        .map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
    }
}

fn run_ok(tool: &PathBuf, args: &[&str]) -> Option<String> {
    run(tool, args).ok()
}

/// The openvswitch row when `ovs-vsctl` cannot reach the database: a user who may not
/// open the socket is told so (run as root), not to start a daemon that runs already.
fn db_unreachable(stderr: &str) -> Check {
    let why = OvsDbFailure::from_stderr(stderr);
    let remedy = if why.needs_start() {
        OVS_START.to_string()
    } else {
        "run perflab as root (sudo) for netpath=ovs".to_string()
    };
    Check::partial(
        "openvswitch",
        format!("installed; {}: netpath=ovs is unavailable", why.reason()),
        remedy,
    )
}

pub(super) fn ip_tool(sys: &SysRoot) -> Check {
    const NAME: &str = "ip tool";
    if !sys.is_host() {
        return Check::partial(NAME, format!("iproute2 {NOT_CHECKED}"), RUN_ON_HOST);
    }
    let Some(ip) = find_tool("ip") else {
        return Check::missing(
            NAME,
            "no `ip` (iproute2): netpath= variants cannot build namespaces and links",
            "apt-get install iproute2",
        );
    };
    let version = run_ok(&ip, &["-V"]).unwrap_or_else(|| "version unknown".into());
    Check::ok(NAME, format!("{} ({version})", ip.display()))
}

pub(super) fn openvswitch(sys: &SysRoot) -> Check {
    const NAME: &str = "openvswitch";
    if !sys.is_host() {
        return Check::partial(NAME, format!("Open vSwitch {NOT_CHECKED}"), RUN_ON_HOST);
    }
    let Some(vsctl) = find_tool("ovs-vsctl") else {
        return Check::missing(
            NAME,
            "not installed: netpath=ovs is unavailable",
            format!("apt-get install openvswitch-switch, then {OVS_START}"),
        );
    };
    let version = match run(
        &vsctl,
        &["--timeout=2", "get", "Open_vSwitch", ".", "ovs_version"],
    ) {
        Ok(version) => version,
        Err(stderr) => return db_unreachable(&stderr),
    };
    let switchd = find_tool("ovs-appctl")
        .and_then(|appctl| run_ok(&appctl, &["--timeout=2", "-t", "ovs-vswitchd", "version"]));
    if switchd.is_none() {
        return Check::partial(
            NAME,
            "ovsdb-server runs, but ovs-vswitchd does not: netpath=ovs is unavailable",
            OVS_START,
        );
    }
    Check::ok(
        NAME,
        format!(
            "Open vSwitch {} running (ovsdb-server and ovs-vswitchd)",
            version.trim_matches('"')
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doctor::Status;

    #[test]
    fn a_user_who_may_not_open_the_socket_is_told_so_not_to_start_ovs() {
        let check = db_unreachable(
            "ovs-vsctl: unix:/var/run/openvswitch/db.sock: database connection failed (Permission denied)",
        );
        assert_eq!(check.status, Status::Partial);
        assert!(
            check.detail.contains("permission denied"),
            "{}",
            check.detail
        );
        assert!(!check.detail.contains("not running"), "{}", check.detail);
        let stopped = db_unreachable(
            "ovs-vsctl: unix:/var/run/openvswitch/db.sock: database connection failed (No such file or directory)",
        );
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
