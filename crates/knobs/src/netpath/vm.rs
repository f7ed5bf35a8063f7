//! The paths that end in a virtual machine (seed 001's host-to-VM cases): perflab boots a
//! guest with QEMU whose virtio-net device is backed by
//!
//! - `vm-tap`: a tap with vhost-net (the kernel moves the frames),
//! - `vm-tap-novhost`: the same tap, QEMU's own thread moving the frames,
//! - `vm-macvtap`: a macvtap in bridge mode on a veth whose peer is the client's end,
//! - `vm-ovs`: a tap that is a port of an Open vSwitch bridge, with the client's veth,
//! - `vm-vfio`: a NIC given to the guest with VFIO (see [`super::vfio`]).
//!
//! The guest runs `perflab serve` on the server address, so netrr measures it as a remote
//! peer (`net.peer`, `net.peer_token`) from the client namespace. QEMU and the guest's
//! files are journaled like the namespaces and links: removed on every exit path and by
//! `perflab restore` after a kill. QEMU is journaled just after it starts (its pid is not
//! known before); a kill in that instant is covered by QEMU dying with perflab
//! ([`crate::child::tie_to_perflab`]).

use std::net::SocketAddr;
use std::os::fd::OwnedFd;
use std::path::PathBuf;

use perflab_core::{GuestPeer, Unavailable};
use perflab_sys::SysRoot;

use super::build::Built;
use super::cmd::{ip, ip_in};
use super::kind::PathKind;
use super::nic::Nic;
use super::ovs;
use super::tap::open_tap;
use super::topology::{address_up, link, up, Endpoints, Plan};
use crate::error::KnobError;
use crate::guest::accel::{self, Accel};
use crate::guest::initramfs::{self, GuestNet};
use crate::guest::kernel::{self, KernelImage};
use crate::guest::process;
use crate::guest::qemu::{self, QemuPlan};
use crate::journal::Created;

/// The port the guest's serve listens on.
const GUEST_PORT: u16 = 7700;

/// Where guests' files go: a tmpfs, so a reboot clears what a kill left.
const RUN_DIR: &str = "/run/perflab";

/// What booting a guest needs, found before anything is created.
struct GuestParts {
    qemu: PathBuf,
    kernel: KernelImage,
    accel: Accel,
}

fn parts(sys: &SysRoot) -> Result<GuestParts, Unavailable> {
    let qemu = qemu::find_qemu().ok_or_else(|| {
        Unavailable::new("QEMU is not installed").with_hint("`apt-get install qemu-system-x86`")
    })?;
    let named = kernel::named_in_env();
    let kernel = kernel::find(sys, named.as_deref()).map_err(|why| {
        Unavailable::new(why)
            .with_hint("`apt-get install linux-image-amd64`, or --guest-kernel PATH")
    })?;
    if perflab_sys::probe::tools::find_tool("busybox").is_none() {
        return Err(
            Unavailable::new("busybox is not installed (the guest's userland)")
                .with_hint("`apt-get install busybox-static`"),
        );
    }
    initramfs::guest_binary().map_err(Unavailable::new)?;
    let accel = accel::choose(sys, Some((&qemu, &kernel.path)));
    Ok(GuestParts {
        qemu,
        kernel,
        accel,
    })
}

/// Whether a VM path can be built here, beyond what every path needs (root, `ip`, and a
/// tun device for the tap-backed ones, which [`super::NetPathKnob`] checks).
pub(crate) fn check(sys: &SysRoot, kind: PathKind) -> Result<(), Unavailable> {
    match kind {
        PathKind::VmTap if !perflab_sys::probe::vhost_net(sys) => {
            return Err(Unavailable::new(
                "/dev/vhost-net is missing: the kernel has no vhost-net (vm-tap-novhost \
                 measures the same path with QEMU moving the frames)",
            )
            .with_hint("`modprobe vhost_net`, or use a kernel built with CONFIG_VHOST_NET"))
        }
        PathKind::VmMacvtap => super::probe::link_type("macvtap")?,
        PathKind::VmOvs => ovs::check(sys)?,
        PathKind::VmVfio => {
            super::vfio::check(sys)?;
        }
        _ => {}
    }
    parts(sys).map(drop)
}

pub(crate) fn build(
    b: &mut Built,
    plan: &Plan,
    sys: &SysRoot,
    kind: PathKind,
) -> Result<Endpoints, KnobError> {
    let parts = parts(sys).map_err(|u| KnobError::Command {
        cmd: format!("boot a guest for {}", kind.name()),
        why: u.reason,
    })?;
    let cli = plan.ns("cli");
    b.netns(&cli)?;
    let nic = guest_nic(b, plan, sys, &cli, kind)?;
    let dir = guest_dir(b, plan)?;
    let net = GuestNet {
        addr: plan.server(),
        port: GUEST_PORT,
        token: random_token().map_err(|e| fail(&dir, e))?,
        modules: nic.guest_modules.clone(),
    };
    let initrd = dir.join("initramfs.cpio");
    initramfs::build(sys, &parts.kernel, &net, &dir, &initrd).map_err(|e| fail(&dir, e))?;
    let qplan = QemuPlan {
        qemu: parts.qemu.clone(),
        accel: parts.accel.clone(),
        kernel: parts.kernel.path.clone(),
        initrd,
        console: dir.join("console"),
        name: plan.base.clone(),
        vhost: kind == PathKind::VmTap,
        mac: nic.mac.clone(),
        memory_mib: 512,
    };
    let mut child = match &nic.fd {
        Some(fd) => qplan.spawn(fd),
        None => qplan.spawn_with_device(nic.device.as_deref().unwrap_or_default()),
    }
    .map_err(|e| fail(&dir, e))?;
    let pid = child.id();
    let ticks = process::start_ticks(pid).unwrap_or(0);
    b.record(Created::Process {
        pid,
        start_ticks: ticks,
        comm: process::comm(pid),
        what: format!("QEMU guest {}", plan.base),
    })?;
    drop(nic.fd);
    let took = qemu::wait_ready(&mut child, &qplan.console, qemu::boot_timeout(&parts.accel))
        .map_err(|e| KnobError::Command {
            cmd: format!("boot the {} guest ({})", kind.name(), parts.accel.name()),
            why: e,
        })?;
    let mut ends = Endpoints::pair(plan, "", &cli, "eth0 (guest)", &nic.client_dev);
    ends.guest = Some(GuestPeer {
        peer: SocketAddr::from((plan.server(), GUEST_PORT)),
        token: net.token,
        note: parts.accel.note(),
    });
    ends.extra = vec![
        ("net.guest_accel".into(), parts.accel.name().into()),
        (
            "net.guest_kernel".into(),
            parts.kernel.path.display().to_string(),
        ),
        (
            "net.guest_boot_s".into(),
            format!("{:.1}", took.as_secs_f64()),
        ),
        ("net.guest_pid".into(), pid.to_string()),
    ];
    ends.extra.extend(nic.facts);
    Ok(ends)
}

/// The guest's network device, by path kind, with its host end in namespace `cli`.
fn guest_nic(
    b: &mut Built,
    plan: &Plan,
    sys: &SysRoot,
    cli: &str,
    kind: PathKind,
) -> Result<Nic, KnobError> {
    Ok(match kind {
        PathKind::VmTap | PathKind::VmTapNovhost => tap_nic(b, plan, sys, cli)?,
        PathKind::VmMacvtap => macvtap_nic(b, plan, sys, cli)?,
        PathKind::VmOvs => ovs_nic(b, plan, sys, cli)?,
        PathKind::VmVfio => super::vfio::nic(b, plan, sys, cli)?,
        other => {
            return Err(KnobError::Command {
                cmd: format!("build {}", other.name()),
                why: "not a VM path".into(),
            })
        }
    })
}

/// A private directory (0700) for the guest's initramfs and console, removed on restore.
fn guest_dir(b: &mut Built, plan: &Plan) -> Result<PathBuf, KnobError> {
    let dir = PathBuf::from(RUN_DIR).join(format!("guest-{}", plan.base));
    b.create(Created::Dir { path: dir.clone() }, || {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir)
            .map_err(|e| fail(&dir, e.to_string()))
    })?;
    Ok(dir)
}

fn fail(dir: &std::path::Path, why: String) -> KnobError {
    KnobError::Command {
        cmd: format!("prepare the guest in {}", dir.display()),
        why,
    }
}

/// A tap in the client namespace: the client's end is the tap itself.
fn tap_nic(b: &mut Built, plan: &Plan, sys: &SysRoot, cli: &str) -> Result<Nic, KnobError> {
    let mut fd = None;
    b.create(link(cli, "tap0"), || {
        fd = Some(open_tap(sys, Some(cli), "tap0", true)?);
        Ok(())
    })?;
    address_up(cli, "tap0", plan.client())?;
    Ok(Nic {
        fd,
        device: None,
        mac: None,
        client_dev: "tap0".into(),
        facts: Vec::new(),
        guest_modules: Vec::new(),
    })
}

/// A veth from the client namespace to a third one, where a macvtap in bridge mode sits
/// on the veth's other end; QEMU reads the macvtap's character device `/dev/tapN`.
fn macvtap_nic(b: &mut Built, plan: &Plan, sys: &SysRoot, cli: &str) -> Result<Nic, KnobError> {
    let lower_ns = plan.ns("vm");
    b.netns(&lower_ns)?;
    b.veth(cli, "cli0", &lower_ns, "low0")?;
    up(&lower_ns, "low0")?;
    b.create(link(&lower_ns, "mvt0"), || {
        ip_in(
            &lower_ns,
            &[
                "link", "add", "mvt0", "link", "low0", "type", "macvtap", "mode", "bridge",
            ],
        )
        .map(drop)
    })?;
    up(&lower_ns, "mvt0")?;
    let shown = ip_in(&lower_ns, &["-o", "link", "show", "dev", "mvt0"])?;
    let (index, mac) = parse_link_line(&shown).ok_or_else(|| KnobError::Command {
        cmd: format!("ip -n {lower_ns} -o link show dev mvt0"),
        why: format!("cannot read the macvtap's index and address from {shown:?}"),
    })?;
    let dev = sys.path(&format!("dev/tap{index}"));
    let file = open_char_device(&dev)?;
    address_up(cli, "cli0", plan.client())?;
    Ok(Nic {
        fd: Some(file),
        device: None,
        mac: Some(mac),
        client_dev: "cli0".into(),
        facts: vec![("net.macvtap_dev".into(), dev.display().to_string())],
        guest_modules: Vec::new(),
    })
}

/// The character device of a macvtap; udev-less machines still get it from devtmpfs,
/// which may take a moment after the link appears.
fn open_char_device(dev: &std::path::Path) -> Result<OwnedFd, KnobError> {
    let mut last = String::new();
    for _ in 0..50 {
        match std::fs::OpenOptions::new().read(true).write(true).open(dev) {
            Ok(f) => return Ok(f.into()),
            Err(e) => last = e.to_string(),
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    Err(KnobError::Command {
        cmd: format!("open {}", dev.display()),
        why: last,
    })
}

/// `4: mvt0@low0: <…> mtu 1500 … link/ether 9a:bc:… brd ff:…` → (4, "9a:bc:…").
pub(crate) fn parse_link_line(line: &str) -> Option<(u32, String)> {
    let index = line.split(':').next()?.trim().parse().ok()?;
    let mut words = line.split_whitespace();
    words.find(|w| *w == "link/ether")?;
    let mac = words.next()?;
    let ok = mac.len() == 17
        && mac
            .split(':')
            .all(|h| h.len() == 2 && u8::from_str_radix(h, 16).is_ok());
    ok.then(|| (index, mac.to_string()))
}

/// A tap in the host namespace on an OVS bridge, and the client's veth on the same
/// bridge. The tap has no virtio-net header: the user-space datapath would pass the
/// guest's unfinished checksums on.
fn ovs_nic(b: &mut Built, plan: &Plan, sys: &SysRoot, cli: &str) -> Result<Nic, KnobError> {
    let (br, datapath) = ovs::bridge(b, plan)?;
    let tap = plan.short("t");
    let port = plan.short("c");
    for name in [&tap, &port] {
        if sys.exists(&format!("sys/class/net/{name}")) {
            return Err(KnobError::Busy {
                path: sys.path(&format!("sys/class/net/{name}")),
                reason: "a link of that name exists already; run `perflab restore`".into(),
            });
        }
    }
    let mut fd = None;
    b.create(
        Created::Link {
            netns: None,
            name: tap.clone(),
        },
        || {
            fd = Some(open_tap(sys, None, &tap, false)?);
            Ok(())
        },
    )?;
    ip(&["link", "set", "dev", &tap, "up"])?;
    ovs::add_port(&br, &tap)?;
    b.create(link(cli, "cli0"), || Ok(()))?;
    b.create(
        Created::Link {
            netns: None,
            name: port.clone(),
        },
        || {
            ip(&[
                "link", "add", &port, "type", "veth", "peer", "name", "cli0", "netns", cli,
            ])
            .map(drop)
        },
    )?;
    ip(&["link", "set", "dev", &port, "up"])?;
    ovs::add_port(&br, &port)?;
    if datapath == "netdev" {
        ovs::tx_checksum_off(cli, "cli0")?;
    }
    address_up(cli, "cli0", plan.client())?;
    Ok(Nic {
        fd,
        device: None,
        mac: None,
        client_dev: "cli0".into(),
        facts: vec![
            ("net.ovs_bridge".into(), br),
            ("net.ovs_datapath".into(), datapath.into()),
        ],
        guest_modules: Vec::new(),
    })
}

/// 128 bits from the kernel's random source, as hex.
fn random_token() -> Result<String, String> {
    use std::io::Read;
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(|e| format!("/dev/urandom: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_macvtap_line() {
        let line = "4: mvt0@low0: <BROADCAST,MULTICAST,UP> mtu 1500 qdisc noqueue state UP \
                    mode DEFAULT group default qlen 500\\    link/ether 9a:bc:de:f0:12:34 brd \
                    ff:ff:ff:ff:ff:ff";
        assert_eq!(
            parse_link_line(line),
            Some((4, "9a:bc:de:f0:12:34".to_string()))
        );
        assert_eq!(parse_link_line("garbage"), None);
        assert_eq!(parse_link_line("4: x: link/ether zz"), None);
        assert_eq!(parse_link_line(""), None);
    }

    #[test]
    fn tokens_are_fresh() {
        let (a, b) = (random_token().unwrap(), random_token().unwrap());
        assert_eq!(a.len(), 32);
        assert_ne!(a, b);
    }
}
