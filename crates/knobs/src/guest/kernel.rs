//! The guest's kernel: which image boots, and which version it is (so that its modules
//! can be found under `/lib/modules/VERSION`).
//!
//! An x86 bzImage names its version in its setup header: the 16-bit field at 0x20E points
//! (from 0x200) at a NUL-terminated string such as `6.1.0-56-amd64 (debian-kernel@…) #1
//! SMP …`, whose first word is what `uname -r` prints inside the guest.

use std::io::Read;
use std::path::{Path, PathBuf};

use perflab_sys::SysRoot;

/// The variable that names the guest kernel (`perflab run --guest-kernel` sets it).
pub const KERNEL_ENV: &str = "PERFLAB_GUEST_KERNEL";

/// A kernel image and its release.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelImage {
    pub path: PathBuf,
    pub release: String,
}

/// Reads the release from a bzImage's setup header; `None` for anything else.
pub fn bzimage_release(mut reader: impl Read) -> Option<String> {
    // The version string sits within the real-mode setup code, at most 32 KiB in.
    let mut head = Vec::with_capacity(0x8000);
    reader.by_ref().take(0x8000).read_to_end(&mut head).ok()?;
    if head.get(0x202..0x206)? != b"HdrS" {
        return None;
    }
    let ptr = u16::from_le_bytes([*head.get(0x20E)?, *head.get(0x20F)?]) as usize;
    let start = ptr.checked_add(0x200)?;
    let rest = head.get(start..)?;
    let end = rest.iter().position(|&b| b == 0)?;
    let text = std::str::from_utf8(&rest[..end]).ok()?;
    let release = text.split_whitespace().next()?;
    (!release.is_empty() && release.len() < 128).then(|| release.to_string())
}

/// The release in a Debian-style file name `vmlinuz-RELEASE`.
fn release_from_name(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    name.strip_prefix("vmlinuz-")
        .filter(|r| !r.is_empty())
        .map(str::to_string)
}

fn image(path: &Path) -> Result<KernelImage, String> {
    let file =
        std::fs::File::open(path).map_err(|e| format!("guest kernel {}: {e}", path.display()))?;
    let release = bzimage_release(std::io::BufReader::new(file))
        .or_else(|| release_from_name(path))
        .ok_or_else(|| {
            format!(
                "guest kernel {}: not an x86 bzImage, and its name does not say its release \
                 (name it vmlinuz-RELEASE)",
                path.display()
            )
        })?;
    Ok(KernelImage {
        path: path.to_path_buf(),
        release,
    })
}

/// The kernel to boot: the one named (by `--guest-kernel` / `$PERFLAB_GUEST_KERNEL`),
/// else the host's own (`/boot/vmlinuz-$(uname -r)`), else the newest `vmlinuz-*` in
/// `/boot` that has its modules (Debian's `linux-image-amd64`).
pub fn find(sys: &SysRoot, named: Option<&Path>) -> Result<KernelImage, String> {
    if let Some(path) = named {
        return image(path);
    }
    let running = sys
        .read_trimmed("proc/sys/kernel/osrelease")
        .unwrap_or_default();
    let own = sys.path(&format!("boot/vmlinuz-{running}"));
    if !running.is_empty() && own.is_file() {
        return image(&own);
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir(sys.path("boot"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| release_from_name(p).is_some_and(|r| sys.exists(&format!("lib/modules/{r}"))))
        .collect();
    found.sort_by_key(|p| version_key(&release_from_name(p).unwrap_or_default()));
    match found.pop() {
        Some(p) => image(&p),
        None => Err(format!(
            "no guest kernel: neither {} nor a /boot/vmlinuz-* with modules under \
             /lib/modules (install one: `apt-get install linux-image-amd64`, or give \
             --guest-kernel PATH)",
            own.display()
        )),
    }
}

/// Orders releases by their numbers (6.10 after 6.9), then by text.
fn version_key(release: &str) -> (Vec<u64>, String) {
    let nums = release
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap_or(u64::MAX))
        .collect();
    (nums, release.to_string())
}

/// The kernel named in the environment, if any.
pub fn named_in_env() -> Option<PathBuf> {
    std::env::var_os(KERNEL_ENV)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake_bzimage(version: &str) -> Vec<u8> {
        let mut img = vec![0u8; 0x1000];
        img[0x202..0x206].copy_from_slice(b"HdrS");
        let at = 0x300usize;
        img[0x20E..0x210].copy_from_slice(&((at - 0x200) as u16).to_le_bytes());
        img[at..at + version.len()].copy_from_slice(version.as_bytes());
        img
    }

    #[test]
    fn reads_the_release_from_the_setup_header() {
        let img = fake_bzimage("6.1.0-56-amd64 (debian-kernel@lists.debian.org) #1 SMP");
        assert_eq!(bzimage_release(&img[..]).as_deref(), Some("6.1.0-56-amd64"));
    }

    #[test]
    fn anything_else_has_no_release_and_never_panics() {
        assert_eq!(bzimage_release(&b"\x7fELF"[..]), None);
        let mut img = fake_bzimage("x");
        img[0x20E..0x210].copy_from_slice(&0xFFFFu16.to_le_bytes());
        assert_eq!(bzimage_release(&img[..]), None);
        let mut unterminated = fake_bzimage("");
        unterminated.truncate(0x300);
        assert_eq!(bzimage_release(&unterminated[..]), None);
        for n in 0..0x210 {
            let _ = bzimage_release(&fake_bzimage("6.1")[..n]);
        }
    }

    #[test]
    fn newer_releases_sort_last() {
        let mut v = ["6.10.0-1-amd64", "6.9.0-3-amd64", "6.1.0-56-amd64"];
        v.sort_by_key(|r| version_key(r));
        assert_eq!(v, ["6.1.0-56-amd64", "6.9.0-3-amd64", "6.10.0-1-amd64"]);
    }

    #[test]
    fn a_named_file_that_is_no_kernel_is_refused_in_one_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("bzImage");
        std::fs::write(&p, b"not a kernel").unwrap();
        let e = find(&SysRoot::host(), Some(&p)).unwrap_err();
        assert!(e.contains("not an x86 bzImage") && !e.contains('\n'), "{e}");
        let e = find(&SysRoot::host(), Some(&dir.path().join("missing"))).unwrap_err();
        assert!(e.contains("missing"), "{e}");
    }
}
