//! `netpath=NAME`: a network path between a server and a client, each in a network
//! namespace perflab makes, for workloads that measure request/response over it.
//!
//! The guard publishes where the ends are (`net.server_netns`, `net.server_addr`,
//! `net.server_dev`, the same for the client, and `net.path`); a workload enters a
//! namespace with `setns(2)` on the `net.*_netns` file (see [`in_netns`]). Every
//! namespace, link and bridge is journaled before it is created and removed newest first
//! on restore, on drop, on a failure part way, and by `perflab restore` after a kill.
//!
//! Building needs root (CAP_NET_ADMIN, and CAP_SYS_ADMIN for the namespaces' mounts), the
//! `ip` tool, and the kernel's link type for the path, which `check` asks the kernel about
//! in a private namespace, so a kernel without, say, ipvlan makes the variant unavailable
//! with the reason instead of failing half built.

use perflab_core::{Descriptor, Kind, Need, Needs, ParamKind, ParamSpec, ReportHints};
use std::sync::atomic::{AtomicU64, Ordering};

use perflab_core::Unavailable;
use perflab_sys::probe::net_namespaces::NetNamespaces;
use perflab_sys::SysRoot;

use crate::error::KnobError;
use crate::journal::Journal;
use crate::knob::{Knob, KnobGuard};

mod addr;
mod bridge;
mod build;
mod cmd;
mod forwarder;
mod ipvlan;
mod kind;
mod loopback;
mod macvlan;
mod netns;
mod nic;
mod ovs;
mod probe;
mod tap;
mod topology;
pub(crate) mod undo;
mod veth;
mod vfio;
mod vm;

pub use addr::{choose_subnet, parse_routes, Route};
pub use kind::PathKind;
pub use netns::{in_netns, netns_path, NETNS_DIR};

use build::Built;
use topology::{Endpoints, Plan};

pub static DESCRIPTOR: Descriptor = Descriptor {
    kind: Kind::Knob,
    name: "netpath",
    // A static string (descriptors are data); a test below keeps it naming every PathKind.
    help: "a network path perflab builds in namespaces (root): loopback, veth, bridge, macvlan, \
           ipvlan, tap, ovs; or to a QEMU guest it boots: vm-tap, vm-tap-novhost, vm-macvtap, \
           vm-ovs, vm-vfio",
    params: &[ParamSpec {
        name: "value",
        role: perflab_core::ParamRole::Plain,
        help: "the path kind; vm-* paths end in a guest",
        kind: ParamKind::Text { max_len: 64 },
        default: None,
    }],
    // Every path needs namespaces and ip; ovs and the vm-* paths need more.
    needs: Needs {
        all: &[Need::Privileges, Need::NetNamespaces, Need::IpTool],
        some: &[
            Need::OpenVswitch,
            Need::VmGuest,
            Need::VmAccelerator,
            Need::VhostNet,
        ],
    },
    report: ReportHints::None,
};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NetPathKnob {
    pub kind: PathKind,
    fail_at: Option<usize>,
}

/// Tells apart the paths one process builds (tests build several at once).
static SEQ: AtomicU64 = AtomicU64::new(0);

impl NetPathKnob {
    pub fn parse(value: &str) -> Result<Self, KnobError> {
        Ok(Self {
            kind: PathKind::parse(value)?,
            fail_at: None,
        })
    }

    /// For tests of the failure paths: building fails as if the kernel refused the
    /// object with this index (0 is the first namespace), after journaling it.
    #[doc(hidden)]
    pub fn failing_at(mut self, index: usize) -> Self {
        self.fail_at = Some(index);
        self
    }
}

impl Knob for NetPathKnob {
    fn name(&self) -> String {
        format!("netpath={}", self.kind.name())
    }

    fn check(&self, sys: &SysRoot) -> Result<(), Unavailable> {
        if !sys.is_host() {
            return Err(Unavailable::new(format!(
                "network paths are built on the live machine only, not on the tree at {}",
                sys.root().display()
            )));
        }
        // The probes `perflab doctor`'s privileges and network namespaces lines render.
        if !perflab_sys::probe::privileges::is_root() {
            return Err(Unavailable::new("needs root (CAP_NET_ADMIN)")
                .with_hint("run perflab as root for network-path variants"));
        }
        if perflab_sys::probe::net_namespaces::net_namespaces(sys) == NetNamespaces::Absent {
            return Err(Unavailable::new("the kernel has no network namespaces")
                .with_hint("use a kernel with CONFIG_NET_NS=y"));
        }
        if perflab_sys::probe::tools::find_tool("ip").is_none() {
            return Err(probe::no_ip());
        }
        for kind in self.kind.link_types() {
            probe::link_type(kind)?;
        }
        match self.kind {
            PathKind::Tap | PathKind::VmTap | PathKind::VmTapNovhost | PathKind::VmOvs
                if !sys.exists(tap::TUN_PATH) =>
            {
                Err(Unavailable::new(format!(
                    "{} is missing: the kernel has no tun/tap",
                    sys.path(tap::TUN_PATH).display()
                ))
                .with_hint("`modprobe tun`, or use a kernel built with CONFIG_TUN"))
            }
            PathKind::Ovs => ovs::check(sys),
            kind if kind.is_vm() => vm::check(sys, kind),
            _ => Ok(()),
        }
    }

    fn apply(&self, sys: &SysRoot, journal: &Journal) -> Result<Box<dyn KnobGuard>, KnobError> {
        let plan = Plan::new(
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed),
            choose_subnet(sys),
        );
        let mut built = Built::new(sys, journal, &self.name(), self.fail_at);
        let ends = match self.build(&mut built, &plan, sys) {
            Ok(ends) => ends,
            Err(e) => return Err(built.abandon(e)),
        };
        let mut guard = NetPathGuard {
            facts: ends.facts(self.kind.name()),
            forwarder: None,
            built: Some(built),
        };
        let probed = if self.kind.is_vm() {
            probe::tcp(&ends)
        } else {
            probe::udp(&ends)
        };
        guard.forwarder = ends.forwarder;
        match probed {
            Ok(()) => Ok(Box::new(guard)),
            Err(e) => Err(match guard.undo() {
                Ok(()) => e,
                Err(restore) => KnobError::ApplyAndRestore {
                    apply: Box::new(e),
                    restore: Box::new(restore),
                },
            }),
        }
    }
}

impl NetPathKnob {
    fn build(&self, b: &mut Built, plan: &Plan, sys: &SysRoot) -> Result<Endpoints, KnobError> {
        match self.kind {
            PathKind::Loopback => loopback::build(b, plan),
            PathKind::Veth => veth::build(b, plan),
            PathKind::Bridge => bridge::build(b, plan),
            PathKind::Macvlan => macvlan::build(b, plan),
            PathKind::Ipvlan => ipvlan::build(b, plan),
            PathKind::Tap => tap::build(b, plan, sys),
            PathKind::Ovs => ovs::build(b, plan, sys),
            kind => vm::build(b, plan, sys, kind),
        }
    }
}

/// Holds a built path; tears it down (forwarder first, then the objects, newest first).
pub struct NetPathGuard {
    facts: Vec<(String, String)>,
    forwarder: Option<forwarder::Forwarder>,
    built: Option<Built>,
}

impl NetPathGuard {
    fn undo(&mut self) -> Result<(), KnobError> {
        let mut failures = Vec::new();
        if let Some(mut fwd) = self.forwarder.take() {
            if let Err(e) = fwd.stop() {
                failures.push(e.to_string());
            }
        }
        if let Some(mut built) = self.built.take() {
            match built.teardown() {
                Ok(()) => {}
                Err(KnobError::Restore { failures: f }) => failures.extend(f),
                Err(e) => failures.push(e.to_string()),
            }
        }
        if failures.is_empty() {
            Ok(())
        } else {
            Err(KnobError::Restore { failures })
        }
    }
}

impl KnobGuard for NetPathGuard {
    fn restore(mut self: Box<Self>) -> Result<(), KnobError> {
        self.undo()
    }

    fn facts(&self) -> Vec<(String, String)> {
        self.facts.clone()
    }
}

impl Drop for NetPathGuard {
    fn drop(&mut self) {
        if let Err(e) = self.undo() {
            eprintln!("perflab: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_knob_help_names_every_path_the_knob_takes() {
        for kind in PathKind::ALL {
            let listed = DESCRIPTOR
                .help
                .split([':', ',', ';'])
                .any(|w| w.split_whitespace().last() == Some(kind.name()));
            assert!(listed, "{} missing from: {}", kind.name(), DESCRIPTOR.help);
        }
    }

    #[test]
    fn names_round_trip_and_unknown_ones_list_the_valid() {
        for kind in PathKind::ALL {
            assert_eq!(PathKind::parse(kind.name()).unwrap(), kind);
        }
        let e = NetPathKnob::parse("vxlan").unwrap_err().to_string();
        assert!(
            e.contains("loopback, veth, bridge, macvlan, ipvlan, tap, ovs, vm-tap, vm-tap-novhost, vm-macvtap, vm-ovs, vm-vfio"),
            "{e}"
        );
        assert!(!e.contains('\n'));
    }

    #[test]
    fn short_names_fit_an_interface_name() {
        let plan = Plan::new(4_194_304, 123_456_789, [10, 213, 0]);
        for suffix in ["br", "s", "c"] {
            assert!(plan.short(suffix).len() <= 15, "{}", plan.short(suffix));
        }
        assert_eq!(plan.ns("srv"), "perflab-4194304-123456789-srv");
    }

    #[test]
    fn a_fixture_tree_is_refused() {
        let k = NetPathKnob::parse("veth").unwrap();
        let why = k.check(&SysRoot::at("/nonexistent")).unwrap_err().reason;
        assert!(why.contains("live machine"), "{why}");
    }
}
