//! How many pairs `crosscheck gpu` spends on a row ([`crate::pairs`] has the method: the
//! median of interleaved pair ratios, its order-statistic interval, judged against
//! ±tolerance, more pairs while undecided).
//!
//! Why more pairs for pageable memory: its copies go through the driver's staging, whose
//! spread is the noise (on the H100 the pageable reference loop moved by ±25 % from one run
//! to the next: h2d thp 16 MiB, 12,487 then 15,770 MiB/s); pinned and registered memory is
//! DMA'd directly and steady. Pageable rows start with [`PAGEABLE`] pairs, the others with
//! [`DIRECT`] (docs/gpu-xfer.md).

pub use crate::pairs::{decide, estimate, judge, Decided, Estimate, Judgement, COVERAGE, MORE};

/// (first look, most) pairs for pinned and registered hugetlb memory.
pub const DIRECT: (usize, usize) = (6, 12);
/// (first look, most) pairs for pageable memory (4k, thp).
pub const PAGEABLE: (usize, usize) = (12, 24);

/// The pairs plan of a host memory kind.
pub fn plan(backing: &str) -> (usize, usize) {
    match backing {
        "4k" | "thp" => PAGEABLE,
        _ => DIRECT,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pageable_memory_gets_the_longer_plan() {
        assert_eq!(plan("thp"), PAGEABLE);
        assert_eq!(plan("4k"), PAGEABLE);
        assert_eq!(plan("2m"), DIRECT);
        assert_eq!(plan("pinned"), DIRECT);
    }
}
