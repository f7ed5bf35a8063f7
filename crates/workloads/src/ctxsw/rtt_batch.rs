//! Round-trip times on their way into the `rtt` histogram, a batch at a time.
//!
//! Recording into the HDR histogram at every round trip touched its counts array (about
//! 400 KiB for 1 ns to 60 s at 3 digits) right after a context switch whose kernel path
//! had pushed it out of the caches: `hdrhistogram::record_n_inner` alone was about 45 ns of
//! a same-CPU round trip's CPU time (`perf record -e cpu-clock`, 2-vCPU guest), more than
//! the clock read. The times go into a small array instead, written in sequence, and are
//! recorded in one go when it is full; the ping loop keeps that recording out of the
//! timed chain.

use hdrhistogram::Histogram;

/// Round trips per batch: 8 KiB of times, a few hundred microseconds of round trips.
const LEN: usize = 1024;

pub(crate) struct RttBatch {
    times: Box<[u64; LEN]>,
    len: usize,
}

impl RttBatch {
    pub(crate) fn new() -> Self {
        Self {
            times: Box::new([0; LEN]),
            len: 0,
        }
    }

    /// Keeps one time; true when the batch is full and must be flushed before the next.
    #[inline(always)]
    pub(crate) fn push(&mut self, ns: u64) -> bool {
        // `len` is below LEN here: a full batch is flushed before the next push.
        self.times[self.len & (LEN - 1)] = ns;
        self.len += 1;
        self.len == LEN
    }

    /// Records the kept times into `hist` and empties the batch.
    pub(crate) fn flush(&mut self, hist: &mut Histogram<u64>) {
        for &ns in &self.times[..self.len] {
            hist.saturating_record(ns);
        }
        self.len = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_time_pushed_reaches_the_histogram_once() {
        let mut h = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).unwrap();
        let mut b = RttBatch::new();
        let mut full = 0;
        for i in 0..(2 * LEN as u64 + 5) {
            if b.push(1000 + i) {
                b.flush(&mut h);
                full += 1;
            }
        }
        b.flush(&mut h);
        b.flush(&mut h);
        assert_eq!(full, 2);
        assert_eq!(h.len(), 2 * LEN as u64 + 5);
        assert_eq!(h.min(), 1000);
        assert!(h.equivalent(h.max(), 1000 + 2 * LEN as u64 + 4));
    }
}
