//! A writer of the `newc` cpio format, the one the kernel unpacks as an initramfs.
//!
//! Each entry is a 110-byte ASCII header (magic `070701`, then 13 eight-digit hex
//! fields), the NUL-terminated name padded to 4 bytes, and the data padded to 4 bytes;
//! the archive ends with the entry `TRAILER!!!`.

use std::io::{self, Write};

const FILE: u32 = 0o100000;
const DIR: u32 = 0o040000;
const SYMLINK: u32 = 0o120000;

/// Writes entries one after another; [`Archive::finish`] writes the trailer.
pub struct Archive<W: Write> {
    out: W,
    written: u64,
    ino: u32,
}

impl<W: Write> Archive<W> {
    pub fn new(out: W) -> Self {
        Self {
            out,
            written: 0,
            ino: 1,
        }
    }

    pub fn dir(&mut self, name: &str) -> io::Result<()> {
        self.entry(name, DIR | 0o755, 2, &[])
    }

    pub fn file(&mut self, name: &str, mode: u32, data: &[u8]) -> io::Result<()> {
        self.entry(name, FILE | (mode & 0o7777), 1, data)
    }

    pub fn symlink(&mut self, name: &str, target: &str) -> io::Result<()> {
        self.entry(name, SYMLINK | 0o777, 1, target.as_bytes())
    }

    pub fn finish(mut self) -> io::Result<W> {
        self.entry("TRAILER!!!", 0, 1, &[])?;
        self.out.flush()?;
        Ok(self.out)
    }

    fn entry(&mut self, name: &str, mode: u32, nlink: u32, data: &[u8]) -> io::Result<()> {
        let name = name.trim_start_matches('/');
        if name.is_empty() || name.contains('\0') {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("cpio entry name {name:?}"),
            ));
        }
        let size = u32::try_from(data.len())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "cpio entry over 4 GiB"))?;
        let ino = self.ino;
        self.ino += 1;
        let fields = [
            ino,
            mode,
            0,
            0,
            nlink,
            0,
            size,
            0,
            0,
            0,
            0,
            name.len() as u32 + 1,
            0,
        ];
        let mut header = String::with_capacity(110);
        header.push_str("070701");
        for f in fields {
            header.push_str(&format!("{f:08X}"));
        }
        self.put(header.as_bytes())?;
        self.put(name.as_bytes())?;
        self.put(&[0])?;
        self.pad()?;
        self.put(data)?;
        self.pad()
    }

    fn put(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.out.write_all(bytes)?;
        self.written += bytes.len() as u64;
        Ok(())
    }

    fn pad(&mut self) -> io::Result<()> {
        let n = (4 - (self.written % 4) as usize) % 4;
        self.put(&[0u8; 3][..n])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_newc_and_aligned() {
        let mut a = Archive::new(Vec::new());
        a.dir("bin").unwrap();
        a.file("/init", 0o755, b"#!/bin/sh\n").unwrap();
        a.symlink("bin/sh", "busybox").unwrap();
        let bytes = a.finish().unwrap();
        assert_eq!(bytes.len() % 4, 0);
        assert_eq!(&bytes[..6], b"070701");
        // The second header starts at a multiple of 4 after "bin\0".
        let second = 116; // 110 + "bin\0", padded to a multiple of 4
        assert_eq!(&bytes[second..second + 6], b"070701");
        let text = String::from_utf8_lossy(&bytes);
        assert!(text.contains("init\0"));
        assert!(text.contains("#!/bin/sh\n"));
        assert!(text.ends_with("TRAILER!!!\0\0\0\0") || text.contains("TRAILER!!!\0"));
    }

    #[test]
    fn the_system_cpio_reads_it_back() {
        let Some(cpio) = perflab_sys::probe::tools::find_tool("cpio") else {
            perflab_testkit::skip(
                "cpio round trip",
                "the cpio tool is not installed (apt-get install cpio)",
            );
            return;
        };
        let mut a = Archive::new(Vec::new());
        a.dir("etc").unwrap();
        a.file("etc/conf", 0o600, b"addr=10.0.0.1\n").unwrap();
        a.symlink("link", "etc/conf").unwrap();
        let bytes = a.finish().unwrap();
        let mut child = std::process::Command::new(cpio)
            .args(["-t", "-v"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(&bytes).unwrap();
        let out = child.wait_with_output().unwrap();
        let listing = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            listing.contains("-rw-------") && listing.contains("etc/conf"),
            "{listing}"
        );
        assert!(listing.contains("link -> etc/conf"), "{listing}");
    }
}
