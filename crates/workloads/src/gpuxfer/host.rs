//! Host memory of a GPU copy in each kind the study compares: pageable on base pages or
//! transparent huge pages (the driver stages it through its own pinned buffers), a
//! hugetlb mapping registered with the driver (`cuMemHostRegister`), or memory the
//! driver allocated pinned (`cuMemAllocHost`).

use perflab_cuda::{Gpu, PinnedHost, Registered};

use crate::xfer::backing;
use crate::xfer::buffer::{mapped_len, Backing, Buffer, MapError, MapStep};

/// The host memory kind of a point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostKind {
    /// Mapped by perflab with this backing; hugetlb backings are registered.
    Mapped(Backing),
    /// `cuMemAllocHost`.
    Pinned,
}

impl HostKind {
    pub const NAMES: &'static [&'static str] = &["4k", "thp", "2m", "1g", "pinned"];

    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "pinned" => Some(HostKind::Pinned),
            other => Backing::from_name(other).map(HostKind::Mapped),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            HostKind::Mapped(b) => b.name(),
            HostKind::Pinned => "pinned",
        }
    }

    /// The hugetlb pool's page size in kB this kind maps from, if it does.
    pub fn pool_kb(self) -> Option<u64> {
        match self {
            HostKind::Mapped(b) => b.pool_kb(),
            HostKind::Pinned => None,
        }
    }

    /// Host bytes one buffer of `size` occupies.
    pub fn bytes(self, size: u64) -> u64 {
        match self {
            HostKind::Mapped(b) => mapped_len(size, b),
            HostKind::Pinned => size,
        }
    }
}

/// One host buffer. Fields drop in order: the registration before the mapping it covers.
pub enum HostBuf<'g> {
    Mapped {
        registered: Option<Registered<'g>>,
        buf: Buffer,
        huge_fraction: f64,
    },
    Pinned(PinnedHost<'g>),
}

impl<'g> HostBuf<'g> {
    /// Maps (or has the driver allocate) a buffer of `size` bytes, faults every page in,
    /// checks the backing it got and registers hugetlb memory with the driver.
    pub fn new(gpu: &'g Gpu, kind: HostKind, size: u64, label: &str) -> Result<Self, String> {
        match kind {
            HostKind::Pinned => PinnedHost::alloc(gpu, size as usize)
                .map(HostBuf::Pinned)
                .map_err(|e| format!("the {label}: {e}")),
            HostKind::Mapped(backing) => {
                let len = mapped_len(size, backing);
                let mut buf =
                    Buffer::map(len, backing).map_err(|e| map_error(label, backing, e))?;
                // Faulted in before anything is timed: pageable here means "may be paged",
                // not "never touched".
                buf.touch();
                let seen = backing::inspect(None, buf.addr(), backing)
                    .map_err(|e| format!("the {label}: {e}"))?;
                let registered = if backing.is_hugetlb() {
                    // SAFETY: the mapping is `buf`'s, which outlives the registration
                    // (declared after it in the variant, so dropped after it).
                    let r = unsafe { Registered::register(gpu, buf.as_mut_ptr(), len as usize) };
                    Some(r.map_err(|e| format!("the {label}: {e}"))?)
                } else {
                    None
                };
                Ok(HostBuf::Mapped {
                    registered,
                    buf,
                    huge_fraction: seen.huge_fraction,
                })
            }
        }
    }

    pub fn ptr(&mut self) -> *mut u8 {
        match self {
            HostBuf::Mapped { buf, .. } => buf.as_mut_ptr(),
            HostBuf::Pinned(p) => p.as_mut_ptr(),
        }
    }

    /// The buffer's first `len` bytes. No copy may be pending on it.
    pub fn bytes(&mut self, len: usize) -> &mut [u8] {
        let (p, have) = match self {
            HostBuf::Mapped { buf, .. } => (buf.as_mut_ptr(), buf.len()),
            HostBuf::Pinned(p) => (p.as_mut_ptr(), p.len()),
        };
        assert!(len <= have, "view longer than the buffer");
        // SAFETY: `len` bytes of memory this value owns, borrowed mutably through it.
        unsafe { std::slice::from_raw_parts_mut(p, len) }
    }

    /// Share of the buffer on huge pages, where perflab mapped it.
    pub fn huge_fraction(&self) -> Option<f64> {
        match self {
            HostBuf::Mapped { huge_fraction, .. } => Some(*huge_fraction),
            HostBuf::Pinned(_) => None,
        }
    }
}

fn map_error(label: &str, backing: Backing, e: MapError) -> String {
    let err = std::io::Error::from_raw_os_error(e.errno);
    match (e.step, backing.pool_kb()) {
        (MapStep::Map, Some(kb)) => format!(
            "cannot map the {label} on {} hugetlb pages: {err}; the pool \
             (/sys/kernel/mm/hugepages/hugepages-{kb}kB) is too small: fill it with the \
             perflab knob `hugepages={}:auto`",
            backing.name(),
            backing.name().to_uppercase()
        ),
        (step, _) => format!(
            "cannot map the {label} ({} backing): {step:?} step failed: {err}",
            backing.name()
        ),
    }
}

/// Writes the position-dependent pattern of `seed` (8-byte words: a 1 GiB buffer is
/// filled in well under a second).
pub fn fill(bytes: &mut [u8], seed: u64) {
    let mut words = bytes.chunks_exact_mut(8);
    for (k, w) in (&mut words).enumerate() {
        w.copy_from_slice(&word(k, seed));
    }
    let k = bytes.len() / 8;
    let tail = bytes.len() % 8;
    let last = word(k, seed);
    bytes[k * 8..].copy_from_slice(&last[..tail]);
}

/// The first offset that differs from the pattern of `seed`.
pub fn check(bytes: &[u8], seed: u64) -> Option<usize> {
    bytes.chunks(8).enumerate().find_map(|(k, w)| {
        let want = word(k, seed);
        w.iter()
            .zip(want)
            .position(|(a, b)| *a != b)
            .map(|j| k * 8 + j)
    })
}

fn word(k: usize, seed: u64) -> [u8; 8] {
    // Word index mixed with the seed: a copy at the wrong offset or a stale buffer shows.
    ((k as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ seed).to_le_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pattern_finds_a_changed_byte_and_a_stale_seed() {
        let mut b = vec![0u8; 1003];
        fill(&mut b, 5);
        assert_eq!(check(&b, 5), None);
        assert_eq!(check(&b, 6), Some(0));
        b[1001] ^= 1;
        assert_eq!(check(&b, 5), Some(1001));
        assert_eq!(HostKind::from_name("pinned"), Some(HostKind::Pinned));
        for n in HostKind::NAMES {
            assert_eq!(HostKind::from_name(n).map(HostKind::name), Some(*n));
        }
    }
}
