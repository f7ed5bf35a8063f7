//! The timing probe stored with every run: a fixed integer loop and a fixed memory copy,
//! each timed as the median of a few short tries. Comparing two runs' probes tells
//! whether the machine itself ran at another speed between them (the drift guard of
//! `perflab compare` and `perflab report`, see `perflab_stats::drift`).
//!
//! It is cheap on purpose (under 10 ms in a release build, well under 100 ms in a debug
//! build), so its value
//! is only a guide: a probe that moved says "look out", one that did not proves nothing
//! about the CPUs and devices the workload used.

use std::hint::black_box;
use std::time::Instant;

use perflab_core::Better;
use perflab_stats::{median, ProbeReading, TimingProbe};

/// Tries per reading; the median of an odd number is one of them.
const TRIES: usize = 15;
/// Steps of the integer loop per try: about 0.2 ms in a release build. Short tries are
/// rarely cut by the scheduler, so their median follows the CPU's speed rather than the
/// load: on a loaded 2-vCPU guest, 1.6 ms tries moved the median by 3x in 6 of 20 probes,
/// 0.2 ms tries in 1 of 20. A debug build runs each step some 5-25 times slower, so it
/// takes a sixteenth of the steps to stay cheap; its probes are marked `debug` and never
/// compared with a release build's.
const LOOP_STEPS: u64 = if cfg!(debug_assertions) {
    1 << 13
} else {
    1 << 17
};
/// Bytes copied per try (one `memcpy`): larger than most L2 caches, so the copy reaches L3
/// or memory, and shares them with whatever else the machine runs.
const COPY_BYTES: usize = 4 << 20;

/// Takes the probe now.
pub fn timing_probe() -> TimingProbe {
    let at = crate::runner::now_epoch();
    let ns_per_step = timed_median(|| {
        black_box(integer_loop(LOOP_STEPS));
    }) * 1e9
        / LOOP_STEPS as f64;
    // Both written before timing (not calloc's untouched zero pages), so no try pays
    // for the first touch of its pages.
    let src = vec![0xA5u8; COPY_BYTES];
    let mut dst = vec![1u8; COPY_BYTES];
    let secs = timed_median(|| {
        dst.copy_from_slice(black_box(&src));
        black_box(&mut dst);
    });
    let mib_per_s = COPY_BYTES as f64 / (1024.0 * 1024.0) / secs;
    TimingProbe {
        readings: vec![
            ProbeReading {
                name: "integer loop".into(),
                unit: "ns/op".into(),
                value: ns_per_step,
                better: Better::Lower,
            },
            ProbeReading {
                name: "memcpy 4 MiB".into(),
                unit: "MiB/s".into(),
                value: mib_per_s,
                better: Better::Higher,
            },
        ],
        tries: TRIES as u32,
        build: if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        }
        .into(),
        at,
    }
}

/// A chain of dependent multiplies, rotations and xors: every step waits for the one
/// before, so the compiler can neither vectorise nor shorten it.
fn integer_loop(steps: u64) -> u64 {
    let mut x = black_box(0x9E37_79B9_7F4A_7C15u64);
    for i in 0..steps {
        x = x.rotate_left(7) ^ x.wrapping_mul(0x2545_F491_4F6C_DD1D).wrapping_add(i);
    }
    x
}

/// The median wall time of `TRIES` calls of `f`, in seconds, after one untimed call.
/// Never 0: a clock too coarse to see one try would otherwise divide by zero.
fn timed_median(mut f: impl FnMut()) -> f64 {
    f();
    let times: Vec<f64> = (0..TRIES)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .collect();
    median(times).unwrap_or(0.0).max(1e-9)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only what holds on any machine: the figures exist, are positive and finite, and
    /// the probe stays cheap enough to take at every run.
    #[test]
    fn the_probe_has_positive_finite_readings() {
        let t = Instant::now();
        let p = timing_probe();
        eprintln!("probe took {:?}: {p:?}", t.elapsed());
        assert_eq!(p.readings.len(), 2);
        for r in &p.readings {
            assert!(r.value.is_finite() && r.value > 0.0, "{r:?}");
        }
        assert_eq!(p.tries, TRIES as u32);
        assert!(p.at > 0.0);
    }

    #[test]
    fn the_loop_depends_on_its_length() {
        assert_ne!(integer_loop(10), integer_loop(11));
        assert_eq!(integer_loop(0), 0x9E37_79B9_7F4A_7C15);
    }
}
