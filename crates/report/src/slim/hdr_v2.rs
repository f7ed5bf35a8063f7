//! Summing HDR histograms in their stored form (hdrhistogram's V2 encoding, as
//! `HistogramData::from_hdr` writes it) without decoding each into a histogram first.
//!
//! Decoding allocates the whole counts array (200 KiB for ctxsw's and netrr's bounds) and
//! adding walks all of it: at 100,000 measurements that alone took seconds. Here a
//! payload's run-length counts are added straight into one counts array per cell, and the
//! sum is encoded back as V2, which the crate's own `Deserializer` then reads exactly as
//! it would have read the sum of the decoded repetitions.
//!
//! The V2 layout (big-endian): cookie u32, payload length u32, normalizing offset u32,
//! significant digits u32, lowest u64, highest u64, integer-to-double ratio f64, then the
//! payload: zig-zag LEB128 varints (of at most 9 bytes, the 9th taken whole), each a
//! count, or when negative a run of that many empty buckets.

use std::collections::HashMap;

use hdrhistogram::Histogram;

/// The crate's V2 cookie (uncompressed).
const COOKIE: u32 = 0x1c84_9303 | 0x10;
const HEADER: usize = 40;

/// What decides the meaning of a counts array: two histograms with the same header add
/// bucket by bucket.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Header {
    digits: u32,
    low: u64,
    high: u64,
}

/// The header of `bytes` and its payload, or `None` for anything this module does not
/// sum itself (compressed, normalized, truncated): such a histogram is left to the crate.
fn split(bytes: &[u8]) -> Option<(Header, &[u8])> {
    let u32_at = |i: usize| Some(u32::from_be_bytes(bytes.get(i..i + 4)?.try_into().ok()?));
    let u64_at = |i: usize| Some(u64::from_be_bytes(bytes.get(i..i + 8)?.try_into().ok()?));
    if u32_at(0)? != COOKIE || u32_at(8)? != 0 || f64::from_bits(u64_at(32)?) != 1.0 {
        return None;
    }
    let len = usize::try_from(u32_at(4)?).ok()?;
    let payload = bytes.get(HEADER..HEADER.checked_add(len)?)?;
    let header = Header {
        digits: u32_at(12)?,
        low: u64_at(16)?,
        high: u64_at(24)?,
    };
    Some((header, payload))
}

/// One varint at the start of `b`: its value and length.
fn varint(b: &[u8]) -> Option<(u64, usize)> {
    let mut v = 0u64;
    for i in 0..9 {
        let byte = *b.get(i)?;
        if i == 8 {
            return Some((v | u64::from(byte) << 56, 9));
        }
        v |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return Some((v, i + 1));
        }
    }
    None
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    for _ in 0..8 {
        if v < 0x80 {
            out.push(v as u8);
            return;
        }
        out.push(0x80 | (v & 0x7f) as u8);
        v >>= 7;
    }
    out.push(v as u8);
}

/// What [`walk`] did with a payload.
#[derive(Debug, PartialEq)]
enum Walked {
    /// Every count applied; `wrapped` when some bucket passed 32 bits (and wrapped).
    Whole { wrapped: bool },
    /// Refused (cut short, past `len` buckets, a count past 32 bits, the deserializer's
    /// errors) after the first `applied` non-zero counts were applied.
    Refused { applied: usize },
}

/// Adds each non-zero count of `payload` into `counts` at its bucket (wrapping at 32 bits;
/// `TAKE_BACK`: subtracts it instead), growing `counts` to the buckets it reaches, for at
/// most `limit` counts. One pass that adds as it decodes: wrapping adds are undone exactly
/// by wrapping subtractions, so a payload refused halfway (rare) is taken back by walking
/// it again as far, and nothing is kept aside for the common case.
fn walk<const TAKE_BACK: bool>(
    payload: &[u8],
    len: usize,
    counts: &mut Vec<u32>,
    limit: usize,
) -> Walked {
    let mut at = Cursor::default();
    while at.byte < payload.len() && at.applied < limit {
        at.one_byte_stretch::<TAKE_BACK>(payload, counts, limit);
        if at.byte == payload.len() || at.applied >= limit {
            break;
        }
        if at.any_varint::<TAKE_BACK>(payload, len, counts).is_none() {
            return Walked::Refused {
                applied: at.applied,
            };
        }
    }
    Walked::Whole {
        wrapped: at.wrapped,
    }
}

/// Where a [`walk`] is: the payload byte, the bucket, the counts applied so far, and
/// whether a bucket wrapped.
#[derive(Default)]
struct Cursor {
    byte: usize,
    bucket: usize,
    applied: usize,
    wrapped: bool,
}

impl Cursor {
    /// Walks the common case (97% of ctxsw's and netrr's varints) until it ends: one
    /// byte, at a bucket `counts` already holds, over the counts as a slice (so nothing
    /// is reloaded after each add) and without a branch on what the byte holds: an even
    /// byte is a count of b/2 for this bucket, an odd one a run of b/2 + 1 empty buckets,
    /// which adds 0 here.
    fn one_byte_stretch<const TAKE_BACK: bool>(
        &mut self,
        payload: &[u8],
        counts: &mut [u32],
        limit: usize,
    ) {
        let (mut at, mut index, mut applied, mut wrapped) =
            (self.byte, self.bucket, self.applied, self.wrapped);
        while let Some(&b) = payload.get(at) {
            if b >= 0x80 || index >= counts.len() || applied >= limit {
                break;
            }
            let half = usize::from(b >> 1);
            let count_mask = usize::from(b & 1).wrapping_sub(1);
            let c = (half & count_mask) as u32;
            let (sum, over) = if TAKE_BACK {
                counts[index].overflowing_sub(c)
            } else {
                counts[index].overflowing_add(c)
            };
            counts[index] = sum;
            wrapped |= over;
            applied += usize::from(c != 0);
            index += 1 + (half & !count_mask);
            at += 1;
        }
        (self.byte, self.bucket, self.applied, self.wrapped) = (at, index, applied, wrapped);
    }

    /// Walks one varint of any length at any bucket, growing `counts` to it; `None`
    /// where the payload is refused.
    fn any_varint<const TAKE_BACK: bool>(
        &mut self,
        payload: &[u8],
        len: usize,
        counts: &mut Vec<u32>,
    ) -> Option<()> {
        let (zz, n) = varint(&payload[self.byte..])?;
        self.byte += n;
        if zz & 1 == 1 {
            // A run of (zz >> 1) + 1 empty buckets (zig-zag: -v - 1 = zz >> 1).
            self.bucket = self.bucket.checked_add((zz >> 1) as usize + 1)?;
            return Some(());
        }
        let c = u32::try_from(zz >> 1).ok()?;
        if c > 0 {
            if self.bucket >= len {
                return None;
            }
            if self.bucket >= counts.len() {
                if self.bucket >= counts.capacity() {
                    // Room for every bucket at once, given back by `Sum::add` after the
                    // walk: growing bucket by bucket copied the counts again and again.
                    counts.reserve_exact(len - counts.len());
                }
                counts.resize(self.bucket + 1, 0);
            }
            let slot = &mut counts[self.bucket];
            let (sum, over) = if TAKE_BACK {
                slot.overflowing_sub(c)
            } else {
                slot.overflowing_add(c)
            };
            *slot = sum;
            self.wrapped |= over;
            self.applied += 1;
        }
        self.bucket += 1;
        Some(())
    }
}

/// What summing keeps from one sum to the next: the counts arrays' lengths by header,
/// so each is computed once, and a zeroed array of every bucket that each sum's first
/// payload is walked into before the sum takes its own array at its size (growing the
/// sum's array bucket by bucket and then trimming it was a tenth of a compare over
/// 1,000 points, whose 2,000 cells have 10 repetitions each).
#[derive(Default)]
pub(crate) struct Workspace {
    lengths: HashMap<Header, Option<usize>>,
    zeroed: Vec<u32>,
}

impl Workspace {
    fn len_of(&mut self, h: Header) -> Option<usize> {
        *self.lengths.entry(h).or_insert_with(|| {
            let digits = u8::try_from(h.digits).ok()?;
            Histogram::<u64>::new_with_bounds(h.low, h.high, digits)
                .ok()
                .map(|x| x.distinct_values())
        })
    }
}

/// The sum of some V2-encoded histograms that share a header.
///
/// Its counts are 32-bit and only as many as its highest bucket with a count: a report
/// over 1,000 points keeps 2,000 sums at once, and full 64-bit arrays for ctxsw's bounds
/// made that 400 MB. A count past 32 bits is refused like any other histogram this
/// module does not sum, so the readers decode it themselves.
pub(crate) struct Sum {
    header: Header,
    /// The buckets its header gives, whether or not `counts` reaches them yet.
    len: usize,
    counts: Vec<u32>,
}

impl Sum {
    /// A sum holding `bytes`; `None` where `add` would refuse them.
    pub(crate) fn first(bytes: &[u8], space: &mut Workspace) -> Option<Sum> {
        let (header, _) = split(bytes)?;
        let len = space.len_of(header)?;
        // Zeros for every bucket (a refused payload is taken back to zeros too).
        let mut counts = std::mem::take(&mut space.zeroed);
        counts.resize(len, 0);
        let mut s = Sum {
            header,
            len,
            counts,
        };
        let added = s.add(bytes);
        let mut zeroed = std::mem::take(&mut s.counts);
        let used = zeroed.iter().rposition(|&c| c > 0).map_or(0, |top| top + 1);
        s.counts = zeroed[..used].to_vec();
        zeroed[..used].fill(0);
        space.zeroed = zeroed;
        added.then_some(s)
    }

    /// Adds `bytes` when they decode and share the header; `false` (and the sum as it
    /// was) otherwise, where the crate's deserializer or its `add` might judge otherwise.
    pub(crate) fn add(&mut self, bytes: &[u8]) -> bool {
        let Some((header, payload)) = split(bytes) else {
            return false;
        };
        if header != self.header {
            return false;
        }
        let (len, had) = (self.len, self.counts.len());
        let applied = match walk::<false>(payload, len, &mut self.counts, usize::MAX) {
            Walked::Whole { wrapped: false } => {
                if self.counts.capacity() > self.counts.len() + self.counts.len() / 8 {
                    // Grown this time: back to what it holds, as the sums must stay small.
                    self.counts.shrink_to_fit();
                }
                return true;
            }
            // A bucket past 32 bits: all of it taken back.
            Walked::Whole { wrapped: true } => usize::MAX,
            Walked::Refused { applied } => applied,
        };
        walk::<true>(payload, len, &mut self.counts, applied);
        self.counts.truncate(had);
        self.counts.shrink_to_fit();
        false
    }

    /// The sum in V2, up to its last bucket with a count, as the crate writes it.
    pub(crate) fn encode(&self) -> Vec<u8> {
        let last = self.counts.iter().rposition(|&c| c > 0);
        let mut payload = Vec::new();
        let mut i = 0;
        while let Some(last) = last.filter(|&l| i <= l) {
            if self.counts[i] == 0 {
                let start = i;
                while i <= last && self.counts[i] == 0 {
                    i += 1;
                }
                let zeros = -((i - start) as i64);
                put_varint(&mut payload, ((zeros << 1) ^ (zeros >> 63)) as u64);
            } else {
                put_varint(&mut payload, u64::from(self.counts[i]) << 1);
                i += 1;
            }
        }
        let mut out = Vec::with_capacity(HEADER + payload.len());
        out.extend(COOKIE.to_be_bytes());
        out.extend((payload.len() as u32).to_be_bytes());
        out.extend(0u32.to_be_bytes());
        out.extend(self.header.digits.to_be_bytes());
        out.extend(self.header.low.to_be_bytes());
        out.extend(self.header.high.to_be_bytes());
        out.extend(1.0f64.to_bits().to_be_bytes());
        out.extend(payload);
        out
    }
}

/// A valid V2 histogram holding nothing, with the smallest bounds (so decoding it costs
/// nothing): what a repetition whose counts went into its cell's sum carries instead.
pub(crate) fn empty() -> Vec<u8> {
    Sum {
        header: Header {
            digits: 0,
            low: 1,
            high: 2,
        },
        len: 0,
        counts: Vec::new(),
    }
    .encode()
}

#[cfg(test)]
mod tests {
    use super::*;
    use hdrhistogram::serialization::{Deserializer, Serializer, V2Serializer};
    use proptest::prelude::*;

    fn encode(h: &Histogram<u64>) -> Vec<u8> {
        let mut v = Vec::new();
        V2Serializer::new().serialize(h, &mut v).unwrap();
        v
    }

    fn decode(b: &[u8]) -> Histogram<u64> {
        Deserializer::new().deserialize(&mut &b[..]).unwrap()
    }

    fn hist(values: &[(u64, u64)]) -> Histogram<u64> {
        let mut h = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).unwrap();
        for &(v, n) in values {
            h.record_n(v, n).unwrap();
        }
        h
    }

    #[test]
    fn the_empty_marker_decodes_to_an_empty_histogram() {
        let h = decode(&empty());
        assert_eq!(h.len(), 0);
        let mut big = hist(&[(5, 1)]);
        big.add(&h).unwrap();
        assert_eq!(big.len(), 1);
    }

    #[test]
    fn other_bounds_and_garbage_are_refused_not_summed() {
        let mut space = Workspace::default();
        let mut s = Sum::first(&encode(&hist(&[(100, 2)])), &mut space).unwrap();
        let other = Histogram::<u64>::new_with_bounds(1, 1000, 2).unwrap();
        assert!(!s.add(&encode(&other)));
        assert!(!s.add(b"not a histogram"));
        let mut cut = encode(&hist(&[(100, 2), (1 << 30, 1)]));
        cut.truncate(cut.len() - 1);
        assert!(!s.add(&cut));
        assert_eq!(decode(&s.encode()), hist(&[(100, 2)]));
    }

    #[test]
    fn a_count_past_32_bits_is_refused_and_leaves_the_sum_as_it_was() {
        let mut space = Workspace::default();
        let mut s = Sum::first(&encode(&hist(&[(100, 3), (5_000, 1)])), &mut space).unwrap();
        assert!(!s.add(&encode(&hist(&[(100, 1), (5_000, u64::from(u32::MAX))]))));
        assert!(!s.add(&encode(&hist(&[(7, 1 << 33)]))));
        assert_eq!(decode(&s.encode()), hist(&[(100, 3), (5_000, 1)]));
    }

    proptest! {
        /// A payload refused partway (cut short at any byte, or a bucket passing 32 bits)
        /// after some of its counts were added leaves the sum exactly as it was.
        #[test]
        fn a_refused_payload_is_taken_back_whole(
            first in prop::collection::vec((1u64..50_000_000_000, 1u64..1_000), 1..40),
            second in prop::collection::vec((1u64..50_000_000_000, 1u64..300), 1..40),
            cut in 0.0f64..1.0,
            huge in any::<bool>(),
        ) {
            let mut space = Workspace::default();
            let mut s = Sum::first(&encode(&hist(&first)), &mut space).unwrap();
            let before = s.encode();
            let mut second = second;
            if huge {
                // Passes 32 bits in the sum, though not in its own payload.
                second.push((first[0].0, u64::from(u32::MAX) - first[0].1 + 1));
            }
            let mut bytes = encode(&hist(&second));
            if huge {
                prop_assert!(!s.add(&bytes));
            } else {
                // Cut, with the header's payload length saying so, so the walk itself
                // meets the end: within a varint it refuses, between two it adds less.
                let payload = ((bytes.len() - HEADER) as f64 * cut) as usize;
                bytes.truncate(HEADER + payload);
                bytes[4..8].copy_from_slice(&(payload as u32).to_be_bytes());
                if s.add(&bytes) {
                    return Ok(());
                }
            }
            prop_assert_eq!(s.encode(), before);
        }

        /// The sum encoded back decodes to what adding the decoded histograms gives:
        /// the same counts, so every quantile, the count, minimum and maximum agree.
        #[test]
        fn summing_encoded_equals_adding_decoded(
            reps in prop::collection::vec(
                prop::collection::vec((1u64..50_000_000_000, 1u64..1_000), 0..60),
                1..8,
            )
        ) {
            let hs: Vec<Histogram<u64>> = reps.iter().map(|r| hist(r)).collect();
            let mut space = Workspace::default();
            let mut s = Sum::first(&encode(&hs[0]), &mut space).unwrap();
            let mut want = hs[0].clone();
            for h in &hs[1..] {
                prop_assert!(s.add(&encode(h)));
                want.add(h).unwrap();
            }
            let got = decode(&s.encode());
            prop_assert_eq!(got.len(), want.len());
            prop_assert_eq!(got.max(), want.max());
            prop_assert_eq!(got.min(), want.min());
            for q in [0.0, 0.1, 0.5, 0.9, 0.99, 0.999, 1.0] {
                prop_assert_eq!(got.value_at_quantile(q), want.value_at_quantile(q));
            }
            prop_assert_eq!(got.mean(), want.mean());
            prop_assert_eq!(got.stdev(), want.stdev());
        }
    }
}
