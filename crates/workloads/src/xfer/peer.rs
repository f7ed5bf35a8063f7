//! The second process of the `pvm` engine: it owns the remote buffer that
//! process_vm_readv / process_vm_writev reach into.
//!
//! The peer is forked, maps its buffer with the requested backing, fills it with a
//! pattern (or, as a destination, writes it once) and, for `pinned`, locks it; then it
//! sends the buffer's address back and sleeps in a blocking read for commands: remap
//! (a fresh, untouched mapping, for unpinned writes), verify (compare its buffer with a
//! pattern, for the content check), zero (overwrite it with zeros, for `data=zero`) and
//! quit.
//!
//! The child is forked from a multi-threaded process, so it does only async-signal-safe
//! work: raw syscalls and loops over its own memory, no heap allocation, fixed-size
//! messages of three u64. It dies with its parent (PR_SET_PDEATHSIG), and the parent's
//! [`Peer`] always reaps it: on drop it sends quit, waits half a second, then kills.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::buffer::{Backing, Buffer, MapError, MapStep};

const OP_REMAP: u64 = 1;
const OP_VERIFY: u64 = 2;
const OP_QUIT: u64 = 3;
const OP_ZERO: u64 = 4;

/// Status word of a reply: 0, or the failed map step and errno.
fn encode(e: MapError) -> u64 {
    ((e.step as u64) << 32) | u64::from(e.errno as u32)
}

fn decode(status: u64) -> MapError {
    MapError {
        step: MapStep::from_code(status >> 32).unwrap_or(MapStep::Map),
        errno: (status & 0xffff_ffff) as i32,
    }
}

/// What the peer's buffer is and how it is prepared.
#[derive(Clone, Copy, Debug)]
pub struct PeerSpec {
    /// Mapped length (whole pages of `backing`).
    pub len: u64,
    pub backing: Backing,
    pub lock: bool,
    /// Fill the first `len` bytes with this pattern (a source); `None`: write zeros.
    pub fill_seed: Option<u64>,
}

#[derive(Debug, thiserror::Error)]
pub enum PeerError {
    #[error("the peer could not map its buffer")]
    Map(MapError),
    #[error("{0}")]
    Failed(String),
    #[error("stopped")]
    Stopped,
}

/// The parent's handle on the peer process.
#[derive(Debug)]
pub struct Peer {
    pid: libc::pid_t,
    cmd: OwnedFd,
    reply: OwnedFd,
    addr: u64,
    reaped: bool,
    /// How long a reply may take (filling and locking a large buffer takes seconds).
    patience: Duration,
}

fn pipe() -> Result<(OwnedFd, OwnedFd), PeerError> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills the two descriptors, which we then own.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } < 0 {
        return Err(PeerError::Failed(format!(
            "pvm: pipe: {}",
            std::io::Error::last_os_error()
        )));
    }
    // SAFETY: both descriptors were just created and belong to nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

impl Peer {
    /// Forks the peer and waits until its buffer is ready.
    pub fn spawn(spec: PeerSpec, stop: &AtomicBool) -> Result<Peer, PeerError> {
        let (cmd_r, cmd_w) = pipe()?;
        let (reply_r, reply_w) = pipe()?;
        // SAFETY: getpid has no preconditions.
        let parent = unsafe { libc::getpid() };
        // SAFETY: the child runs only async-signal-safe code (see the module docs) and
        // leaves with _exit, never returning into the caller's frames.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(PeerError::Failed(format!(
                "pvm: fork: {}",
                std::io::Error::last_os_error()
            )));
        }
        if pid == 0 {
            let code = std::panic::catch_unwind(|| {
                child_main(cmd_r.as_raw_fd(), reply_w.as_raw_fd(), parent, spec)
            })
            .unwrap_or(101);
            // SAFETY: ends the child without unwinding into the parent's code.
            unsafe { libc::_exit(code) }
        }
        drop(cmd_r);
        drop(reply_w);
        // Filling and locking run at well over 100 MiB/s anywhere; a peer slower than
        // that by far is wedged.
        let patience = Duration::from_secs(30) + Duration::from_secs(spec.len / (100 << 20));
        let mut peer = Peer {
            pid,
            cmd: cmd_w,
            reply: reply_r,
            addr: 0,
            reaped: false,
            patience,
        };
        let [status, addr, _] = peer.recv(stop)?;
        if status != 0 {
            return Err(PeerError::Map(decode(status)));
        }
        peer.addr = addr;
        Ok(peer)
    }

    pub fn pid(&self) -> libc::pid_t {
        self.pid
    }

    /// The address of the peer's buffer in the peer's address space.
    pub fn addr(&self) -> u64 {
        self.addr
    }

    /// Replaces the peer's buffer by a fresh, untouched mapping (the old one is unmapped
    /// first, so the peer never holds two).
    pub fn remap(&mut self, stop: &AtomicBool) -> Result<u64, PeerError> {
        self.send([OP_REMAP, 0, 0])?;
        let [status, addr, _] = self.recv(stop)?;
        if status != 0 {
            return Err(PeerError::Map(decode(status)));
        }
        self.addr = addr;
        Ok(addr)
    }

    /// The first offset of the peer's buffer, among its first `bytes`, that differs from
    /// the pattern of `seed`.
    pub fn verify(
        &mut self,
        bytes: u64,
        seed: u64,
        stop: &AtomicBool,
    ) -> Result<Option<u64>, PeerError> {
        self.send([OP_VERIFY, bytes, seed])?;
        let [_, mismatch, _] = self.recv(stop)?;
        Ok((mismatch != u64::MAX).then_some(mismatch))
    }

    /// Overwrites the peer's whole buffer with zeros.
    pub fn zero(&mut self, stop: &AtomicBool) -> Result<(), PeerError> {
        self.send([OP_ZERO, 0, 0])?;
        self.recv(stop).map(|_| ())
    }

    fn send(&mut self, msg: [u64; 3]) -> Result<(), PeerError> {
        let bytes = msg_bytes(msg);
        // SAFETY: writes from a live array; 24 bytes are below PIPE_BUF, so the write is
        // all or nothing.
        let n = unsafe { libc::write(self.cmd.as_raw_fd(), bytes.as_ptr().cast(), 24) };
        if n != 24 {
            let err = std::io::Error::last_os_error();
            // The peer is gone (perflab ignores SIGPIPE, so this is EPIPE, not a death):
            // its end says why, which is the measurement's reason.
            if err.raw_os_error() == Some(libc::EPIPE) {
                return Err(PeerError::Failed(self.gone()));
            }
            return Err(PeerError::Failed(format!(
                "pvm: cannot reach the peer process: {err}"
            )));
        }
        Ok(())
    }

    fn recv(&mut self, stop: &AtomicBool) -> Result<[u64; 3], PeerError> {
        let deadline = Instant::now() + self.patience;
        loop {
            let mut pfd = libc::pollfd {
                fd: self.reply.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: polls one descriptor we own, for at most 100 ms.
            let r = unsafe { libc::poll(&mut pfd, 1, 100) };
            if r > 0 {
                let mut buf = [0u8; 24];
                if read_full(self.reply.as_raw_fd(), &mut buf) {
                    return Ok(msg_from(&buf));
                }
                // End of file: the peer is gone; its exit status says why.
                return Err(PeerError::Failed(self.gone()));
            }
            if r < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                return Err(PeerError::Failed(format!(
                    "pvm: poll on the peer's pipe: {}",
                    std::io::Error::last_os_error()
                )));
            }
            if stop.load(Ordering::Relaxed) {
                return Err(PeerError::Stopped);
            }
            if let Some(why) = self.try_wait() {
                return Err(PeerError::Failed(why));
            }
            if Instant::now() > deadline {
                return Err(PeerError::Failed(format!(
                    "pvm: the peer process did not answer within {} s",
                    self.patience.as_secs()
                )));
            }
        }
    }

    /// Describes the end of a peer that closed its pipe.
    fn gone(&mut self) -> String {
        let until = Instant::now() + Duration::from_millis(500);
        while Instant::now() < until {
            if let Some(why) = self.try_wait() {
                return why;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        "pvm: the peer process closed its pipe".into()
    }

    /// Reaps the peer if it has ended, describing how.
    fn try_wait(&mut self) -> Option<String> {
        if self.reaped {
            return Some("pvm: the peer process has ended".into());
        }
        let mut status = 0;
        // SAFETY: waits, without blocking, for our own child.
        let r = unsafe { libc::waitpid(self.pid, &mut status, libc::WNOHANG) };
        if r == 0 {
            return None;
        }
        self.reaped = true;
        Some(if r < 0 {
            format!(
                "pvm: waitpid on the peer: {}",
                std::io::Error::last_os_error()
            )
        } else if libc::WIFSIGNALED(status) {
            format!(
                "pvm: the peer process was killed by signal {} (out of memory?)",
                libc::WTERMSIG(status)
            )
        } else {
            format!(
                "pvm: the peer process exited with status {}",
                libc::WEXITSTATUS(status)
            )
        })
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        if self.reaped {
            return;
        }
        let _ = self.send([OP_QUIT, 0, 0]);
        let until = Instant::now() + Duration::from_millis(500);
        while Instant::now() < until {
            if self.try_wait().is_some() {
                return;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        // SAFETY: signals and then reaps our own child, which has not been reaped, so the
        // pid cannot have been reused.
        unsafe {
            libc::kill(self.pid, libc::SIGKILL);
            let mut status = 0;
            while libc::waitpid(self.pid, &mut status, 0) < 0
                && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
            {}
        }
        self.reaped = true;
    }
}

fn msg_bytes(msg: [u64; 3]) -> [u8; 24] {
    let mut out = [0u8; 24];
    for (chunk, v) in out.chunks_exact_mut(8).zip(msg) {
        chunk.copy_from_slice(&v.to_ne_bytes());
    }
    out
}

fn msg_from(buf: &[u8; 24]) -> [u64; 3] {
    let mut out = [0u64; 3];
    for (v, chunk) in out.iter_mut().zip(buf.chunks_exact(8)) {
        let mut w = [0u8; 8];
        w.copy_from_slice(chunk);
        *v = u64::from_ne_bytes(w);
    }
    out
}

/// Reads exactly 24 bytes; false at end of file or on an error.
fn read_full(fd: RawFd, buf: &mut [u8; 24]) -> bool {
    let mut off = 0;
    while off < buf.len() {
        // SAFETY: reads into the unfilled rest of our own array.
        let n = unsafe { libc::read(fd, buf[off..].as_mut_ptr().cast(), buf.len() - off) };
        if n < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
            continue;
        }
        if n <= 0 {
            return false;
        }
        off += n as usize;
    }
    true
}

fn write_msg(fd: RawFd, msg: [u64; 3]) -> bool {
    let bytes = msg_bytes(msg);
    // SAFETY: writes from a live array (24 bytes: atomic on a pipe).
    unsafe { libc::write(fd, bytes.as_ptr().cast(), 24) == 24 }
}

/// Closes every descriptor the child inherited except stdio and its two pipe ends, so it
/// does not hold other workloads' pipes open.
fn close_others(keep_a: RawFd, keep_b: RawFd) {
    let (lo, hi) = (keep_a.min(keep_b) as u32, keep_a.max(keep_b) as u32);
    let ranges = [
        (3, lo.saturating_sub(1)),
        (lo + 1, hi - 1),
        (hi + 1, u32::MAX),
    ];
    for (first, last) in ranges {
        if first <= last {
            // SAFETY: close_range only closes descriptors of this (child) process; an old
            // kernel without it leaves them open, which is harmless.
            unsafe { libc::syscall(libc::SYS_close_range, first, last, 0) };
        }
    }
}

/// Prepares a fresh or first buffer as the spec says.
fn prepare(spec: &PeerSpec, fresh: bool) -> Result<Buffer, MapError> {
    let mut buf = Buffer::map(spec.len, spec.backing)?;
    if fresh {
        return Ok(buf);
    }
    match spec.fill_seed {
        Some(seed) => buf.fill_pattern(spec.len as usize, seed),
        None => buf.touch(),
    }
    if spec.lock {
        buf.lock()?;
    }
    Ok(buf)
}

fn child_main(cmd: RawFd, reply: RawFd, parent: libc::pid_t, spec: PeerSpec) -> i32 {
    // SAFETY: prctl and getppid only affect and inspect this process.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
        if libc::getppid() != parent {
            return 1;
        }
    }
    close_others(cmd, reply);
    let mut buf = match prepare(&spec, false) {
        Ok(b) => b,
        Err(e) => {
            write_msg(reply, [encode(e), 0, 0]);
            return 2;
        }
    };
    if !write_msg(reply, [0, buf.addr(), 0]) {
        return 3;
    }
    let mut raw = [0u8; 24];
    while read_full(cmd, &mut raw) {
        let [op, a, b] = msg_from(&raw);
        let answer = match op {
            OP_REMAP => {
                // Unmap first: the peer never holds two buffers.
                drop(buf);
                match prepare(&spec, true) {
                    Ok(fresh) => {
                        buf = fresh;
                        [0, buf.addr(), 0]
                    }
                    Err(e) => {
                        write_msg(reply, [encode(e), 0, 0]);
                        return 4;
                    }
                }
            }
            OP_VERIFY => {
                let bad = buf.check_pattern(a as usize, b);
                [0, bad.map(|o| o as u64).unwrap_or(u64::MAX), 0]
            }
            OP_ZERO => {
                buf.touch();
                [0, 0, 0]
            }
            _ => return 0,
        };
        if !write_msg(reply, answer) {
            return 5;
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::xfer::buffer::mapped_len;

    fn spec(fill: Option<u64>) -> PeerSpec {
        PeerSpec {
            len: mapped_len(256 << 10, Backing::Small),
            backing: Backing::Small,
            lock: true,
            fill_seed: fill,
        }
    }

    fn alive(pid: libc::pid_t) -> bool {
        // SAFETY: signal 0 only checks that the process exists.
        unsafe { libc::kill(pid, 0) == 0 }
    }

    #[test]
    fn answers_verifies_remaps_and_is_reaped() {
        let stop = AtomicBool::new(false);
        let mut p = Peer::spawn(spec(Some(11)), &stop).unwrap();
        let pid = p.pid();
        assert!(p.addr() != 0 && alive(pid));
        assert_eq!(p.verify(256 << 10, 11, &stop).unwrap(), None);
        assert_eq!(p.verify(256 << 10, 12, &stop).unwrap(), Some(0));
        p.zero(&stop).unwrap();
        assert_eq!(p.verify(256 << 10, 11, &stop).unwrap(), Some(0));
        let old = p.addr();
        let new = p.remap(&stop).unwrap();
        assert_eq!(new, p.addr());
        // A fresh mapping holds zeros, not the old pattern (even if at the same address).
        assert_eq!(p.verify(64, 11, &stop).unwrap(), Some(0));
        let _ = old;
        drop(p);
        assert!(!alive(pid), "peer {pid} still exists after drop");
    }

    /// A peer that died before a command: the write meets EPIPE (SIGPIPE ignored, as the
    /// perflab binary has it) and the command fails with how the peer ended, instead of
    /// the signal killing perflab (issue 31 item 15).
    #[test]
    fn a_command_to_a_dead_peer_fails_with_how_it_ended() {
        // SAFETY: a process-wide disposition the perflab binary sets too; tests that
        // write to dead pipes expect EPIPE either way.
        unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
        let stop = AtomicBool::new(false);
        let mut p = Peer::spawn(spec(Some(3)), &stop).unwrap();
        // SAFETY: kills our own child, which has not been reaped.
        unsafe { libc::kill(p.pid(), libc::SIGKILL) };
        std::thread::sleep(Duration::from_millis(50));
        match p.zero(&stop) {
            Err(PeerError::Failed(why)) => {
                assert!(why.contains("killed by signal 9"), "{why}")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_failed_mapping_comes_back_as_its_errno() {
        let stop = AtomicBool::new(false);
        let huge = PeerSpec {
            // Far beyond any address space: the reservation itself fails.
            len: 1 << 62,
            ..spec(None)
        };
        match Peer::spawn(huge, &stop) {
            Err(PeerError::Map(e)) => assert_eq!(e.errno, libc::ENOMEM, "{e:?}"),
            other => panic!("{other:?}"),
        }
    }
}
