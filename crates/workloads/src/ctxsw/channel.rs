//! The two directions of a ping-pong, over a pipe pair, a shared futex word or two
//! eventfds.
//!
//! Every mechanism carries two messages: `Go` (your turn) and `Stop` (end now). A side
//! that stops, fails or unwinds always sends `Stop`, so its peer never blocks forever; the
//! supervisor can also push a `Stop` into the ping side's own receive direction when the
//! pong process dies. End-of-file on a pipe counts as `Stop`.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

/// How the two sides wake each other.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mechanism {
    /// One pipe each way, 1-byte messages (perf bench sched pipe, context_switch2).
    Pipe,
    /// One shared futex word, FUTEX_WAIT / FUTEX_WAKE.
    Futex,
    /// Two eventfds, one each way.
    Eventfd,
}

impl Mechanism {
    pub const NAMES: &'static [&'static str] = &["pipe", "futex", "eventfd"];

    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "pipe" => Some(Self::Pipe),
            "futex" => Some(Self::Futex),
            "eventfd" => Some(Self::Eventfd),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Pipe => "pipe",
            Self::Futex => "futex",
            Self::Eventfd => "eventfd",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Msg {
    Go,
    Stop,
}

/// One side of a ping-pong.
pub(crate) trait Endpoint: Send + Sync {
    fn send(&self, msg: Msg) -> io::Result<()>;
    fn recv(&self) -> io::Result<Msg>;
    /// Makes this side's own pending or next `recv` return `Stop` (used by a supervisor
    /// that sees the peer die).
    fn stop_self(&self) -> io::Result<()>;
}

/// The ping side and the pong side of one mechanism.
pub(crate) enum Pair {
    Pipe(PipeEnd, PipeEnd),
    Futex(FutexEnd, FutexEnd),
    Eventfd(EventfdEnd, EventfdEnd),
}

impl Pair {
    /// `across_processes` selects shared (not process-private) futexes.
    pub(crate) fn new(mech: Mechanism, across_processes: bool) -> io::Result<Self> {
        Ok(match mech {
            Mechanism::Pipe => {
                let (ab_r, ab_w) = pipe()?;
                let (ba_r, ba_w) = pipe()?;
                // The ping side keeps a duplicate of the pong's write end so it can post a
                // Stop to itself; EOF alone is unreliable when a concurrently forked
                // process inherited the descriptors.
                let ba_w2 = dup(&ba_w)?;
                Pair::Pipe(
                    PipeEnd {
                        rx: ba_r,
                        tx: ab_w,
                        self_tx: Some(ba_w2),
                    },
                    PipeEnd {
                        rx: ab_r,
                        tx: ba_w,
                        self_tx: None,
                    },
                )
            }
            Mechanism::Eventfd => {
                let ab = Arc::new(eventfd()?);
                let ba = Arc::new(eventfd()?);
                Pair::Eventfd(
                    EventfdEnd {
                        rx: ba.clone(),
                        tx: ab.clone(),
                    },
                    EventfdEnd { rx: ab, tx: ba },
                )
            }
            Mechanism::Futex => {
                let word = Arc::new(SharedWord::new(across_processes)?);
                Pair::Futex(
                    FutexEnd {
                        word: word.clone(),
                        me: PING_TURN,
                        peer: PONG_TURN,
                    },
                    FutexEnd {
                        word,
                        me: PONG_TURN,
                        peer: PING_TURN,
                    },
                )
            }
        })
    }
}

fn cvt(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: pipe2 fills the two descriptors we then own.
    cvt(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) })?;
    // SAFETY: both descriptors were just created and are owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

fn dup(fd: &OwnedFd) -> io::Result<OwnedFd> {
    fd.try_clone()
}

fn eventfd() -> io::Result<OwnedFd> {
    // SAFETY: eventfd returns a new descriptor or -1.
    let fd = cvt(unsafe { libc::eventfd(0, libc::EFD_CLOEXEC) })?;
    // SAFETY: the descriptor was just created and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Reads or writes exactly one small object, retrying on EINTR. Returns the byte count,
/// 0 meaning end of file. Inlined, as are the ends' `send` and `recv`: the ping-pong loop
/// then runs from a few cache lines of code (see `sides`).
#[inline(always)]
fn xfer(fd: RawFd, buf: *mut libc::c_void, len: usize, write: bool) -> io::Result<usize> {
    loop {
        // SAFETY: buf points to `len` bytes owned by the caller for the whole call.
        let n = unsafe {
            if write {
                libc::write(fd, buf, len)
            } else {
                libc::read(fd, buf, len)
            }
        };
        if n >= 0 {
            return Ok(n as usize);
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

const PIPE_GO: u8 = 1;
const PIPE_STOP: u8 = 0;

pub(crate) struct PipeEnd {
    rx: OwnedFd,
    tx: OwnedFd,
    self_tx: Option<OwnedFd>,
}

impl PipeEnd {
    #[inline(always)]
    fn write_byte(fd: RawFd, b: u8) -> io::Result<()> {
        let mut byte = b;
        match xfer(fd, (&mut byte as *mut u8).cast(), 1, true)? {
            1 => Ok(()),
            _ => Err(io::Error::new(io::ErrorKind::WriteZero, "short pipe write")),
        }
    }
}

impl Endpoint for PipeEnd {
    #[inline(always)]
    fn send(&self, msg: Msg) -> io::Result<()> {
        let b = if msg == Msg::Go { PIPE_GO } else { PIPE_STOP };
        Self::write_byte(self.tx.as_raw_fd(), b)
    }

    #[inline(always)]
    fn recv(&self) -> io::Result<Msg> {
        let mut byte = PIPE_STOP;
        let n = xfer(self.rx.as_raw_fd(), (&mut byte as *mut u8).cast(), 1, false)?;
        Ok(if n == 1 && byte == PIPE_GO {
            Msg::Go
        } else {
            Msg::Stop
        })
    }

    fn stop_self(&self) -> io::Result<()> {
        match &self.self_tx {
            Some(fd) => Self::write_byte(fd.as_raw_fd(), PIPE_STOP),
            None => Ok(()),
        }
    }
}

/// Far above any count of `Go` that can be pending (at most one is in flight).
const EVENTFD_STOP: u64 = 1 << 40;

pub(crate) struct EventfdEnd {
    rx: Arc<OwnedFd>,
    tx: Arc<OwnedFd>,
}

impl EventfdEnd {
    #[inline(always)]
    fn add(fd: RawFd, v: u64) -> io::Result<()> {
        let mut val = v;
        match xfer(fd, (&mut val as *mut u64).cast(), 8, true)? {
            8 => Ok(()),
            _ => Err(io::Error::new(
                io::ErrorKind::WriteZero,
                "short eventfd write",
            )),
        }
    }
}

impl Endpoint for EventfdEnd {
    #[inline(always)]
    fn send(&self, msg: Msg) -> io::Result<()> {
        Self::add(
            self.tx.as_raw_fd(),
            if msg == Msg::Go { 1 } else { EVENTFD_STOP },
        )
    }

    #[inline(always)]
    fn recv(&self) -> io::Result<Msg> {
        let mut val = 0u64;
        let n = xfer(self.rx.as_raw_fd(), (&mut val as *mut u64).cast(), 8, false)?;
        Ok(if n == 8 && val < EVENTFD_STOP {
            Msg::Go
        } else {
            Msg::Stop
        })
    }

    fn stop_self(&self) -> io::Result<()> {
        Self::add(self.rx.as_raw_fd(), EVENTFD_STOP)
    }
}

/// Values of the futex word: whose turn it is, or stop. `INIT` is nobody's turn until
/// the pong side says it is ready.
const INIT: u32 = 0;
const PING_TURN: u32 = 1;
const PONG_TURN: u32 = 2;
const STOP: u32 = 3;

/// A futex word in a MAP_SHARED page, so that a forked child sees the same word.
pub(crate) struct SharedWord {
    ptr: *mut AtomicU32,
    private: bool,
}

// SAFETY: the word is only touched through atomics; the mapping lives until drop.
unsafe impl Send for SharedWord {}
// SAFETY: as above.
unsafe impl Sync for SharedWord {}

impl SharedWord {
    fn new(across_processes: bool) -> io::Result<Self> {
        // SAFETY: an anonymous shared mapping with no address hint; checked below.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                4096,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let ptr = p.cast::<AtomicU32>();
        // SAFETY: the page is fresh, zero-filled, page-aligned and ours.
        unsafe { (*ptr).store(INIT, Ordering::SeqCst) };
        Ok(Self {
            ptr,
            private: !across_processes,
        })
    }

    fn word(&self) -> &AtomicU32 {
        // SAFETY: valid for the lifetime of self (unmapped only in drop).
        unsafe { &*self.ptr }
    }

    fn op(&self, op: libc::c_int) -> libc::c_int {
        if self.private {
            op | libc::FUTEX_PRIVATE_FLAG
        } else {
            op
        }
    }

    fn wait(&self, expected: u32) -> io::Result<()> {
        // SAFETY: futex on a valid, aligned u32 with no timeout.
        let r = unsafe {
            libc::syscall(
                libc::SYS_futex,
                self.ptr,
                self.op(libc::FUTEX_WAIT),
                expected,
                std::ptr::null::<libc::timespec>(),
            )
        };
        if r < 0 {
            let e = io::Error::last_os_error();
            // EAGAIN: the word changed before we slept; EINTR: a signal. Both re-check.
            match e.raw_os_error() {
                Some(libc::EAGAIN) | Some(libc::EINTR) => Ok(()),
                _ => Err(e),
            }
        } else {
            Ok(())
        }
    }

    fn wake(&self, n: i32) -> io::Result<()> {
        // SAFETY: futex on a valid, aligned u32.
        let r = unsafe { libc::syscall(libc::SYS_futex, self.ptr, self.op(libc::FUTEX_WAKE), n) };
        if r < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    }

    fn stop(&self) -> io::Result<()> {
        self.word().store(STOP, Ordering::Release);
        self.wake(i32::MAX)
    }
}

impl Drop for SharedWord {
    fn drop(&mut self) {
        // SAFETY: unmapping the page mapped in new(); no reference outlives self.
        unsafe { libc::munmap(self.ptr.cast(), 4096) };
    }
}

pub(crate) struct FutexEnd {
    word: Arc<SharedWord>,
    me: u32,
    peer: u32,
}

impl Endpoint for FutexEnd {
    fn send(&self, msg: Msg) -> io::Result<()> {
        if msg == Msg::Stop {
            return self.word.stop();
        }
        // Never overwrite a Stop: a side that failed during start-up may have posted one
        // while the other was announcing itself.
        let w = self.word.word();
        let mut cur = w.load(Ordering::Acquire);
        while cur != STOP {
            match w.compare_exchange_weak(cur, self.peer, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return self.word.wake(1),
                Err(v) => cur = v,
            }
        }
        Ok(())
    }

    fn recv(&self) -> io::Result<Msg> {
        let w = self.word.word();
        loop {
            let v = w.load(Ordering::Acquire);
            if v == self.me {
                return Ok(Msg::Go);
            }
            if v == STOP {
                return Ok(Msg::Stop);
            }
            self.word.wait(v)?;
        }
    }

    fn stop_self(&self) -> io::Result<()> {
        self.word.stop()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exchange<E: Endpoint>(a: &E, b: &E) {
        std::thread::scope(|s| {
            s.spawn(|| {
                b.send(Msg::Go).unwrap();
                for _ in 0..100 {
                    assert_eq!(b.recv().unwrap(), Msg::Go);
                    b.send(Msg::Go).unwrap();
                }
                assert_eq!(b.recv().unwrap(), Msg::Stop);
            });
            assert_eq!(a.recv().unwrap(), Msg::Go);
            for _ in 0..100 {
                a.send(Msg::Go).unwrap();
                assert_eq!(a.recv().unwrap(), Msg::Go);
            }
            a.send(Msg::Stop).unwrap();
        });
    }

    #[test]
    fn every_mechanism_ping_pongs_and_stops() {
        for m in [Mechanism::Pipe, Mechanism::Futex, Mechanism::Eventfd] {
            match Pair::new(m, false).unwrap() {
                Pair::Pipe(a, b) => exchange(&a, &b),
                Pair::Futex(a, b) => exchange(&a, &b),
                Pair::Eventfd(a, b) => exchange(&a, &b),
            }
        }
    }

    #[test]
    fn stop_self_wakes_a_blocked_receiver() {
        for m in [Mechanism::Pipe, Mechanism::Futex, Mechanism::Eventfd] {
            let check = |a: &dyn Endpoint| {
                std::thread::scope(|s| {
                    let h = s.spawn(|| a.recv().unwrap());
                    std::thread::sleep(std::time::Duration::from_millis(20));
                    a.stop_self().unwrap();
                    assert_eq!(h.join().unwrap(), Msg::Stop, "{m:?}");
                });
            };
            match Pair::new(m, false).unwrap() {
                Pair::Pipe(a, _b) => check(&a),
                Pair::Futex(a, _b) => check(&a),
                Pair::Eventfd(a, _b) => check(&a),
            }
        }
    }

    #[test]
    fn futex_go_never_overwrites_stop() {
        let Pair::Futex(a, b) = Pair::new(Mechanism::Futex, false).unwrap() else {
            unreachable!()
        };
        a.send(Msg::Stop).unwrap();
        b.send(Msg::Go).unwrap();
        assert_eq!(a.recv().unwrap(), Msg::Stop);
        assert_eq!(b.recv().unwrap(), Msg::Stop);
    }
}
