//! The guest's initramfs: busybox, the virtio modules of the guest kernel, perflab itself
//! with the libraries `ldd` names, and an `/init` that brings `eth0` up on the guest's
//! address and runs `perflab serve` there. The token is a file in the archive (mode 0600),
//! never a kernel or QEMU argument another user could read in `ps`.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::process::Command;

use perflab_sys::SysRoot;

use super::cpio::Archive;
use super::kernel::KernelImage;
use super::ldd;
use super::modules::ModuleDeps;
use perflab_sys::probe::tools::find_tool;

/// The line the guest's serve prints once it listens: the guest is ready.
pub const READY: &str = "perflab serve: listening on";
/// The line `/init` prints when serve ended: the guest will not answer.
pub const SERVE_ENDED: &str = "perflab-guest: serve exited";

/// The variable that names the perflab binary to put in the guest.
pub const BINARY_ENV: &str = "PERFLAB_GUEST_BINARY";

/// Modules the guest's network needs (built in on some kernels, modules on Debian's).
const NET_MODULES: [&str; 2] = ["virtio_pci", "virtio_net"];

/// What the guest is told.
#[derive(Clone, Debug)]
pub struct GuestNet {
    pub addr: Ipv4Addr,
    pub port: u16,
    pub token: String,
    /// Modules to load besides the virtio ones (the driver of a NIC given with VFIO).
    pub modules: Vec<String>,
}

/// The perflab executable to copy into the guest: `$PERFLAB_GUEST_BINARY`, else this
/// program when it is perflab, else a `perflab` beside it or one directory up (a test
/// binary in `target/debug/deps`).
pub fn guest_binary() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os(BINARY_ENV).filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(p));
    }
    let me = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
    if me.file_name().is_some_and(|n| n == "perflab") {
        return Ok(me);
    }
    me.ancestors()
        .skip(1)
        .take(2)
        .map(|d| d.join("perflab"))
        .find(|p| p.is_file())
        .ok_or_else(|| {
            format!(
                "no perflab binary to put in the guest beside {} (set {BINARY_ENV})",
                me.display()
            )
        })
}

/// The `/init` script.
pub fn init_script(net: &GuestNet, modules: &[String]) -> String {
    let mut s = String::from("#!/bin/sh\n");
    s.push_str("mount -t proc proc /proc\nmount -t sysfs sys /sys\n");
    s.push_str("mount -t devtmpfs dev /dev\nmount -t tmpfs tmp /tmp\n");
    for m in modules {
        let _ = writeln!(
            s,
            "insmod /lib/modules/perflab/{m} || echo \"perflab-guest: insmod {m} failed\""
        );
    }
    s.push_str(
        "i=0\nwhile [ ! -e /sys/class/net/eth0 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done\n",
    );
    let _ = writeln!(
        s,
        "ip link set lo up\nip addr add {}/24 dev eth0\nip link set eth0 up",
        net.addr
    );
    s.push_str("echo \"perflab-guest: network up\"\n");
    let _ = writeln!(
        s,
        "HOME=/tmp /bin/perflab serve --token-file /etc/perflab-token \
         --listen {} --port {} --db /tmp/results.db --journal /tmp/journal.json \
         --max-sessions 4 --session-time 24h",
        net.addr, net.port
    );
    let _ = writeln!(s, "echo \"{SERVE_ENDED} with $?\"");
    s.push_str("poweroff -f\n");
    s
}

/// Writes the initramfs to `out`; `work` holds temporary files (a stripped binary).
pub fn build(
    sys: &SysRoot,
    kernel: &KernelImage,
    net: &GuestNet,
    work: &Path,
    out: &Path,
) -> Result<(), String> {
    let busybox = find_tool("busybox").ok_or(
        "busybox is not installed, and the guest's userland is made of it (apt-get install \
         busybox-static)",
    )?;
    let perflab = guest_binary()?;
    let modules = guest_modules(sys, kernel, &net.modules)?;
    let file = std::fs::File::create(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let mut a = Archive::new(std::io::BufWriter::new(file));
    let io = |e: std::io::Error| format!("writing {}: {e}", out.display());
    let mut dirs = BTreeSet::new();
    for d in [
        "bin",
        "dev",
        "etc",
        "proc",
        "sys",
        "tmp",
        "lib/modules/perflab",
    ] {
        add_dirs(&mut a, &mut dirs, &format!("{d}/x")).map_err(io)?;
    }
    a.file("bin/busybox", 0o755, &read(&busybox)?).map_err(io)?;
    for applet in [
        "sh", "mount", "insmod", "ip", "sleep", "poweroff", "cat", "echo",
    ] {
        a.symlink(&format!("bin/{applet}"), "busybox").map_err(io)?;
    }
    let binary = stripped(&perflab, work);
    a.file("bin/perflab", 0o755, &read(&binary)?).map_err(io)?;
    let mut libs = libraries(&busybox)?;
    libs.extend(libraries(&perflab)?);
    libs.sort();
    libs.dedup();
    for lib in &libs {
        let name = lib.to_string_lossy();
        add_dirs(&mut a, &mut dirs, &name).map_err(io)?;
        // Follow the symlink (libc.so.6 → libc-2.36.so): the archive holds the file.
        a.file(&name, 0o755, &read(lib)?).map_err(io)?;
    }
    let mut loaded = Vec::new();
    for (i, (name, bytes)) in modules.into_iter().enumerate() {
        let file = format!("{i:02}-{name}.ko");
        a.file(&format!("lib/modules/perflab/{file}"), 0o644, &bytes)
            .map_err(io)?;
        loaded.push(file);
    }
    a.file("etc/perflab-token", 0o600, net.token.as_bytes())
        .map_err(io)?;
    a.file("init", 0o755, init_script(net, &loaded).as_bytes())
        .map_err(io)?;
    a.finish().map_err(io)?;
    let _ = std::fs::remove_file(work.join("perflab.stripped"));
    Ok(())
}

fn add_dirs<W: std::io::Write>(
    a: &mut Archive<W>,
    made: &mut BTreeSet<String>,
    file: &str,
) -> std::io::Result<()> {
    let path = file.trim_start_matches('/');
    let mut at = String::new();
    let parts: Vec<&str> = path.split('/').collect();
    for part in &parts[..parts.len().saturating_sub(1)] {
        if !at.is_empty() {
            at.push('/');
        }
        at.push_str(part);
        if made.insert(at.clone()) {
            a.dir(&at)?;
        }
    }
    Ok(())
}

fn read(path: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))
}

/// A copy without debug information where `strip` is installed (a debug build of
/// perflab is tens of MB, which the emulated guest would copy at every boot).
fn stripped(binary: &Path, work: &Path) -> PathBuf {
    let out = work.join("perflab.stripped");
    let ok = find_tool("strip").is_some_and(|strip| {
        Command::new(strip)
            .arg("-o")
            .arg(&out)
            .arg(binary)
            .output()
            .is_ok_and(|o| o.status.success())
    });
    if ok {
        out
    } else {
        binary.to_path_buf()
    }
}

fn libraries(program: &Path) -> Result<Vec<PathBuf>, String> {
    let Some(tool) = find_tool("ldd") else {
        return Err("ldd is not installed (it comes with libc-bin)".into());
    };
    let out = Command::new(tool)
        .arg(program)
        .output()
        .map_err(|e| format!("ldd {}: {e}", program.display()))?;
    // ldd exits 1 for a static program and says so on stdout or stderr.
    let mut text = out.stdout;
    text.extend_from_slice(&out.stderr);
    ldd::parse(&text[..]).map_err(|e| format!("{} in the guest: {e}", program.display()))
}

/// The network modules of the guest kernel, in load order, decompressed.
fn guest_modules(
    sys: &SysRoot,
    kernel: &KernelImage,
    extra: &[String],
) -> Result<Vec<(String, Vec<u8>)>, String> {
    let dir = format!("lib/modules/{}", kernel.release);
    let dep = sys.open(&format!("{dir}/modules.dep")).map_err(|e| {
        format!(
            "the guest kernel {} has no modules here ({}: {e}); install its package or give \
             a kernel with virtio-net built in",
            kernel.release,
            sys.path(&format!("{dir}/modules.dep")).display()
        )
    })?;
    let builtin = sys
        .read_string(&format!("{dir}/modules.builtin"))
        .unwrap_or_default();
    let mut wanted: Vec<&str> = NET_MODULES.to_vec();
    wanted.extend(extra.iter().map(String::as_str));
    let order = ModuleDeps::parse(dep, builtin.as_bytes()).load_order(&wanted)?;
    order
        .iter()
        .map(|rel| {
            let path = sys.path(&format!("{dir}/{rel}"));
            let bytes = decompressed(&path)?;
            Ok((super::modules::module_name(rel), bytes))
        })
        .collect()
}

/// A module's bytes; `.ko.xz` and `.ko.zst` through the `xz` / `zstd` tools, since
/// busybox's insmod takes plain ELF.
fn decompressed(path: &Path) -> Result<Vec<u8>, String> {
    let name = path.to_string_lossy();
    let tool = if name.ends_with(".xz") {
        "xz"
    } else if name.ends_with(".zst") {
        "zstd"
    } else if name.ends_with(".gz") {
        "gzip"
    } else {
        return read(path);
    };
    let bin = find_tool(tool).ok_or_else(|| {
        format!(
            "{} is compressed and {tool} is not installed",
            path.display()
        )
    })?;
    let out = Command::new(bin)
        .args(["-d", "-c"])
        .arg(path)
        .output()
        .map_err(|e| format!("{tool} -d {}: {e}", path.display()))?;
    if out.status.success() {
        Ok(out.stdout)
    } else {
        Err(format!("{tool} -d {} failed", path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn init_loads_modules_in_order_and_keeps_the_token_off_the_command_line() {
        let net = GuestNet {
            addr: Ipv4Addr::new(10, 213, 7, 1),
            port: 7700,
            token: "s3cret".into(),
            modules: Vec::new(),
        };
        let s = init_script(&net, &["00-virtio_ring.ko".into(), "01-virtio.ko".into()]);
        let ring = s.find("00-virtio_ring.ko").unwrap();
        assert!(ring < s.find("01-virtio.ko").unwrap());
        assert!(s.contains("ip addr add 10.213.7.1/24 dev eth0"));
        assert!(s.contains("--listen 10.213.7.1 --port 7700"));
        assert!(!s.contains("s3cret"));
        assert!(s.contains("--token-file /etc/perflab-token"));
        assert!(s.contains(SERVE_ENDED));
    }
}
