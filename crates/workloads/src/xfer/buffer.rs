//! Transfer buffers mapped with an explicit page backing.
//!
//! Each buffer sits inside a larger `PROT_NONE` reservation, aligned to its page size,
//! with at least one inaccessible page on either side. The alignment lets a `thp` buffer
//! be covered by whole huge pages; the guard pages stop the kernel from merging the
//! buffer's mapping with a neighbour, so its own line in smaps describes it alone.
//!
//! Nothing here allocates on the heap: the pvm peer uses it in a child forked from a
//! multi-threaded process, where only async-signal-safe work is allowed.

use std::ptr;

/// The page backing of a buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backing {
    /// Base pages; transparent huge pages are refused for the mapping (MADV_NOHUGEPAGE).
    Small,
    /// Transparent huge pages asked for with MADV_HUGEPAGE; the kernel may still give
    /// base pages, which the backing check reports.
    Thp,
    /// hugetlb pages of 2 MiB (MAP_HUGETLB | MAP_HUGE_2MB).
    Huge2M,
    /// hugetlb pages of 1 GiB (MAP_HUGETLB | MAP_HUGE_1GB).
    Huge1G,
}

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;
const BASE_PAGE: u64 = 4 * KIB;

impl Backing {
    pub const NAMES: &'static [&'static str] = &["4k", "thp", "2m", "1g"];

    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "4k" => Some(Backing::Small),
            "thp" => Some(Backing::Thp),
            "2m" => Some(Backing::Huge2M),
            "1g" => Some(Backing::Huge1G),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Backing::Small => "4k",
            Backing::Thp => "thp",
            Backing::Huge2M => "2m",
            Backing::Huge1G => "1g",
        }
    }

    /// The page size a buffer is mapped in whole multiples of. For `thp` this is the PMD
    /// size of x86-64 (and of arm64 with 4 KiB base pages), so that even a buffer under
    /// 2 MiB can sit on one huge page, as it does with `2m`.
    pub fn page_bytes(self) -> u64 {
        match self {
            Backing::Small => BASE_PAGE,
            Backing::Thp | Backing::Huge2M => 2 * MIB,
            Backing::Huge1G => GIB,
        }
    }

    pub fn is_hugetlb(self) -> bool {
        matches!(self, Backing::Huge2M | Backing::Huge1G)
    }

    /// Whether a point with this backing should be wholly on huge pages.
    pub fn wants_huge(self) -> bool {
        self != Backing::Small
    }

    /// The hugetlb pool's page size in kB, as in `hugepages-<N>kB`.
    pub fn pool_kb(self) -> Option<u64> {
        self.is_hugetlb().then(|| self.page_bytes() / KIB)
    }
}

/// The bytes a buffer of `size` bytes occupies: whole pages of its backing.
pub fn mapped_len(size: u64, backing: Backing) -> u64 {
    let page = backing.page_bytes();
    size.div_ceil(page).saturating_mul(page)
}

/// The step at which mapping or locking a buffer failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MapStep {
    Reserve = 1,
    Map = 2,
    Advise = 3,
    Lock = 4,
}

impl MapStep {
    pub fn from_code(code: u64) -> Option<Self> {
        match code {
            1 => Some(MapStep::Reserve),
            2 => Some(MapStep::Map),
            3 => Some(MapStep::Advise),
            4 => Some(MapStep::Lock),
            _ => None,
        }
    }
}

/// A failed mapping step with its errno; plain data, so the peer can send it in a pipe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MapError {
    pub step: MapStep,
    pub errno: i32,
}

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// One mapped buffer; unmapped (reservation and guards with it) when dropped.
#[derive(Debug)]
pub struct Buffer {
    reserve: *mut libc::c_void,
    reserve_len: usize,
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the buffer is plain memory owned by this value; nothing else aliases it.
unsafe impl Send for Buffer {}

impl Buffer {
    /// Maps `len` bytes (a multiple of the backing's page size, see [`mapped_len`]). No
    /// page is touched: the first access faults it in.
    ///
    /// No step ever maps over a range with `MAP_FIXED`: when such a call fails the kernel
    /// may already have unmapped the range it was to replace, another thread's mmap can
    /// then land in that hole, and this buffer's `munmap` of its whole reservation would
    /// unmap the other thread's memory under it (seen as a SIGSEGV in a concurrent
    /// memcpy). hugetlb buffers are mapped where the kernel puts them (it aligns them to
    /// their page size); other buffers are carved out of a reservation by `mprotect`,
    /// which never unmaps.
    pub fn map(len: u64, backing: Backing) -> Result<Self, MapError> {
        let len = len as usize;
        if backing.is_hugetlb() {
            return Self::map_hugetlb(len, backing);
        }
        let align = backing.page_bytes() as usize;
        let fail = |step| MapError {
            step,
            errno: errno(),
        };
        let reserve_len = len
            .checked_add(2 * align + 2 * BASE_PAGE as usize)
            .ok_or(MapError {
                step: MapStep::Reserve,
                errno: libc::ENOMEM,
            })?;
        // SAFETY: a fresh anonymous reservation; no existing memory is affected.
        let reserve = unsafe {
            libc::mmap(
                ptr::null_mut(),
                reserve_len,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if reserve == libc::MAP_FAILED {
            return Err(fail(MapStep::Reserve));
        }
        // The buffer starts on its page size, at least one base page into the
        // reservation; the inaccessible pages around it keep it from merging with a
        // neighbouring mapping.
        let base = reserve as usize + BASE_PAGE as usize;
        let start = base.div_ceil(align) * align;
        let out = Buffer {
            reserve,
            reserve_len,
            ptr: start as *mut u8,
            len,
        };
        // SAFETY: the range lies inside our own reservation.
        if unsafe { libc::mprotect(out.ptr.cast(), len, libc::PROT_READ | libc::PROT_WRITE) } != 0 {
            // `out` unmaps the reservation on the way out.
            return Err(fail(MapStep::Map));
        }
        let advice = match backing {
            Backing::Thp => libc::MADV_HUGEPAGE,
            _ => libc::MADV_NOHUGEPAGE,
        };
        out.advise(&[advice])?;
        Ok(out)
    }

    /// A hugetlb buffer: one mapping, aligned to its page size by the kernel, so a
    /// failure (no pool) leaves nothing mapped.
    fn map_hugetlb(len: usize, backing: Backing) -> Result<Self, MapError> {
        let size = match backing {
            Backing::Huge1G => libc::MAP_HUGE_1GB,
            _ => libc::MAP_HUGE_2MB,
        };
        // SAFETY: a fresh mapping; no existing memory is affected.
        let p = unsafe {
            libc::mmap(
                ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_HUGETLB | size,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(MapError {
                step: MapStep::Map,
                errno: errno(),
            });
        }
        let out = Buffer {
            reserve: p,
            reserve_len: len,
            ptr: p.cast(),
            len,
        };
        if !(p as usize).is_multiple_of(backing.page_bytes() as usize) {
            // Not expected from any kernel; a misaligned buffer would not measure what
            // the backing promises.
            return Err(MapError {
                step: MapStep::Map,
                errno: libc::EINVAL,
            });
        }
        out.advise(&[])?;
        Ok(out)
    }

    /// Applies `advice` and MADV_DONTFORK to the buffer. DONTFORK because advice is not
    /// inherited the other way: a fork elsewhere in the process (the pvm peer, another
    /// workload) would otherwise make these pages copy-on-write, and the next write to
    /// them would fault inside a timed transfer.
    fn advise(&self, advice: &[libc::c_int]) -> Result<(), MapError> {
        for &adv in advice.iter().chain(&[libc::MADV_DONTFORK]) {
            // SAFETY: advice on our own mapping.
            if unsafe { libc::madvise(self.ptr.cast(), self.len, adv) } != 0 {
                return Err(MapError {
                    step: MapStep::Advise,
                    errno: errno(),
                });
            }
        }
        Ok(())
    }

    pub fn addr(&self) -> u64 {
        self.ptr as u64
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn as_ptr(&self) -> *const u8 {
        self.ptr
    }

    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr
    }

    /// Faults in and locks the whole buffer (mlock).
    pub fn lock(&self) -> Result<(), MapError> {
        // SAFETY: locks our own mapping.
        if unsafe { libc::mlock(self.ptr.cast(), self.len) } != 0 {
            return Err(MapError {
                step: MapStep::Lock,
                errno: errno(),
            });
        }
        Ok(())
    }

    /// Writes every byte (zeros), faulting every page in for writing.
    pub fn touch(&mut self) {
        // SAFETY: writes within our own mapping.
        unsafe { libc::memset(self.ptr.cast(), 0, self.len) };
    }

    /// Writes the pattern of `seed` over the first `bytes` bytes.
    pub fn fill_pattern(&mut self, bytes: usize, seed: u64) {
        let bytes = bytes.min(self.len);
        for (off, b) in PatternBytes::new(seed, bytes) {
            // SAFETY: `off` < bytes <= len; the buffer is page-aligned, so an 8-byte
            // write at an 8-byte offset is aligned.
            unsafe {
                if b.len() == 8 {
                    ptr::write(self.ptr.add(off).cast::<[u8; 8]>(), b.word);
                } else {
                    ptr::copy_nonoverlapping(b.word.as_ptr(), self.ptr.add(off), b.len());
                }
            }
        }
    }

    /// The first offset among the first `bytes` bytes that differs from the pattern of
    /// `seed`, or `None` when all match.
    pub fn check_pattern(&self, bytes: usize, seed: u64) -> Option<usize> {
        let bytes = bytes.min(self.len);
        for (off, b) in PatternBytes::new(seed, bytes) {
            for (j, want) in b.word[..b.len()].iter().enumerate() {
                // SAFETY: off + j < bytes <= len.
                if unsafe { *self.ptr.add(off + j) } != *want {
                    return Some(off + j);
                }
            }
        }
        None
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the reservation this value created, which holds the
        // buffer; no reference into it outlives `self`.
        unsafe { libc::munmap(self.reserve, self.reserve_len) };
    }
}

/// One 8-byte word of the pattern, possibly cut short at the end of the range.
struct PatternWord {
    word: [u8; 8],
    take: usize,
}

impl PatternWord {
    fn len(&self) -> usize {
        self.take
    }
}

/// The pattern as (offset, word) pairs: word k is a mix of k and the seed, so a copy
/// that lands at the wrong offset, or a stale buffer from another seed, shows up.
struct PatternBytes {
    seed: u64,
    k: usize,
    bytes: usize,
}

impl PatternBytes {
    fn new(seed: u64, bytes: usize) -> Self {
        Self { seed, k: 0, bytes }
    }
}

impl Iterator for PatternBytes {
    type Item = (usize, PatternWord);

    fn next(&mut self) -> Option<Self::Item> {
        let off = self.k.checked_mul(8)?;
        if off >= self.bytes {
            return None;
        }
        let v = (self.k as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ self.seed;
        self.k += 1;
        Some((
            off,
            PatternWord {
                word: v.to_le_bytes(),
                take: (self.bytes - off).min(8),
            },
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_round_up_to_the_backing_page() {
        assert_eq!(mapped_len(64 << 10, Backing::Small), 64 << 10);
        assert_eq!(mapped_len(5000, Backing::Small), 8192);
        assert_eq!(mapped_len(64 << 10, Backing::Thp), 2 << 20);
        assert_eq!(mapped_len(3 << 20, Backing::Huge2M), 4 << 20);
        assert_eq!(mapped_len(1 << 20, Backing::Huge1G), 1 << 30);
        for name in Backing::NAMES {
            assert_eq!(Backing::from_name(name).map(Backing::name), Some(*name));
        }
        assert_eq!(Backing::Huge2M.pool_kb(), Some(2048));
        assert_eq!(Backing::Thp.pool_kb(), None);
    }

    #[test]
    fn buffers_are_aligned_and_carry_the_pattern() {
        for backing in [Backing::Small, Backing::Thp] {
            let len = mapped_len(100_000, backing);
            let mut b = Buffer::map(len, backing).unwrap();
            assert_eq!(b.addr() % backing.page_bytes(), 0);
            assert_eq!(b.len() as u64, len);
            b.fill_pattern(100_003, 7);
            assert_eq!(b.check_pattern(100_003, 7), None);
            assert_eq!(b.check_pattern(100_003, 8), Some(0));
            // SAFETY: within the buffer.
            unsafe { *b.as_mut_ptr().add(99_999) ^= 1 };
            assert_eq!(b.check_pattern(100_003, 7), Some(99_999));
            b.touch();
            b.lock().unwrap();
        }
    }

    /// A hugetlb map that fails (no pool) while other threads map and write their own
    /// buffers must leave their memory alone: with a `MAP_FIXED` over a reservation, the
    /// failed call could leave a hole that another thread's mapping took, and the failed
    /// buffer's drop then unmapped it (a SIGSEGV in the writer).
    #[test]
    fn a_failed_hugetlb_map_never_unmaps_another_threads_buffer() {
        use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
        let done = AtomicBool::new(false);
        let failures = AtomicU32::new(0);
        std::thread::scope(|s| {
            s.spawn(|| {
                for _ in 0..3000 {
                    if Buffer::map(2 << 20, Backing::Huge2M).is_err() {
                        failures.fetch_add(1, Ordering::Relaxed);
                    }
                }
                done.store(true, Ordering::Relaxed);
            });
            for _ in 0..2 {
                s.spawn(|| {
                    while !done.load(Ordering::Relaxed) {
                        let mut b = Buffer::map(64 << 10, Backing::Small).unwrap();
                        b.touch();
                        b.fill_pattern(64 << 10, 3);
                        assert_eq!(b.check_pattern(64 << 10, 3), None);
                    }
                });
            }
        });
        if failures.load(Ordering::Relaxed) == 0 {
            eprintln!(
                "skipped: every hugetlb map succeeded (this machine has a 2 MiB pool), so no \
                 failed map raced the writers"
            );
        }
    }
}
