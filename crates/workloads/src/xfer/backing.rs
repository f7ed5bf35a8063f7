//! Checks the page backing a buffer really got, from its process's smaps.
//!
//! This is the live state of a process of this very measurement (this one, or the pvm
//! peer it forked), not the machine's configuration, so — like /proc/thread-self/sched in
//! perflab-core's thread records — it is read from the real /proc rather than through a
//! SysRoot that may point at another machine's captured tree.

use std::fs::File;
use std::io::BufReader;

use perflab_sys::smaps::find_mapping;

use super::buffer::Backing;

/// What one buffer was found to be backed by.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BackingSeen {
    /// Share of the mapping on huge pages (transparent or hugetlb), 0..=1.
    pub huge_fraction: f64,
}

/// Reads the mapping at `addr` of process `pid` (`None`: this process) and checks it
/// against `backing`. For hugetlb, a mapping whose kernel page size is not the pool's is
/// an error, never a point reported under the wrong label.
pub fn inspect(pid: Option<i32>, addr: u64, backing: Backing) -> Result<BackingSeen, String> {
    let path = match pid {
        Some(p) => format!("/proc/{p}/smaps"),
        None => "/proc/self/smaps".to_string(),
    };
    let file = File::open(&path).map_err(|e| format!("{path}: {e}"))?;
    let entry = find_mapping(BufReader::new(file), addr)
        .map_err(|e| format!("{path}: {e}"))?
        .ok_or_else(|| format!("{path}: no mapping holds address {addr:#x}"))?;
    if entry.is_empty() {
        return Err(format!("{path}: the mapping at {addr:#x} is empty"));
    }
    let huge = if backing.is_hugetlb() {
        let want = backing.page_bytes();
        match entry.kernel_page_size() {
            Some(got) if got == want => {}
            got => {
                return Err(format!(
                    "the {} buffer at {addr:#x} has kernel page size {} instead of {} kB \
                     ({path})",
                    backing.name(),
                    got.map(|g| format!("{} kB", g / 1024))
                        .unwrap_or_else(|| "unknown".into()),
                    want / 1024,
                ))
            }
        }
        entry.hugetlb_bytes()
    } else {
        entry.anon_huge_bytes()
    };
    Ok(BackingSeen {
        huge_fraction: (huge as f64 / entry.len() as f64).clamp(0.0, 1.0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::xfer::buffer::{mapped_len, Buffer};

    #[test]
    fn small_pages_show_no_huge_pages() {
        let len = mapped_len(4 << 20, Backing::Small);
        let mut b = Buffer::map(len, Backing::Small).unwrap();
        b.touch();
        let seen = inspect(None, b.addr(), Backing::Small).unwrap();
        assert_eq!(seen.huge_fraction, 0.0);
    }

    #[test]
    fn unknown_address_is_an_error() {
        let e = inspect(None, 8, Backing::Small).unwrap_err();
        assert!(e.contains("no mapping"), "{e}");
    }
}
