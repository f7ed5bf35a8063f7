//! `SysRoot`: the one door to /proc, /sys and /dev.
//!
//! Every read and write of kernel interfaces goes through a `SysRoot`, so that parsers,
//! monitors and knobs can be pointed at a captured tree of another machine
//! (`tests/fixtures/<host>`) or at a writable copy of one in tests.

use std::fs::{self, File, OpenOptions};
use std::io::{BufReader, Read, Write};
use std::path::{Path, PathBuf};

use crate::sys_error::SysError;

/// A root directory under which `proc/`, `sys/` and `dev/` are found. `/` on a live host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SysRoot {
    root: PathBuf,
}

impl Default for SysRoot {
    fn default() -> Self {
        Self::host()
    }
}

impl SysRoot {
    /// The running machine.
    pub fn host() -> Self {
        Self {
            root: PathBuf::from("/"),
        }
    }

    /// A captured or fake tree rooted at `root`.
    pub fn at(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// True when this root is the live machine (`/`).
    pub fn is_host(&self) -> bool {
        self.root == Path::new("/")
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Absolute path of a kernel interface, given as `proc/interrupts` or `/proc/interrupts`.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel.trim_start_matches('/'))
    }

    pub fn exists(&self, rel: &str) -> bool {
        self.path(rel).exists()
    }

    /// Opens a file for a parser that takes a reader.
    pub fn open(&self, rel: &str) -> Result<BufReader<File>, SysError> {
        let path = self.path(rel);
        File::open(&path)
            .map(BufReader::new)
            .map_err(|e| SysError::io(path, e))
    }

    /// Reads a whole file as text (lossy: sysfs attributes from other machines may hold
    /// anything, and a parser must never panic on them).
    pub fn read_string(&self, rel: &str) -> Result<String, SysError> {
        let path = self.path(rel);
        let mut bytes = Vec::new();
        File::open(&path)
            .and_then(|mut f| f.read_to_end(&mut bytes))
            .map_err(|e| SysError::io(path, e))?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// Reads a one-value attribute with surrounding whitespace removed.
    pub fn read_trimmed(&self, rel: &str) -> Result<String, SysError> {
        Ok(self.read_string(rel)?.trim().to_string())
    }

    /// Reads a one-value attribute and parses it.
    pub fn read_parsed<T: std::str::FromStr>(&self, rel: &str) -> Result<T, SysError> {
        let text = self.read_trimmed(rel)?;
        text.parse().map_err(|_| SysError::Parse {
            path: self.path(rel),
            line: 1,
            reason: format!("cannot parse {text:?}"),
        })
    }

    /// Raw bytes, for journaling the exact original content of a file.
    pub fn read_bytes(&self, rel: &str) -> Result<Vec<u8>, SysError> {
        let path = self.path(rel);
        fs::read(&path).map_err(|e| SysError::io(path, e))
    }

    /// Writes an attribute the way the kernel expects: one write, no truncation games
    /// (sysfs ignores O_TRUNC; a fake tree needs it, so it is set and harmless).
    pub fn write(&self, rel: &str, value: &[u8]) -> Result<(), SysError> {
        let path = self.path(rel);
        let mut f = OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(&path)
            .map_err(|e| SysError::io(path.clone(), e))?;
        f.write_all(value).map_err(|e| SysError::io(path, e))
    }

    /// Whether the attribute can be opened for writing by this process.
    pub fn writable(&self, rel: &str) -> bool {
        OpenOptions::new().write(true).open(self.path(rel)).is_ok()
    }

    /// Names of the entries of a directory, sorted.
    pub fn list_dir(&self, rel: &str) -> Result<Vec<String>, SysError> {
        let path = self.path(rel);
        let mut names: Vec<String> = fs::read_dir(&path)
            .map_err(|e| SysError::io(path.clone(), e))?
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        Ok(names)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_joins_absolute_and_relative_forms() {
        let r = SysRoot::at("/tmp/x");
        assert_eq!(r.path("/proc/stat"), PathBuf::from("/tmp/x/proc/stat"));
        assert_eq!(r.path("proc/stat"), PathBuf::from("/tmp/x/proc/stat"));
        assert!(SysRoot::host().is_host());
        assert!(!r.is_host());
    }

    #[test]
    fn write_then_read_round_trips_on_a_fake_tree() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("sys/a")).unwrap();
        std::fs::write(dir.path().join("sys/a/v"), "0\n").unwrap();
        let r = SysRoot::at(dir.path());
        r.write("sys/a/v", b"1").unwrap();
        assert_eq!(r.read_parsed::<u32>("sys/a/v").unwrap(), 1);
        let err = r.read_string("sys/missing").unwrap_err();
        assert!(err.to_string().contains("sys/missing"), "{err}");
    }
}
