//! What a `netpath=NAME` knob built for a variant, as the workload that uses it reads it.
//!
//! Knobs publish facts as text pairs ([`crate::MeasureCtx::facts`]) because every knob
//! publishes some and monitors match on them (`when = { fact = "net.path" }`); the
//! network path's facts are one record, written by the knob with
//! [`NetPathFacts::to_facts`] and read by `netrr` with [`NetPathFacts::from_facts`], so
//! the keys and their meaning are defined once, here.

use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};

/// The fact that names the path kind (`veth`, `vm-tap`); its presence says a netpath
/// knob is applied. Monitors select spans by it.
pub const PATH: &str = "net.path";
const SERVER_NETNS: &str = "net.server_netns";
const CLIENT_NETNS: &str = "net.client_netns";
const SERVER_ADDR: &str = "net.server_addr";
const CLIENT_ADDR: &str = "net.client_addr";
const SERVER_DEV: &str = "net.server_dev";
const CLIENT_DEV: &str = "net.client_dev";
const PEER: &str = "net.peer";
const PEER_TOKEN: &str = "net.peer_token";
const GUEST_NOTE: &str = "net.guest_note";

/// One end of a path on this machine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NetEnd {
    /// The namespace's path (`/run/netns/…`); empty: perflab's own namespace.
    pub netns: String,
    pub addr: IpAddr,
    /// The interface, as a person reads it (`srv0`, `eth0 (guest)`).
    pub dev: String,
}

/// Where the server of a path runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NetServer {
    /// In a namespace of this machine, where the workload starts its own server.
    Local(NetEnd),
    /// A `perflab serve` in a guest the knob booted, reached at `peer` with `token`.
    Guest(GuestPeer),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GuestPeer {
    pub peer: SocketAddr,
    pub token: String,
    /// What a reader of the numbers must know about the guest (it ran under TCG).
    pub note: Option<String>,
}

/// The network path a knob built: its kind, both ends, and facts particular to a kind
/// (`net.ovs_datapath`, `net.guest_accel`), published as they are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NetPathFacts {
    pub path: String,
    pub client: NetEnd,
    pub server: NetServer,
    pub extra: Vec<(String, String)>,
}

impl NetPathFacts {
    /// The facts as the knob publishes them.
    pub fn to_facts(&self) -> Vec<(String, String)> {
        let pair = |k: &str, v: String| (k.to_string(), v);
        let mut out = vec![
            pair(PATH, self.path.clone()),
            pair(CLIENT_NETNS, self.client.netns.clone()),
            pair(CLIENT_ADDR, self.client.addr.to_string()),
            pair(CLIENT_DEV, self.client.dev.clone()),
        ];
        match &self.server {
            NetServer::Local(s) => out.extend([
                pair(SERVER_NETNS, s.netns.clone()),
                pair(SERVER_ADDR, s.addr.to_string()),
                pair(SERVER_DEV, s.dev.clone()),
            ]),
            NetServer::Guest(g) => {
                out.extend([
                    pair(PEER, g.peer.to_string()),
                    pair(PEER_TOKEN, g.token.clone()),
                ]);
                out.extend(g.note.iter().map(|n| pair(GUEST_NOTE, n.clone())));
            }
        }
        out.extend(self.extra.iter().cloned());
        out
    }

    /// The path published in `facts`: `None` when no netpath knob is applied, an error
    /// naming the fact when one does not read (a knob and its reader out of step).
    pub fn from_facts(facts: &BTreeMap<String, String>) -> Option<Result<Self, String>> {
        let path = facts.get(PATH)?;
        Some(Self::read(path, facts))
    }

    fn read(path: &str, facts: &BTreeMap<String, String>) -> Result<Self, String> {
        let text = |k: &str| facts.get(k).cloned().unwrap_or_default();
        let ip = |k: &str| -> Result<IpAddr, String> {
            let v = text(k);
            v.parse().map_err(|_| {
                format!(
                    "the netpath knob published {k}={v:?}, which is not an IP address (a knob \
                     and netrr out of step?)"
                )
            })
        };
        let server = match facts.get(PEER) {
            Some(peer) => NetServer::Guest(GuestPeer {
                peer: peer.parse().map_err(|_| {
                    format!(
                        "the netpath={path} knob published {PEER}={peer:?}, which is not ADDR:PORT"
                    )
                })?,
                token: text(PEER_TOKEN),
                note: facts.get(GUEST_NOTE).cloned(),
            }),
            None => NetServer::Local(NetEnd {
                netns: text(SERVER_NETNS),
                addr: ip(SERVER_ADDR)?,
                dev: text(SERVER_DEV),
            }),
        };
        let client = NetEnd {
            netns: text(CLIENT_NETNS),
            addr: ip(CLIENT_ADDR)?,
            dev: text(CLIENT_DEV),
        };
        let known = [
            PATH,
            SERVER_NETNS,
            CLIENT_NETNS,
            SERVER_ADDR,
            CLIENT_ADDR,
            SERVER_DEV,
            CLIENT_DEV,
            PEER,
            PEER_TOKEN,
            GUEST_NOTE,
        ];
        let extra = facts
            .iter()
            .filter(|(k, _)| k.starts_with("net.") && !known.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        Ok(NetPathFacts {
            path: path.to_string(),
            client,
            server,
            extra,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn end(netns: &str, addr: &str, dev: &str) -> NetEnd {
        NetEnd {
            netns: netns.into(),
            addr: addr.parse().unwrap(),
            dev: dev.into(),
        }
    }

    fn round_trip(f: &NetPathFacts) -> NetPathFacts {
        let map: BTreeMap<String, String> = f.to_facts().into_iter().collect();
        NetPathFacts::from_facts(&map).unwrap().unwrap()
    }

    #[test]
    fn a_local_and_a_guest_path_read_back_as_published() {
        let local = NetPathFacts {
            path: "veth".into(),
            client: end("/run/netns/c", "10.0.0.2", "cli0"),
            server: NetServer::Local(end("/run/netns/s", "10.0.0.1", "srv0")),
            extra: vec![("net.ovs_datapath".into(), "kernel".into())],
        };
        assert_eq!(round_trip(&local), local);
        let guest = NetPathFacts {
            path: "vm-tap".into(),
            client: end("", "10.0.0.2", "tap0"),
            server: NetServer::Guest(GuestPeer {
                peer: "10.0.0.1:7000".parse().unwrap(),
                token: "t".into(),
                note: Some("the guest runs under TCG".into()),
            }),
            extra: vec![("net.guest_accel".into(), "tcg".into())],
        };
        assert_eq!(round_trip(&guest), guest);
    }

    #[test]
    fn no_path_is_none_and_a_bad_fact_is_named() {
        assert!(NetPathFacts::from_facts(&BTreeMap::new()).is_none());
        let mut m = BTreeMap::from([
            ("net.path".to_string(), "veth".to_string()),
            ("net.server_addr".to_string(), "srv".to_string()),
        ]);
        let e = NetPathFacts::from_facts(&m).unwrap().unwrap_err();
        assert!(e.contains("net.server_addr=\"srv\""), "{e}");
        m.insert("net.peer".into(), "guest".into());
        let e = NetPathFacts::from_facts(&m).unwrap().unwrap_err();
        assert!(e.contains("not ADDR:PORT"), "{e}");
    }
}
