//! `ovs`: both ends' veths are ports of an Open vSwitch bridge. ovs-vswitchd runs in the
//! host namespace and sees only ports there, so this path (alone) creates objects in the
//! host namespace: the bridge and the host ends of the two veth pairs, each journaled.
//!
//! The kernel datapath is tried first; a kernel without the openvswitch module makes
//! ovs-vswitchd refuse it, and the bridge falls back to the user-space (`netdev`)
//! datapath. Which one carried the traffic is published as `net.ovs_datapath`, since the
//! two differ in latency by much more than the paths being compared.

use perflab_core::Unavailable;
use perflab_sys::SysRoot;

use super::build::Built;
use super::cmd::{self, ip};
use super::topology::{address_up, Endpoints, Plan};
use crate::error::KnobError;
use crate::journal::Created;

const HOW_TO_START: &str = "start it: `systemctl start openvswitch-switch` (without systemd: \
                            `/usr/share/openvswitch/scripts/ovs-ctl start`)";

/// Whether Open vSwitch can take a bridge here, and how to make it so if not.
pub fn check() -> Result<(), Unavailable> {
    if cmd::find_tool("ovs-vsctl").is_none() {
        return Err(
            Unavailable::new("Open vSwitch is not installed (no ovs-vsctl)").with_hint(format!(
                "`apt-get install openvswitch-switch`, then {HOW_TO_START}"
            )),
        );
    }
    let db = cmd::run_status("ovs-vsctl", &["--timeout=3", "show"]);
    if !db.as_ref().is_ok_and(|o| o.ok) {
        return Err(
            Unavailable::new("ovsdb-server is not running (`ovs-vsctl show` fails)")
                .with_hint(HOW_TO_START),
        );
    }
    let switchd = cmd::run_status(
        "ovs-appctl",
        &["--timeout=3", "-t", "ovs-vswitchd", "version"],
    );
    if !switchd.as_ref().is_ok_and(|o| o.ok) {
        return Err(Unavailable::new("ovs-vswitchd is not running").with_hint(HOW_TO_START));
    }
    Ok(())
}

fn vsctl(args: &[&str]) -> Result<String, KnobError> {
    let mut all = vec!["--timeout=10"];
    all.extend_from_slice(args);
    cmd::run("ovs-vsctl", &all).map(|s| s.trim().to_string())
}

/// ovs-vswitchd gives an interface an OpenFlow port number once it has set it up.
fn set_up(iface: &str) -> bool {
    vsctl(&["get", "interface", iface, "ofport"])
        .is_ok_and(|p| p.parse::<i64>().is_ok_and(|n| n > 0))
}

pub(crate) fn build(b: &mut Built, plan: &Plan, sys: &SysRoot) -> Result<Endpoints, KnobError> {
    let (srv, cli) = (plan.ns("srv"), plan.ns("cli"));
    b.netns(&srv)?;
    b.netns(&cli)?;
    let br = plan.short("br");
    if vsctl(&["br-exists", &br]).is_ok() {
        return Err(KnobError::Busy {
            path: format!("ovs bridge {br}").into(),
            reason: "it exists already; run `perflab restore`".into(),
        });
    }
    let mut datapath = "system";
    b.create(Created::OvsBridge { name: br.clone() }, || {
        // add-br exits 0 even when ovs-vswitchd could not create the datapath.
        vsctl(&["add-br", &br])?;
        if !set_up(&br) {
            datapath = "netdev";
            vsctl(&["set", "bridge", &br, "datapath_type=netdev"])?;
            if !set_up(&br) {
                return Err(KnobError::Command {
                    cmd: format!("ovs-vsctl add-br {br}"),
                    why: "ovs-vswitchd set up neither the kernel nor the user-space datapath; \
                          see /var/log/openvswitch/ovs-vswitchd.log"
                        .into(),
                });
            }
        }
        Ok(())
    })?;
    for (ns, role, dev) in [(&srv, "s", "srv0"), (&cli, "c", "cli0")] {
        let port = plan.short(role);
        if sys.exists(&format!("sys/class/net/{port}")) {
            return Err(KnobError::Busy {
                path: sys.path(&format!("sys/class/net/{port}")),
                reason: "a link of that name exists already; run `perflab restore`".into(),
            });
        }
        b.create(super::topology::link(ns, dev), || Ok(()))?;
        b.create(
            Created::Link {
                netns: None,
                name: port.clone(),
            },
            || {
                ip(&[
                    "link", "add", &port, "type", "veth", "peer", "name", dev, "netns", ns,
                ])
                .map(drop)
            },
        )?;
        ip(&["link", "set", "dev", &port, "up"])?;
        vsctl(&["add-port", &br, &port])?;
        if !set_up(&port) {
            return Err(KnobError::Command {
                cmd: format!("ovs-vsctl add-port {br} {port}"),
                why: "ovs-vswitchd did not set the port up; see \
                      /var/log/openvswitch/ovs-vswitchd.log"
                    .into(),
            });
        }
    }
    address_up(&srv, "srv0", plan.server())?;
    address_up(&cli, "cli0", plan.client())?;
    let mut ends = Endpoints::pair(plan, &srv, &cli, "srv0", "cli0");
    ends.extra = vec![
        ("net.ovs_bridge".into(), br),
        ("net.ovs_datapath".into(), datapath.into()),
    ];
    Ok(ends)
}
