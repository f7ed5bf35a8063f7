//! Streams as worker threads, and events as the times the workers reach them.

use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

use crate::clock;

/// A queued operation. Addresses travel as integers; the caller promised (as with the
/// real driver) that they stay valid until the stream is synchronized.
pub enum Op {
    Copy { dst: usize, src: usize, len: usize },
    Record(Arc<EventState>),
    Stop,
}

/// An event: `None` until recorded; `pending` while a stream has yet to reach it.
#[derive(Default)]
pub struct EventState {
    inner: Mutex<(Option<u64>, bool)>,
    done: Condvar,
}

impl EventState {
    pub fn mark_pending(&self) {
        self.inner.lock().unwrap_or_else(|p| p.into_inner()).1 = true;
    }

    fn complete(&self) {
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        *g = (Some(clock::event_ns()), false);
        self.done.notify_all();
    }

    pub fn wait(&self) {
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        while g.1 {
            g = self.done.wait(g).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// The timestamp once reached; `Err(pending)` otherwise.
    pub fn time(&self) -> Result<u64, bool> {
        let g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        match *g {
            (Some(t), false) => Ok(t),
            (_, pending) => Err(pending),
        }
    }
}

/// Ops queued and not yet run, for synchronize.
#[derive(Default)]
struct Backlog {
    queued: Mutex<u64>,
    idle: Condvar,
}

pub struct StreamHandle {
    tx: Sender<Op>,
    backlog: Arc<Backlog>,
    worker: Option<JoinHandle<()>>,
}

impl StreamHandle {
    pub fn spawn() -> Self {
        let (tx, rx) = channel::<Op>();
        let backlog = Arc::new(Backlog::default());
        let b = Arc::clone(&backlog);
        let worker = std::thread::spawn(move || {
            for op in rx {
                match op {
                    Op::Copy { dst, src, len } => {
                        // SAFETY: the caller of the copy promised both ranges valid until
                        // the stream is synchronized, which waits for this op.
                        unsafe {
                            std::ptr::copy_nonoverlapping(src as *const u8, dst as *mut u8, len)
                        }
                        clock::copied(len);
                    }
                    Op::Record(ev) => ev.complete(),
                    Op::Stop => break,
                }
                let mut q = b.queued.lock().unwrap_or_else(|p| p.into_inner());
                *q -= 1;
                if *q == 0 {
                    b.idle.notify_all();
                }
            }
        });
        Self {
            tx,
            backlog,
            worker: Some(worker),
        }
    }

    pub fn push(&self, op: Op) {
        *self
            .backlog
            .queued
            .lock()
            .unwrap_or_else(|p| p.into_inner()) += 1;
        // The worker only ends on Stop, sent by `stop`, which consumes the handle.
        let _ = self.tx.send(op);
    }

    /// A waiter for this stream's backlog, usable without holding the global lock.
    pub fn waiter(&self) -> impl FnOnce() {
        let b = Arc::clone(&self.backlog);
        move || {
            let mut q = b.queued.lock().unwrap_or_else(|p| p.into_inner());
            while *q > 0 {
                q = b.idle.wait(q).unwrap_or_else(|p| p.into_inner());
            }
        }
    }

    /// Runs out the backlog and ends the worker.
    pub fn stop(mut self) {
        self.push(Op::Stop);
        if let Some(w) = self.worker.take() {
            let _ = w.join();
        }
    }
}
