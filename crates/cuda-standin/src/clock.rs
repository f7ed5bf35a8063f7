//! The time events record. By default the wall clock when a stream's worker reaches the
//! event, so copies take what `memcpy` takes. With a modelled link
//! (`CUDA_STANDIN_MIB_S=RATE[:JITTER_PCT[:SEED]]`, or `standin_clock`), a copy of `len`
//! bytes advances a process-wide clock by `len / RATE`, times a factor drawn afresh every
//! millisecond of that clock, uniform in 1 ± JITTER_PCT/100 from SEED: the copies'
//! figures are then deterministic (no jitter: every copy runs at RATE exactly) or noisy
//! in a known, repeatable way, whatever else the machine runs. That is what a test of a
//! measuring method needs; the wall clock only ever gives what the CPUs happened to do.

use std::sync::{Mutex, OnceLock};
use std::time::Instant;

/// The modelled link, or `None` for the wall clock.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Model {
    pub mib_s: f64,
    pub jitter: f64,
    pub seed: u64,
}

struct Clock {
    model: Option<Model>,
    now_ns: f64,
    /// The millisecond the factor was drawn for, the factor, and the generator.
    phase: u64,
    factor: f64,
    rng: u64,
}

static CLOCK: Mutex<Clock> = Mutex::new(Clock {
    model: None,
    now_ns: 0.0,
    phase: u64::MAX,
    factor: 1.0,
    rng: 0,
});

fn clock() -> std::sync::MutexGuard<'static, Clock> {
    CLOCK.lock().unwrap_or_else(|p| p.into_inner())
}

/// "RATE[:JITTER_PCT[:SEED]]" → a model; `None` when RATE is not a positive number.
pub fn parse(spec: &str) -> Option<Model> {
    let mut parts = spec.trim().split(':');
    let mib_s: f64 = parts.next()?.trim().parse().ok()?;
    let jitter: f64 = match parts.next() {
        Some(j) => j.trim().parse().ok()?,
        None => 0.0,
    };
    let seed: u64 = match parts.next() {
        Some(s) => s.trim().parse().ok()?,
        None => 1,
    };
    (mib_s.is_finite() && mib_s > 0.0 && (0.0..100.0).contains(&jitter)).then_some(Model {
        mib_s,
        jitter: jitter / 100.0,
        seed,
    })
}

/// Switches to `model` (or back to the wall clock), the modelled clock starting at 0.
pub fn set(model: Option<Model>) {
    let mut c = clock();
    c.model = model;
    c.now_ns = 0.0;
    c.phase = u64::MAX;
    c.factor = 1.0;
    c.rng = model.map_or(0, |m| m.seed.max(1));
}

/// What an event reached now records.
pub fn event_ns() -> u64 {
    let c = clock();
    match c.model {
        Some(_) => c.now_ns as u64,
        None => wall_ns(),
    }
}

/// A copy of `len` bytes has run: the modelled clock moves on by its time.
pub fn copied(len: usize) {
    let mut c = clock();
    let Some(m) = c.model else { return };
    let phase = (c.now_ns / 1e6) as u64;
    if phase != c.phase {
        c.phase = phase;
        // xorshift64: repeatable from the seed, no dependency.
        let mut x = c.rng;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        c.rng = x;
        let u = (x >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0;
        c.factor = 1.0 + m.jitter * u;
    }
    let secs = len as f64 / (m.mib_s * 1048576.0) * c.factor;
    c.now_ns += secs * 1e9;
}

/// Nanoseconds since the library was first used: the wall clock the events read where
/// no modelled clock is set.
fn wall_ns() -> u64 {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    EPOCH.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_or_are_refused() {
        assert_eq!(
            parse("1000"),
            Some(Model {
                mib_s: 1000.0,
                jitter: 0.0,
                seed: 1
            })
        );
        assert_eq!(
            parse("500:20:7").map(|m| (m.jitter, m.seed)),
            Some((0.2, 7))
        );
        assert_eq!(parse("0"), None);
        assert_eq!(parse("x"), None);
        assert_eq!(parse("10:150"), None);
    }
}
