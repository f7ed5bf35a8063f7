//! Checks before and after building: whether the kernel has a link type (asked in a
//! throwaway namespace, so asking changes nothing), and whether a built path carries a
//! UDP datagram both ways.

use std::net::{SocketAddr, UdpSocket};
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::time::{Duration, Instant};

use perflab_core::Unavailable;

use super::cmd;
use super::netns::{in_netns, netns_path};
use super::topology::Endpoints;
use crate::error::KnobError;

/// The kernel option that provides each link type, for the reason a person reads.
fn config_of(kind: &str) -> &'static str {
    match kind {
        "veth" => "CONFIG_VETH",
        "bridge" => "CONFIG_BRIDGE",
        "macvlan" => "CONFIG_MACVLAN",
        "ipvlan" => "CONFIG_IPVLAN",
        "macvtap" => "CONFIG_MACVTAP",
        _ => "the matching CONFIG_ option",
    }
}

/// Whether the kernel can create a link of `kind` (on a veth parent for macvlan and
/// ipvlan). `ip` runs in a network namespace of its own, made by `unshare` in the child
/// before exec, which the kernel frees with everything in it when `ip` exits.
pub(crate) fn link_type(kind: &str) -> Result<(), Unavailable> {
    let mut script = String::from("link add pl0 type veth peer name pl1\n");
    match kind {
        "veth" => {}
        "bridge" => script.push_str("link add pl2 type bridge\n"),
        "macvlan" => script.push_str("link add pl2 link pl0 type macvlan mode bridge\n"),
        "ipvlan" => script.push_str("link add pl2 link pl0 type ipvlan mode l2\n"),
        "macvtap" => script.push_str("link add pl2 link pl0 type macvtap mode bridge\n"),
        other => return Err(Unavailable::new(format!("no probe for link type {other}"))),
    }
    let Some(tool) = perflab_sys::probe::tools::find_tool("ip") else {
        return Err(no_ip());
    };
    let mut prepare = Command::new(tool);
    // SAFETY: unshare is a single system call, safe between fork and exec.
    unsafe {
        prepare.pre_exec(|| {
            if libc::unshare(libc::CLONE_NEWNET) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
    let out = cmd::output("ip", &["-batch", "-"], Some(&script), cmd::TIMEOUT, prepare)
        .map_err(|e| Unavailable::new(e.to_string()))?;
    if out.ok {
        return Ok(());
    }
    if out.stderr.contains("Unknown device type") {
        Err(Unavailable::new(format!(
            "this kernel has no {kind} links ({} is off or its module is not loaded)",
            config_of(kind)
        ))
        .with_hint(format!(
            "`modprobe {kind}`, or use a kernel built with {}",
            config_of(kind)
        )))
    } else {
        Err(Unavailable::new(format!(
            "cannot create a {kind} link, even in a private namespace: {}",
            out.stderr
        )))
    }
}

pub(crate) fn no_ip() -> Unavailable {
    Unavailable::new("the `ip` tool (iproute2) is not installed")
        .with_hint("`apt-get install iproute2`")
}

/// Connects from the client's namespace to the guest's serve (`net.peer`), retrying
/// while the path's neighbours resolve.
pub(crate) fn tcp(ends: &Endpoints) -> Result<(), KnobError> {
    let peer = ends.guest.as_ref().map(|g| g.peer);
    let fail = |why: String| KnobError::Command {
        cmd: format!("TCP probe from {} to the guest", ends.client_ns),
        why,
    };
    let Some(peer) = peer else {
        return Err(fail("the path named no guest address".into()));
    };
    let started = Instant::now();
    let mut last = String::new();
    for _ in 0..TRIES {
        let r = in_netns(&netns_path(&ends.client_ns), || {
            std::net::TcpStream::connect_timeout(&peer, WAIT * 5)
        });
        match r {
            Ok(Ok(_)) => return Ok(()),
            Ok(Err(e)) | Err(e) => last = e.to_string(),
        }
        std::thread::sleep(WAIT);
    }
    Err(fail(format!(
        "{peer} did not accept a connection within {:.1} s ({last}): the guest serves but \
         the path does not carry traffic",
        started.elapsed().as_secs_f64()
    )))
}

const PAYLOAD: &[u8] = b"perflab netpath probe";
const TRIES: u32 = 50;
const WAIT: Duration = Duration::from_millis(100);

/// Sends a datagram from the client end to the server end and one back, retrying while
/// neighbour resolution and link start-up settle (IPv6 DAD, a tap's carrier).
pub(crate) fn udp(ends: &Endpoints) -> Result<(), KnobError> {
    let fail = |why: String| KnobError::Command {
        cmd: format!(
            "UDP probe {} ({}) -> {} ({})",
            ends.client_addr, ends.client_ns, ends.server_addr, ends.server_ns
        ),
        why,
    };
    let bind = |ns: &str, addr| {
        in_netns(&netns_path(ns), || {
            UdpSocket::bind(SocketAddr::new(addr, 0))
        })
        .and_then(|r| r)
        .and_then(|s| s.set_read_timeout(Some(WAIT)).map(|()| s))
        .map_err(|e| fail(format!("bind in {ns}: {e}")))
    };
    let server = bind(&ends.server_ns, ends.server_addr.into())?;
    let client = bind(&ends.client_ns, ends.client_addr.into())?;
    let to = server.local_addr().map_err(|e| fail(e.to_string()))?;
    let started = Instant::now();
    let mut buf = [0u8; 64];
    for _ in 0..TRIES {
        if client.send_to(PAYLOAD, to).is_err() {
            std::thread::sleep(WAIT);
            continue;
        }
        let Ok((n, from)) = server.recv_from(&mut buf) else {
            continue;
        };
        if &buf[..n] != PAYLOAD || server.send_to(PAYLOAD, from).is_err() {
            continue;
        }
        if matches!(client.recv_from(&mut buf), Ok((n, _)) if &buf[..n] == PAYLOAD) {
            return Ok(());
        }
    }
    Err(fail(format!(
        "no answer within {:.1} s: the path was built but does not carry traffic",
        started.elapsed().as_secs_f64()
    )))
}
