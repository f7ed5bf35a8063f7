//! `ovs`: both ends' veths are ports of an Open vSwitch bridge. ovs-vswitchd runs in the
//! host namespace and sees only ports there, so this path (alone) creates objects in the
//! host namespace: the bridge and the host ends of the two veth pairs, each journaled.
//!
//! The kernel datapath is tried first; a kernel without the openvswitch module makes
//! ovs-vswitchd refuse it, and the bridge falls back to the user-space (`netdev`)
//! datapath. Which one carried the traffic is published as `net.ovs_datapath`, since the
//! two differ in latency by much more than the paths being compared.

use perflab_core::Unavailable;
use perflab_sys::probe::openvswitch::{openvswitch, Ovs};
use perflab_sys::SysRoot;

use super::build::Built;
use super::cmd::{self, ip};
use super::topology::{address_up, Endpoints, Plan};
use crate::error::KnobError;
use crate::journal::Created;

const HOW_TO_START: &str = "start it: `systemctl start openvswitch-switch` (without systemd: \
                            `/usr/share/openvswitch/scripts/ovs-ctl start`)";

/// Whether Open vSwitch can take a bridge here, and how to make it so if not: the probe
/// `perflab doctor`'s openvswitch line renders.
pub fn check(sys: &SysRoot) -> Result<(), Unavailable> {
    match openvswitch(sys) {
        Ovs::Running { .. } => Ok(()),
        Ovs::NotChecked => Err(Unavailable::new(format!(
            "Open vSwitch is asked of the live machine only, not of the tree at {}",
            sys.root().display()
        ))),
        Ovs::NotInstalled => Err(
            Unavailable::new("Open vSwitch is not installed (no ovs-vsctl)").with_hint(format!(
                "`apt-get install openvswitch-switch`, then {HOW_TO_START}"
            )),
        ),
        Ovs::DbUnreachable(why) => {
            let hint = if why.needs_start() {
                HOW_TO_START
            } else {
                "run perflab as root (sudo) for netpath=ovs"
            };
            Err(Unavailable::new(why.reason()).with_hint(hint))
        }
        Ovs::NoSwitchd => {
            Err(Unavailable::new("ovs-vswitchd is not running").with_hint(HOW_TO_START))
        }
    }
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
    let (br, datapath) = bridge(b, plan)?;
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
        add_port(&br, &port)?;
    }
    if datapath == "netdev" {
        for (ns, dev) in [(&srv, "srv0"), (&cli, "cli0")] {
            tx_checksum_off(ns, dev)?;
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

/// Creates the path's bridge (journaled): the kernel datapath where ovs-vswitchd can make
/// it, else the user-space one. Returns its name and the datapath used.
pub(crate) fn bridge(b: &mut Built, plan: &Plan) -> Result<(String, &'static str), KnobError> {
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
    Ok((br, datapath))
}

/// Adds a host-namespace interface to the bridge and waits for ovs-vswitchd to take it.
pub(crate) fn add_port(br: &str, port: &str) -> Result<(), KnobError> {
    vsctl(&["add-port", br, port])?;
    if set_up(port) {
        Ok(())
    } else {
        Err(KnobError::Command {
            cmd: format!("ovs-vsctl add-port {br} {port}"),
            why: "ovs-vswitchd did not set the port up; see \
                  /var/log/openvswitch/ovs-vswitchd.log"
                .into(),
        })
    }
}

/// The user-space datapath reads frames from the veth with a packet socket and writes
/// them out as they are; a veth that leaves the checksum to "hardware" hands it frames
/// whose UDP and TCP checksums are unfinished, and the receiver drops them
/// (`InCsumErrors`). `ethtool -K DEV tx off`, done with the ioctl, as ethtool may be
/// missing. The link is perflab's and dies with the path, so nothing is journaled.
pub(crate) fn tx_checksum_off(ns: &str, dev: &str) -> Result<(), KnobError> {
    const ETHTOOL_STXCSUM: u32 = 0x17;
    #[repr(C)]
    struct EthtoolValue {
        cmd: u32,
        data: u32,
    }
    let fail = |why: String| KnobError::Command {
        cmd: format!("ethtool -K {dev} tx off (in {ns})"),
        why,
    };
    let bytes = dev.as_bytes();
    if bytes.len() >= libc::IFNAMSIZ {
        return Err(fail(format!("{dev:?} is not a valid interface name")));
    }
    let done = super::netns::in_netns(&super::netns::netns_path(ns), || -> std::io::Result<()> {
        let sock = std::net::UdpSocket::bind("0.0.0.0:0")?;
        let mut value = EthtoolValue {
            cmd: ETHTOOL_STXCSUM,
            data: 0,
        };
        // SAFETY: ifreq is plain old data; all zeroes is a valid value.
        let mut ifr: libc::ifreq = unsafe { std::mem::zeroed() };
        for (dst, src) in ifr.ifr_name.iter_mut().zip(bytes) {
            *dst = *src as libc::c_char;
        }
        ifr.ifr_ifru.ifru_data = (&mut value as *mut EthtoolValue).cast();
        use std::os::fd::AsRawFd;
        // SAFETY: `ifr` points at a live ethtool_value for the duration of the call.
        if unsafe { libc::ioctl(sock.as_raw_fd(), libc::SIOCETHTOOL, &mut ifr) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    });
    match done {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) | Err(e) => Err(fail(e.to_string())),
    }
}
