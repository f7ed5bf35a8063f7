//! The log-linear histogram the BPF program fills, read back in user space.
//!
//! A duration `v` in ns goes to bucket `v` itself below 2^[`MANTISSA_BITS`] (128 ns,
//! exact), and above it to the bucket of its highest set bit `e` and the next
//! [`MANTISSA_BITS`] bits below it: `((e - M + 1) << M) | ((v >> (e - M)) & (2^M - 1))`.
//! Every bucket is at most 1/128 of its lower bound wide (0.8 %: two significant digits
//! and a bit more, like an HDR histogram of 2 digits), the indices are contiguous, and the
//! same formula is emitted as a loop-free instruction sequence in [`super::codegen`].
//! Values from 2^34 ns (17 s) up land in one overflow bucket; 1 ns … 10 s have their own.

/// Bits of the value kept below its highest set bit.
pub const MANTISSA_BITS: u32 = 7;
const SUB: u64 = 1 << MANTISSA_BITS;
/// The highest set bit that still has buckets of its own (values below 2^34 ns).
pub const MAX_EXP: u32 = 33;
/// The bucket of every value ≥ 2^(MAX_EXP + 1).
pub const OVERFLOW: u32 = (MAX_EXP - MANTISSA_BITS + 2) << MANTISSA_BITS;
/// Buckets, the overflow one included.
pub const BUCKETS: usize = OVERFLOW as usize + 1;

/// The bucket of a duration in ns.
pub fn index(v: u64) -> u32 {
    if v < SUB {
        return v as u32;
    }
    let e = 63 - v.leading_zeros();
    if e > MAX_EXP {
        return OVERFLOW;
    }
    ((e - MANTISSA_BITS + 1) << MANTISSA_BITS) | ((v >> (e - MANTISSA_BITS)) & (SUB - 1)) as u32
}

/// The values a bucket holds, both ends included; `None` past the last bucket.
pub fn bounds(i: u32) -> Option<(u64, u64)> {
    if u64::from(i) < SUB {
        return Some((u64::from(i), u64::from(i)));
    }
    if i == OVERFLOW {
        return Some((1u64 << (MAX_EXP + 1), u64::MAX));
    }
    if i > OVERFLOW {
        return None;
    }
    let e = (i >> MANTISSA_BITS) + MANTISSA_BITS - 1;
    let shift = e - MANTISSA_BITS;
    let lo = (SUB + u64::from(i) % SUB) << shift;
    Some((lo, lo + (1u64 << shift) - 1))
}

/// The value a bucket stands for in quantiles: its middle (exact below 128 ns), so the
/// error of a reported percentile is at most half a bucket (0.4 %).
pub fn representative(i: u32) -> Option<u64> {
    match bounds(i)? {
        (lo, _) if i == OVERFLOW => Some(lo),
        (lo, hi) => Some(lo + (hi - lo) / 2),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn known_buckets() {
        assert_eq!(index(0), 0);
        assert_eq!(index(127), 127);
        assert_eq!(index(128), 128);
        assert_eq!(index(255), 255);
        // From 256 on a bucket holds two values, from 512 four, …
        assert_eq!(index(256), 256);
        assert_eq!(index(257), 256);
        assert_eq!(bounds(256), Some((256, 257)));
        assert_eq!(index(1000), index(1001));
        assert_eq!(bounds(index(1000)), Some((1000, 1003)));
        assert_eq!(OVERFLOW, 3584);
        assert_eq!(index((1 << 34) - 1), OVERFLOW - 1);
        assert_eq!(index(1 << 34), OVERFLOW);
        assert_eq!(index(u64::MAX), OVERFLOW);
        assert_eq!(bounds(OVERFLOW + 1), None);
    }

    #[test]
    fn one_ns_to_ten_s_have_their_own_buckets_contiguously() {
        assert!(index(10_000_000_000) < OVERFLOW);
        let mut next = 0;
        for i in 0..OVERFLOW {
            let (lo, hi) = bounds(i).unwrap();
            assert_eq!(
                lo,
                next,
                "bucket {i} starts where {} ended",
                i.saturating_sub(1)
            );
            assert!(hi >= lo);
            next = hi + 1;
        }
        assert_eq!(next, 1 << 34);
    }

    proptest! {
        #[test]
        fn a_value_lies_in_its_bucket(v in any::<u64>()) {
            let (lo, hi) = bounds(index(v)).unwrap();
            prop_assert!(lo <= v && v <= hi);
        }

        #[test]
        fn two_significant_digits(v in 1u64..(1 << 34)) {
            let (lo, hi) = bounds(index(v)).unwrap();
            // Width relative to the lower bound ≤ 1/128 < 1 %.
            prop_assert!((hi - lo + 1) * 128 <= lo.max(128));
            let mid = representative(index(v)).unwrap();
            prop_assert!(mid.abs_diff(v) as f64 <= v as f64 * 0.005 + 0.5);
        }

        #[test]
        fn buckets_round_trip(i in 0u32..=OVERFLOW) {
            let (lo, hi) = bounds(i).unwrap();
            prop_assert_eq!(index(lo), i);
            prop_assert_eq!(index(hi), i);
            prop_assert_eq!(index(representative(i).unwrap()), i);
        }

        #[test]
        fn index_is_monotonic(a in any::<u64>(), b in any::<u64>()) {
            let (a, b) = (a.min(b), a.max(b));
            prop_assert!(index(a) <= index(b));
        }
    }
}
