//! The channel model's shape: channels × threads per channel × buffers per thread, given
//! directly or derived from a constant total. Seed 000 held 192 buffers over its 4
//! channels: 48 sg_buffers per thread × 1 thread per channel × 4 channels, 24×2×4, 12×4×4,
//! 6×8×4 and 3×16×4, so with `channels=4 total_buffers=192` the buffers per thread are
//! derived from the threads per channel.

use perflab_core::{ParamError, Params};

use super::placement::Placement;

/// How many channels, threads and buffers a channel-model measurement has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    pub channels: u32,
    pub threads_per_channel: u32,
    pub buffers_per_thread: u32,
    /// Transfers each thread makes (0: until `duration` has passed).
    pub transfers_per_thread: u64,
}

impl Shape {
    pub fn threads(&self) -> usize {
        self.channels as usize * self.threads_per_channel as usize
    }

    pub fn buffers(&self) -> u64 {
        u64::from(self.channels)
            * u64::from(self.threads_per_channel)
            * u64::from(self.buffers_per_thread)
    }
}

/// The most threads one measurement may start.
pub const MAX_THREADS: usize = 4096;

/// The channel-model shape the parameters ask for; `None` when they ask for none (plain
/// single-thread xfer: every count 0 and `placement=free`). The outer `Err` is xfer's
/// code reading a parameter it does not declare; the inner one, counts that make no shape.
pub fn shape(params: &Params) -> Result<Result<Option<Shape>, String>, ParamError> {
    let counts = [
        params.int("channels")?,
        params.int("threads_per_channel")?,
        params.int("buffers_per_thread")?,
        params.int("total_buffers")?,
        params.int("transfers_per_thread")?,
    ];
    let placement = params.str("placement")?;
    let cpu = params.int("cpu")?;
    Ok(shape_of(counts, placement, cpu))
}

fn shape_of(counts: [i64; 5], placement: &str, cpu: i64) -> Result<Option<Shape>, String> {
    const NAMES: [&str; 5] = [
        "channels",
        "threads_per_channel",
        "buffers_per_thread",
        "total_buffers",
        "transfers_per_thread",
    ];
    let mut n = [0u64; 5];
    for ((out, v), name) in n.iter_mut().zip(counts).zip(NAMES) {
        *out = u64::try_from(v).map_err(|_| format!("{name}={v} is negative"))?;
    }
    let [c, t, b, total, per_thread] = n;
    let placement = Placement::parse(placement)?;
    if c == 0 && t == 0 && b == 0 && total == 0 && per_thread == 0 && placement.is_free() {
        return Ok(None);
    }
    if cpu >= 0 {
        return Err(format!(
            "cpu={cpu} pins the single-thread xfer; with channels or threads use placement=<cpu list>"
        ));
    }
    let t = t.max(1);
    let (c, b) = derive(c, t, b, total)?;
    let s = Shape {
        channels: u32::try_from(c).map_err(|_| format!("{c} channels are too many"))?,
        threads_per_channel: u32::try_from(t)
            .map_err(|_| format!("threads_per_channel={t} is too many"))?,
        buffers_per_thread: u32::try_from(b)
            .map_err(|_| format!("buffers_per_thread={b} is too many"))?,
        transfers_per_thread: per_thread,
    };
    if s.threads() > MAX_THREADS {
        return Err(format!(
            "{} channels × {} threads per channel = {} threads; at most {MAX_THREADS} are allowed",
            s.channels,
            s.threads_per_channel,
            s.threads()
        ));
    }
    Ok(Some(s))
}

/// Channels and buffers per thread from what was given (0: not given; `t` at least 1).
///
/// With a total: given channels, buffers per thread are derived (the seed's grid: 4
/// channels fixed, the buffers per thread shrinking as threads are added); given buffers
/// per thread instead, channels are derived; given both, their product must be the
/// total. Without a total, a count not given is 1.
fn derive(c: u64, t: u64, b: u64, total: u64) -> Result<(u64, u64), String> {
    Ok(match (c, b, total) {
        (c, b, 0) => (c.max(1), b.max(1)),
        (0, 0, total) => {
            return Err(format!(
                "total_buffers={total} needs channels (buffers_per_thread is then derived) or \
                 buffers_per_thread (channels is then derived)"
            ))
        }
        (c, 0, total) => {
            let threads = c * t;
            if total % threads != 0 {
                return Err(format!(
                    "total_buffers={total} does not divide among channels={c} × \
                     threads_per_channel={t} = {threads} threads ({total}/{threads} is not \
                     whole); give buffers_per_thread, or a total that divides"
                ));
            }
            (c, total / threads)
        }
        (0, b, total) => {
            let per_channel = t * b;
            if total % per_channel != 0 {
                return Err(format!(
                    "total_buffers={total} does not divide into threads_per_channel={t} × \
                     buffers_per_thread={b} = {per_channel} per channel ({total}/{per_channel} \
                     is not whole)"
                ));
            }
            (total / per_channel, b)
        }
        (c, b, total) => {
            if c * t * b != total {
                return Err(format!(
                    "channels={c} × threads_per_channel={t} × buffers_per_thread={b} = {} \
                     buffers, but total_buffers={total}",
                    c * t * b
                ));
            }
            (c, b)
        }
    })
}
