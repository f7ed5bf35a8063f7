//! The channel model: each channel keeps a list of transfer descriptors behind one lock,
//! as a DMA driver's channel does (seed 000's lsi-dma32 took a descriptor under the
//! engine lock for every scatter-gather transfer). The threads of a channel take a free
//! descriptor for each transfer and give it back when the transfer completes; both steps
//! take the lock, and the wait to acquire it is timed on every acquisition, the
//! counterpart of the seed's traced `spintime`.
//!
//! The lock is a `std::sync::Mutex` (a futex: spins briefly, then sleeps), the nearest
//! user-space kin of PREEMPT_RT's sleeping `rt_spinlock` the seed ran on.

use std::collections::VecDeque;
use std::sync::Mutex;

use hdrhistogram::Histogram;
use perflab_core::{monotonic_ns, WorkloadError};

/// A transfer descriptor: which channel issued it and its cookie, the running number
/// of transfers the channel has handed out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Descriptor {
    pub slot: u32,
    pub cookie: u64,
}

#[derive(Debug)]
struct DescList {
    free: VecDeque<u32>,
    issued: u64,
    completed: u64,
}

/// One channel: its descriptor list and the lock that guards it.
#[derive(Debug)]
pub struct Channel {
    list: Mutex<DescList>,
}

/// Longest lock wait the histogram holds (waits beyond it are recorded as this).
const WAIT_MAX_NS: u64 = 60_000_000_000;

/// A histogram for lock waits, in nanoseconds.
pub fn wait_histogram() -> Result<Histogram<u64>, WorkloadError> {
    Histogram::new_with_bounds(1, WAIT_MAX_NS, 3)
        .map_err(|e| WorkloadError::Failed(format!("xfer: lock wait histogram: {e}")))
}

impl Channel {
    /// A channel with `descriptors` free descriptors.
    pub fn new(descriptors: u32) -> Self {
        Self {
            list: Mutex::new(DescList {
                free: (0..descriptors.max(1)).collect(),
                issued: 0,
                completed: 0,
            }),
        }
    }

    /// Runs `f` on the list under the lock, recording the wait to acquire it.
    fn locked<T>(&self, waits: &mut Histogram<u64>, f: impl FnOnce(&mut DescList) -> T) -> T {
        let t0 = monotonic_ns();
        // A holder that panicked left the list consistent (each step is one push or pop).
        let mut guard = self.list.lock().unwrap_or_else(|e| e.into_inner());
        let t1 = monotonic_ns();
        waits.saturating_record(t1.saturating_sub(t0).max(1));
        f(&mut guard)
    }

    /// Takes a free descriptor (prep). With every descriptor in flight a new slot is
    /// made, as a driver allocates one when its list runs dry.
    pub fn take(&self, waits: &mut Histogram<u64>) -> Descriptor {
        self.locked(waits, |l| {
            let slot = l.free.pop_front().unwrap_or(u32::MAX);
            let cookie = l.issued;
            l.issued += 1;
            Descriptor { slot, cookie }
        })
    }

    /// Gives a completed descriptor back.
    pub fn complete(&self, d: Descriptor, waits: &mut Histogram<u64>) {
        self.locked(waits, |l| {
            if d.slot != u32::MAX {
                l.free.push_back(d.slot);
            }
            l.completed += 1;
        })
    }

    /// (issued, completed) descriptors so far.
    pub fn counts(&self) -> (u64, u64) {
        let l = self.list.lock().unwrap_or_else(|e| e.into_inner());
        (l.issued, l.completed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptors_cycle_and_every_acquisition_is_timed() {
        let ch = Channel::new(2);
        let mut h = wait_histogram().unwrap();
        let a = ch.take(&mut h);
        let b = ch.take(&mut h);
        let c = ch.take(&mut h);
        assert_eq!((a.slot, b.slot, c.slot), (0, 1, u32::MAX));
        assert_eq!((a.cookie, b.cookie, c.cookie), (0, 1, 2));
        ch.complete(a, &mut h);
        ch.complete(c, &mut h);
        assert_eq!(ch.take(&mut h).slot, 0);
        assert_eq!(h.len(), 6);
        assert_eq!(ch.counts(), (4, 2));
    }

    /// Whether thread `tid` of this process is asleep (state S in its stat line).
    fn asleep(tid: i32) -> bool {
        std::fs::read_to_string(format!("/proc/self/task/{tid}/stat"))
            .ok()
            .and_then(|s| {
                s.rfind(')')
                    .map(|i| s[i + 1..].trim_start().starts_with('S'))
            })
            .unwrap_or(false)
    }

    /// The waiter is seen asleep on the held lock before the holder starts its 20 ms, so
    /// the wait it records covers them however late either thread gets the CPU: the
    /// assertion holds on a loaded machine too.
    #[test]
    fn contended_lock_waits_are_seen() {
        use std::sync::atomic::{AtomicI32, Ordering};
        let ch = Channel::new(4);
        let waiter_tid = AtomicI32::new(0);
        let guard = ch.list.lock().unwrap();
        let h = std::thread::scope(|s| {
            let waiter = s.spawn(|| {
                let mut h = wait_histogram().unwrap();
                // SAFETY: gettid has no preconditions.
                waiter_tid.store(unsafe { libc::gettid() }, Ordering::SeqCst);
                // Nothing between here and the lock sleeps, so "asleep" means on the lock.
                let d = ch.take(&mut h);
                ch.complete(d, &mut h);
                h
            });
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
            loop {
                let tid = waiter_tid.load(Ordering::SeqCst);
                if tid != 0 && asleep(tid) {
                    break;
                }
                assert!(
                    std::time::Instant::now() < deadline,
                    "the waiter never blocked on the lock"
                );
                std::thread::yield_now();
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
            drop(guard);
            waiter.join().unwrap()
        });
        assert_eq!(h.len(), 2);
        assert!(h.max() >= 20_000_000, "{}", h.max());
    }
}
