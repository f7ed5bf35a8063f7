//! `tap`: the data path of a VM's tap backend. Each end's interface is a tap device whose
//! frames a user-space [`Forwarder`] thread reads and writes to the other tap, as QEMU's
//! virtio-net backend shuttles frames between the guest and the host's tap: every packet
//! crosses into user space and back, which is what makes the seed's tap case slow.

use std::fs::OpenOptions;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::OpenOptionsExt;

use perflab_sys::SysRoot;

use super::build::Built;
use super::forwarder::Forwarder;
use super::netns::{in_netns, netns_path};
use super::topology::{address_up, link, Endpoints, Plan};
use crate::error::KnobError;

/// The tun/tap clone device, relative to the root.
pub const TUN_PATH: &str = "dev/net/tun";

pub(crate) fn build(b: &mut Built, plan: &Plan, sys: &SysRoot) -> Result<Endpoints, KnobError> {
    let (srv, cli) = (plan.ns("srv"), plan.ns("cli"));
    b.netns(&srv)?;
    b.netns(&cli)?;
    let mut taps = Vec::with_capacity(2);
    for (ns, dev) in [(&srv, "srv0"), (&cli, "cli0")] {
        // Not persistent: the kernel removes the tap when its descriptor closes, so even a
        // SIGKILL leaves none behind; the journal entry covers the instant before.
        b.create(link(ns, dev), || {
            taps.push(open_tap(sys, Some(ns), dev, false)?);
            Ok(())
        })?;
    }
    address_up(&srv, "srv0", plan.server())?;
    address_up(&cli, "cli0", plan.client())?;
    let (Some(cli_fd), Some(srv_fd)) = (taps.pop(), taps.pop()) else {
        return Err(KnobError::Command {
            cmd: "open taps".into(),
            why: "a tap descriptor went missing".into(),
        });
    };
    let mut ends = Endpoints::pair(plan, &srv, &cli, "srv0", "cli0");
    ends.forwarder = Some(Forwarder::start(srv_fd, cli_fd)?);
    Ok(ends)
}

/// Creates tap `name` in namespace `ns` (`None`: the host's) and returns its descriptor
/// (non-blocking). `vnet_hdr`: frames carry a virtio-net header, as QEMU's virtio backend
/// with offloads wants them.
pub(crate) fn open_tap(
    sys: &SysRoot,
    ns: Option<&str>,
    name: &str,
    vnet_hdr: bool,
) -> Result<OwnedFd, KnobError> {
    let tun = sys.path(TUN_PATH);
    let fail = |why: String| KnobError::Command {
        cmd: format!(
            "create tap {name} in {}",
            ns.unwrap_or("the host namespace")
        ),
        why,
    };
    let bytes = name.as_bytes();
    if bytes.is_empty() || bytes.len() >= libc::IFNAMSIZ {
        return Err(fail(format!("{name:?} is not a valid interface name")));
    }
    let open = || -> std::io::Result<OwnedFd> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open(&tun)?;
        // SAFETY: ifreq is plain old data; all zeroes is a valid value.
        let mut ifr: libc::ifreq = unsafe { std::mem::zeroed() };
        for (dst, src) in ifr.ifr_name.iter_mut().zip(bytes) {
            *dst = *src as libc::c_char;
        }
        // Plain Ethernet frames, no packet-information header, as a virtio backend
        // without vnet headers reads them.
        let mut flags = libc::IFF_TAP | libc::IFF_NO_PI;
        if vnet_hdr {
            flags |= libc::IFF_VNET_HDR;
        }
        ifr.ifr_ifru.ifru_flags = flags as libc::c_short;
        // SAFETY: the descriptor is open and `ifr` is a valid ifreq for TUNSETIFF.
        if unsafe { libc::ioctl(file.as_raw_fd(), libc::TUNSETIFF, &mut ifr) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(file.into())
    };
    let opened = match ns {
        Some(ns) => in_netns(&netns_path(ns), open),
        None => Ok(open()),
    };
    match opened {
        Ok(Ok(fd)) => Ok(fd),
        Ok(Err(e)) | Err(e) => Err(fail(format!("{}: {e}", tun.display()))),
    }
}
