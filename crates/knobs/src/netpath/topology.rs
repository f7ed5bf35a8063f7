//! The pieces every path kind is built from: its names, its addresses, and the `ip`
//! operations that create namespaces, veth pairs and addresses through [`Built`], so each
//! object is journaled before it exists.

use std::net::Ipv4Addr;

use perflab_core::{GuestPeer, NetEnd, NetPathFacts, NetServer};

use super::build::Built;
use super::cmd::{ip, ip_in};
use super::forwarder::Forwarder;
use super::netns::netns_path;
use crate::error::KnobError;
use crate::journal::Created;

/// The names and addresses of one path being built.
pub(crate) struct Plan {
    /// `perflab-<pid>-<n>`: the pid lets `perflab restore` and a person tell whose
    /// namespaces these are; `n` tells apart the paths of one process.
    pub base: String,
    /// `pl<pid>-<n mod 1000>`: room for a suffix within the 15 bytes of an interface
    /// name, for the objects that live in the host namespace (OVS).
    pub short_base: String,
    /// The /24 both ends get an address in: `a.b.c.1` the server, `a.b.c.2` the client.
    pub subnet: [u8; 3],
}

impl Plan {
    pub fn ns(&self, role: &str) -> String {
        format!("{}-{role}", self.base)
    }

    pub fn new(pid: u32, seq: u64, subnet: [u8; 3]) -> Self {
        Self {
            base: format!("perflab-{pid}-{seq}"),
            short_base: format!("pl{pid}-{}", seq % 1000),
            subnet,
        }
    }

    /// A host-namespace interface name: at most 7 + 3 + 3 + 2 = 15 bytes for a
    /// two-byte suffix (pids stay below 2^22).
    pub fn short(&self, suffix: &str) -> String {
        format!("{}{suffix}", self.short_base)
    }

    pub fn server(&self) -> Ipv4Addr {
        let [a, b, c] = self.subnet;
        Ipv4Addr::new(a, b, c, 1)
    }

    pub fn client(&self) -> Ipv4Addr {
        let [a, b, c] = self.subnet;
        Ipv4Addr::new(a, b, c, 2)
    }
}

/// What a built path offers the workload: both ends' namespace, interface and address.
pub(crate) struct Endpoints {
    pub server_ns: String,
    pub client_ns: String,
    pub server_dev: String,
    pub client_dev: String,
    pub server_addr: Ipv4Addr,
    pub client_addr: Ipv4Addr,
    /// The user-space forwarder of the tap path, which must stop before its taps go.
    pub forwarder: Option<Forwarder>,
    /// The guest's `perflab serve` where the server end is a guest (`vm-*` paths).
    pub guest: Option<GuestPeer>,
    /// Facts particular to a kind (`net.ovs_datapath`).
    pub extra: Vec<(String, String)>,
}

impl Endpoints {
    /// The usual case: a server and a client namespace, each with one interface.
    pub fn pair(plan: &Plan, srv: &str, cli: &str, server_dev: &str, client_dev: &str) -> Self {
        Self {
            server_ns: srv.to_string(),
            client_ns: cli.to_string(),
            server_dev: server_dev.to_string(),
            client_dev: client_dev.to_string(),
            server_addr: plan.server(),
            client_addr: plan.client(),
            forwarder: None,
            guest: None,
            extra: Vec::new(),
        }
    }

    pub fn facts(&self, kind: &str) -> Vec<(String, String)> {
        // An empty name is no namespace of perflab's (a guest's end): the fact stays empty.
        let path = |ns: &str| {
            if ns.is_empty() {
                String::new()
            } else {
                netns_path(ns).display().to_string()
            }
        };
        let end = |ns: &str, addr: Ipv4Addr, dev: &str| NetEnd {
            netns: path(ns),
            addr: addr.into(),
            dev: dev.to_string(),
        };
        NetPathFacts {
            path: kind.to_string(),
            client: end(&self.client_ns, self.client_addr, &self.client_dev),
            server: match &self.guest {
                Some(g) => NetServer::Guest(g.clone()),
                None => NetServer::Local(end(&self.server_ns, self.server_addr, &self.server_dev)),
            },
            extra: self.extra.clone(),
        }
        .to_facts()
    }
}

impl Built {
    /// Creates a named namespace with its loopback up. A namespace of that name that
    /// already exists is not perflab's to take (nor, later, to delete): an error.
    pub(crate) fn netns(&mut self, name: &str) -> Result<(), KnobError> {
        if netns_path(name).exists() {
            return Err(KnobError::Busy {
                path: netns_path(name),
                reason: "the namespace exists already; a perflab that did not finish may \
                         have left it: run `perflab restore`"
                    .into(),
            });
        }
        self.create(
            Created::Netns {
                name: name.to_string(),
            },
            || ip(&["netns", "add", name]).map(drop),
        )?;
        ip_in(name, &["link", "set", "lo", "up"]).map(drop)
    }

    /// A veth pair: `a` in namespace `ns_a`, its peer `b` in `ns_b` (which may be the same).
    pub(crate) fn veth(
        &mut self,
        ns_a: &str,
        a: &str,
        ns_b: &str,
        b: &str,
    ) -> Result<(), KnobError> {
        // Deleting either end deletes both; both are journaled so that each is accounted for.
        self.create(link(ns_b, b), || Ok(()))?;
        self.create(link(ns_a, a), || {
            let mut args = vec!["link", "add", a, "type", "veth", "peer", "name", b];
            if ns_b != ns_a {
                args.extend(["netns", ns_b]);
            }
            ip_in(ns_a, &args).map(drop)
        })
    }
}

/// A link inside a perflab namespace.
pub(crate) fn link(ns: &str, name: &str) -> Created {
    Created::Link {
        netns: Some(ns.to_string()),
        name: name.to_string(),
    }
}

/// Gives `dev` in `ns` the address `addr/24` and brings it up.
pub(crate) fn address_up(ns: &str, dev: &str, addr: Ipv4Addr) -> Result<(), KnobError> {
    let cidr = format!("{addr}/24");
    ip_in(ns, &["addr", "add", &cidr, "dev", dev])?;
    up(ns, dev)
}

pub(crate) fn up(ns: &str, dev: &str) -> Result<(), KnobError> {
    ip_in(ns, &["link", "set", "dev", dev, "up"]).map(drop)
}
