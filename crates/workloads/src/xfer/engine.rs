//! The transfer engines and the buffers each one uses.
//!
//! | engine, state | source | destination |
//! |---|---|---|
//! | memcpy pinned | locked, pattern | locked |
//! | memcpy unpinned | pattern, kept | fresh each transfer |
//! | fill pinned / unpinned | — | locked / fresh each transfer |
//! | pvm read pinned | peer: locked, pattern | locked |
//! | pvm read unpinned | peer: pattern, kept | fresh each transfer |
//! | pvm write pinned | locked, pattern | peer: locked |
//! | pvm write unpinned | pattern, kept | peer: fresh each transfer |
//!
//! With `data=zero` the sources are overwritten with zeros after the content check.
//!
//! A "fresh" buffer is a new mapping made before the transfer and unmapped after it,
//! both outside the timed region, so the timed transfer takes its page faults (for pvm
//! write, the kernel faults the peer's pages in while it pins them). Sources are kept
//! and written once: a never-written source would be read from the kernel's shared zero
//! page, which costs neither faults nor memory bandwidth (perf bench mem memsets its
//! source for the same reason).

use std::sync::atomic::AtomicBool;

use perflab_core::{WorkloadError, WorkloadOutput};

use super::backing::inspect;
use super::buffer::{mapped_len, Backing, Buffer, MapError};
use super::peer::{Peer, PeerError, PeerSpec};
use super::timing::Step;

/// Pattern seeds: one for sources written here, one for the peer's.
const LOCAL_SEED: u64 = 0x6c6f_6361_6c00_0001;
const PEER_SEED: u64 = 0x7065_6572_0000_0002;

/// process_vm_readv/writev move at most MAX_RW_COUNT (just under 2 GiB) per call; larger
/// transfers are issued in chunks of this size.
const PVM_CHUNK: u64 = 1 << 30;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    Memcpy,
    Pvm,
    Fill,
}

impl Engine {
    pub const NAMES: &'static [&'static str] = &["memcpy", "pvm", "fill"];

    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "memcpy" => Some(Engine::Memcpy),
            "pvm" => Some(Engine::Pvm),
            "fill" => Some(Engine::Fill),
            _ => None,
        }
    }

    /// Buffers of `size` a measurement holds at its peak (the pvm peer's included).
    pub fn buffers(self) -> u64 {
        match self {
            Engine::Memcpy | Engine::Pvm => 2,
            Engine::Fill => 1,
        }
    }
}

/// pvm's direction: `read` pulls the peer's buffer here (remote → local, like the seed's
/// ve2vh); `write` pushes a local buffer into the peer (local → remote, like vh2ve).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    Read,
    Write,
}

impl Direction {
    pub const NAMES: &'static [&'static str] = &["read", "write"];

    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "read" => Some(Direction::Read),
            "write" => Some(Direction::Write),
            _ => None,
        }
    }
}

/// What one measurement transfers, and how its buffers are held.
#[derive(Clone, Copy, Debug)]
pub struct Setup {
    pub engine: Engine,
    pub direction: Direction,
    pub size: u64,
    pub backing: Backing,
    /// `pinned`: buffers locked, faulted in once and reused.
    pub pinned: bool,
    /// Sources hold zeros during timing (`data=zero`) instead of the pattern.
    pub zero_data: bool,
}

impl Setup {
    pub fn mapped_len(&self) -> u64 {
        mapped_len(self.size, self.backing)
    }
}

/// Turns a failed mapping of the named buffer into the message a person acts on; the
/// third argument is what this measurement already holds (bytes of its other buffers),
/// so pool counts can be told as they were before it started.
pub type MapFailure<'a> = &'a dyn Fn(&str, MapError, u64) -> WorkloadError;

/// A buffer in this process.
struct Local {
    label: &'static str,
    buf: Option<Buffer>,
    /// Mapped anew for every transfer.
    fresh: bool,
}

impl Local {
    fn ptr(&mut self) -> Result<*mut u8, WorkloadError> {
        self.buf
            .as_mut()
            .map(Buffer::as_mut_ptr)
            .ok_or_else(|| WorkloadError::Failed(format!("xfer: the {} is not mapped", self.label)))
    }
}

/// The lowest share of huge pages seen per buffer, for the metric and the notes.
#[derive(Debug, Default)]
pub struct Seen {
    pub fractions: Vec<(&'static str, f64)>,
}

impl Seen {
    fn record(&mut self, label: &'static str, fraction: f64) {
        match self.fractions.iter_mut().find(|(l, _)| *l == label) {
            Some((_, f)) => *f = f.min(fraction),
            None => self.fractions.push((label, fraction)),
        }
    }

    /// The lowest fraction over all buffers.
    pub fn min(&self) -> Option<f64> {
        self.fractions.iter().map(|&(_, f)| f).reduce(f64::min)
    }

    /// Notes for buffers that are not wholly on huge pages although they asked to be.
    pub fn notes(&self, backing: Backing, out: &mut WorkloadOutput) {
        if !backing.wants_huge() {
            return;
        }
        for &(label, f) in &self.fractions {
            if f < 1.0 {
                let hint = if backing == Backing::Thp {
                    "the kernel fell back to 4 KiB pages; see \
                     /sys/kernel/mm/transparent_hugepage/{enabled,defrag}"
                } else {
                    "part of the hugetlb mapping was never faulted in"
                };
                out.notes.push(format!(
                    "huge_fraction {f:.3}: only {:.1}% of the {label} is on huge pages \
                     ({}: {hint})",
                    f * 100.0,
                    backing.name()
                ));
            }
        }
    }
}

/// Buffers and peer of one measurement; implements the timed [`Step`].
pub struct Xfer<'a> {
    setup: Setup,
    src: Option<Local>,
    dst: Option<Local>,
    peer: Option<Peer>,
    /// The peer's buffer is remapped for every transfer (pvm write, unpinned).
    peer_fresh: bool,
    pub seen: Seen,
    stop: &'a AtomicBool,
    map_failed: MapFailure<'a>,
}

impl<'a> Xfer<'a> {
    /// Forks the pvm peer (before anything else, so it inherits no buffer and the
    /// caller's CPU affinity), calls `pin`, then maps and prepares the local buffers.
    pub fn new(
        setup: Setup,
        stop: &'a AtomicBool,
        map_failed: MapFailure<'a>,
        pin: impl FnOnce() -> Result<(), WorkloadError>,
    ) -> Result<Self, WorkloadError> {
        let mut x = Xfer {
            setup,
            src: None,
            dst: None,
            peer: None,
            peer_fresh: false,
            seen: Seen::default(),
            stop,
            map_failed,
        };
        let len = setup.mapped_len();
        if setup.engine == Engine::Pvm {
            let remote_src = setup.direction == Direction::Read;
            let spec = PeerSpec {
                len,
                backing: setup.backing,
                lock: setup.pinned,
                fill_seed: remote_src.then_some(PEER_SEED),
            };
            let peer = Peer::spawn(spec, stop).map_err(|e| x.peer_error(e))?;
            x.peer_fresh = !remote_src && !setup.pinned;
            if !x.peer_fresh {
                let seen = inspect(Some(peer.pid()), peer.addr(), setup.backing)
                    .map_err(|e| WorkloadError::Failed(format!("xfer: peer buffer: {e}")))?;
                x.seen.record("peer's buffer", seen.huge_fraction);
            }
            x.peer = Some(peer);
        }
        pin()?;
        let (local_src, local_dst) = match (setup.engine, setup.direction) {
            (Engine::Memcpy, _) => (true, true),
            (Engine::Fill, _) => (false, true),
            (Engine::Pvm, Direction::Read) => (false, true),
            (Engine::Pvm, Direction::Write) => (true, false),
        };
        if local_src {
            let label = if setup.engine == Engine::Pvm {
                "local buffer"
            } else {
                "source buffer"
            };
            let buf = x.kept(label, Some(LOCAL_SEED))?;
            x.src = Some(buf);
        }
        if local_dst {
            let label = match setup.engine {
                Engine::Pvm => "local buffer",
                Engine::Fill => "buffer",
                Engine::Memcpy => "destination buffer",
            };
            x.dst = Some(if setup.pinned {
                x.kept(label, None)?
            } else {
                Local {
                    label,
                    buf: None,
                    fresh: true,
                }
            });
        }
        Ok(x)
    }

    /// A buffer mapped once: written (a pattern for sources), locked when pinned, and
    /// its backing checked.
    fn kept(&mut self, label: &'static str, seed: Option<u64>) -> Result<Local, WorkloadError> {
        let mut buf = self.map(label)?;
        match seed {
            Some(s) => buf.fill_pattern(buf.len(), s),
            None => buf.touch(),
        }
        if self.setup.pinned {
            buf.lock()
                .map_err(|e| (self.map_failed)(label, e, self.held_bytes()))?;
        }
        let seen = inspect(None, buf.addr(), self.setup.backing)
            .map_err(|e| WorkloadError::Failed(format!("xfer: {label}: {e}")))?;
        self.seen.record(label, seen.huge_fraction);
        Ok(Local {
            label,
            buf: Some(buf),
            fresh: false,
        })
    }

    /// Bytes of the buffers mapped in this process now.
    fn local_bytes(&self) -> u64 {
        let mapped = [&self.src, &self.dst]
            .into_iter()
            .flatten()
            .filter(|l| l.buf.is_some())
            .count() as u64;
        mapped * self.setup.mapped_len()
    }

    /// Bytes of all buffers of this measurement now, the peer's included.
    fn held_bytes(&self) -> u64 {
        let peer = u64::from(self.peer.is_some()) * self.setup.mapped_len();
        self.local_bytes() + peer
    }

    fn map(&self, label: &str) -> Result<Buffer, WorkloadError> {
        Buffer::map(self.setup.mapped_len(), self.setup.backing)
            .map_err(|e| (self.map_failed)(label, e, self.held_bytes()))
    }

    fn peer_error(&self, e: PeerError) -> WorkloadError {
        match e {
            // A peer that failed to map holds no buffer itself.
            PeerError::Map(m) => (self.map_failed)("pvm peer's buffer", m, self.local_bytes()),
            PeerError::Failed(m) => WorkloadError::Failed(format!("xfer: {m}")),
            PeerError::Stopped => WorkloadError::Interrupted,
        }
    }

    /// One transfer outside the timed loop whose result is compared with what was sent:
    /// proves the engine moves the right bytes to the right place. memcpy and pvm only
    /// (a fill has nothing to compare with but itself).
    pub fn check_content(&mut self) -> Result<(), WorkloadError> {
        if self.setup.engine == Engine::Fill {
            return Ok(());
        }
        self.prepare()?;
        self.transfer(0)?;
        let size = self.setup.size;
        let wrong = match (self.setup.engine, self.setup.direction) {
            (Engine::Pvm, Direction::Write) => {
                let stop = self.stop;
                match self.peer.as_mut() {
                    Some(p) => p
                        .verify(size, LOCAL_SEED, stop)
                        .map_err(|e| self.peer_error(e))?,
                    None => None,
                }
            }
            (engine, _) => {
                let seed = if engine == Engine::Pvm {
                    PEER_SEED
                } else {
                    LOCAL_SEED
                };
                self.dst
                    .as_ref()
                    .and_then(|d| d.buf.as_ref())
                    .and_then(|b| b.check_pattern(size as usize, seed))
                    .map(|o| o as u64)
            }
        };
        self.release(true)?;
        match wrong {
            None => Ok(()),
            Some(off) => Err(WorkloadError::Failed(format!(
                "xfer: the check transfer moved wrong bytes: the destination differs from \
                 the source at offset {off} of {size}"
            ))),
        }
    }

    /// For `data=zero`: overwrites the sources with zeros, after the content check has
    /// used their pattern.
    pub fn zero_sources(&mut self) -> Result<(), WorkloadError> {
        if !self.setup.zero_data || self.setup.engine == Engine::Fill {
            return Ok(());
        }
        if let Some(b) = self.src.as_mut().and_then(|l| l.buf.as_mut()) {
            b.touch();
        }
        if self.setup.engine == Engine::Pvm && self.setup.direction == Direction::Read {
            let stop = self.stop;
            if let Some(p) = self.peer.as_mut() {
                p.zero(stop).map_err(|e| self.peer_error(e))?;
            }
        }
        Ok(())
    }

    fn pvm(&mut self) -> Result<(), WorkloadError> {
        let (pid, remote) = match &self.peer {
            Some(p) => (p.pid(), p.addr()),
            None => return Err(WorkloadError::Failed("xfer: pvm without a peer".into())),
        };
        let local = match self.setup.direction {
            Direction::Read => self.dst.as_mut(),
            Direction::Write => self.src.as_mut(),
        }
        .ok_or_else(|| WorkloadError::Failed("xfer: pvm without a local buffer".into()))?
        .ptr()?;
        let size = self.setup.size;
        let mut done = 0u64;
        while done < size {
            let n = (size - done).min(PVM_CHUNK) as usize;
            let l = libc::iovec {
                iov_base: local.wrapping_add(done as usize).cast(),
                iov_len: n,
            };
            let r = libc::iovec {
                iov_base: (remote + done) as *mut libc::c_void,
                iov_len: n,
            };
            // SAFETY: the local iovec lies within our own mapped buffer; the remote one is
            // checked by the kernel against the peer's address space.
            let got = unsafe {
                match self.setup.direction {
                    Direction::Read => libc::process_vm_readv(pid, &l, 1, &r, 1, 0),
                    Direction::Write => libc::process_vm_writev(pid, &l, 1, &r, 1, 0),
                }
            };
            if got < 0 {
                let e = std::io::Error::last_os_error();
                if e.raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                return Err(pvm_error(self.setup.direction, e));
            }
            if got == 0 {
                return Err(WorkloadError::Failed(format!(
                    "xfer: process_vm_{}v moved nothing at offset {done} of {size}",
                    direction_word(self.setup.direction)
                )));
            }
            done += got as u64;
        }
        Ok(())
    }
}

fn direction_word(d: Direction) -> &'static str {
    match d {
        Direction::Read => "read",
        Direction::Write => "write",
    }
}

fn pvm_error(d: Direction, e: std::io::Error) -> WorkloadError {
    let call = format!("process_vm_{}v", direction_word(d));
    match e.raw_os_error() {
        Some(libc::ENOSYS) => WorkloadError::Unavailable(perflab_core::Unavailable::new(format!(
            "{call} is not available in this kernel (CONFIG_CROSS_MEMORY_ATTACH)"
        ))),
        Some(libc::EPERM) => WorkloadError::Failed(format!(
            "xfer: {call} into the peer was refused ({e}): ptrace access to a child is \
             blocked here (kernel.yama.ptrace_scope = 3, or a seccomp policy)"
        )),
        _ => WorkloadError::Failed(format!("xfer: {call}: {e}")),
    }
}

impl Step for Xfer<'_> {
    fn fresh(&self) -> bool {
        !self.setup.pinned
    }

    fn prepare(&mut self) -> Result<(), WorkloadError> {
        if self.peer_fresh {
            let stop = self.stop;
            if let Some(p) = self.peer.as_mut() {
                p.remap(stop).map_err(|e| self.peer_error(e))?;
            }
        }
        // Only destinations are ever fresh (see the module docs).
        let label = match self.dst.as_ref() {
            Some(l) if l.fresh && l.buf.is_none() => l.label,
            _ => return Ok(()),
        };
        let buf = self.map(label)?;
        if let Some(d) = self.dst.as_mut() {
            d.buf = Some(buf);
        }
        Ok(())
    }

    fn transfer(&mut self, iteration: u64) -> Result<(), WorkloadError> {
        let size = self.setup.size as usize;
        match self.setup.engine {
            Engine::Memcpy => {
                let src = self.src.as_mut().map(Local::ptr).transpose()?;
                let dst = self.dst.as_mut().map(Local::ptr).transpose()?;
                if let (Some(s), Some(d)) = (src, dst) {
                    // SAFETY: two distinct mappings of at least `size` bytes each. glibc's
                    // memcpy, the one perf bench mem memcpy's `default` function calls.
                    unsafe { libc::memcpy(d.cast(), s.cast(), size) };
                }
                Ok(())
            }
            Engine::Fill => {
                if let Some(d) = self.dst.as_mut().map(Local::ptr).transpose()? {
                    // SAFETY: our own mapping of at least `size` bytes. The byte changes
                    // every iteration, as in perf bench mem memset.
                    unsafe { libc::memset(d.cast(), (iteration & 0xff) as i32, size) };
                }
                Ok(())
            }
            Engine::Pvm => self.pvm(),
        }
    }

    fn release(&mut self, inspect_it: bool) -> Result<(), WorkloadError> {
        let backing = self.setup.backing;
        if inspect_it && self.peer_fresh {
            if let Some(p) = &self.peer {
                let seen = inspect(Some(p.pid()), p.addr(), backing)
                    .map_err(|e| WorkloadError::Failed(format!("xfer: peer buffer: {e}")))?;
                self.seen.record("peer's buffer", seen.huge_fraction);
            }
        }
        if let Some(d) = self.dst.as_mut().filter(|d| d.fresh) {
            if let Some(buf) = d.buf.take() {
                if inspect_it {
                    let seen = inspect(None, buf.addr(), backing)
                        .map_err(|e| WorkloadError::Failed(format!("xfer: {}: {e}", d.label)))?;
                    self.seen.record(d.label, seen.huge_fraction);
                }
                // `buf` is unmapped here, before the next transfer maps another.
            }
        }
        Ok(())
    }
}

/// Bytes a pinned setup locks in this process (mlock counts whole pages of the backing);
/// 0 unpinned.
pub fn locked_bytes(s: &Setup) -> u64 {
    if !s.pinned {
        return 0;
    }
    // pvm's peer locks its buffer in its own process, under its own limit.
    let here = match s.engine {
        Engine::Pvm => 1,
        e => e.buffers(),
    };
    here.saturating_mul(mapped_len(s.size, s.backing))
}

/// Peak buffer bytes of a setup: every buffer, the pvm peer's included, in whole pages
/// of its backing.
pub fn peak_bytes(s: &Setup) -> u64 {
    s.engine
        .buffers()
        .saturating_mul(mapped_len(s.size, s.backing))
}
