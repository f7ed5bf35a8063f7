//! The user-space frame forwarder of the `tap` path: one thread that reads each frame one
//! tap delivers and writes it to the other, both ways, standing in for a VM's virtio
//! backend. It runs until its guard stops it.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::thread::JoinHandle;

use crate::error::KnobError;

/// Frames larger than this do not occur on a 1500-MTU tap without offloads.
const FRAME: usize = 65536;

pub(crate) struct Forwarder {
    stop: OwnedFd,
    thread: Option<JoinHandle<std::io::Result<()>>>,
}

impl Forwarder {
    /// Starts forwarding between two tap descriptors, which it owns from now on: they
    /// close, and the taps vanish, when the thread ends.
    pub(crate) fn start(a: OwnedFd, b: OwnedFd) -> Result<Self, KnobError> {
        let fail = |why: String| KnobError::Command {
            cmd: "start the tap forwarder".into(),
            why,
        };
        // SAFETY: eventfd has no memory preconditions; the result is checked.
        let raw = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        if raw < 0 {
            return Err(fail(format!(
                "eventfd: {}",
                std::io::Error::last_os_error()
            )));
        }
        // SAFETY: `raw` is a new descriptor nobody else owns.
        let stop = unsafe { OwnedFd::from_raw_fd(raw) };
        let stop_raw = stop.as_raw_fd();
        let thread = std::thread::Builder::new()
            .name("perflab-tapfwd".into())
            .spawn(move || pump(&a, &b, stop_raw))
            .map_err(|e| fail(e.to_string()))?;
        Ok(Self {
            stop,
            thread: Some(thread),
        })
    }

    /// Stops the thread and waits for it; its descriptors close with it.
    pub(crate) fn stop(&mut self) -> Result<(), KnobError> {
        let Some(thread) = self.thread.take() else {
            return Ok(());
        };
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from a live u64 to an eventfd we own.
        unsafe {
            libc::write(
                self.stop.as_raw_fd(),
                (&one as *const u64).cast(),
                std::mem::size_of::<u64>(),
            )
        };
        let fail = |why: String| KnobError::Command {
            cmd: "tap forwarder".into(),
            why,
        };
        match thread.join() {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(fail(e.to_string())),
            Err(_) => Err(fail("the thread panicked".into())),
        }
    }
}

impl Drop for Forwarder {
    fn drop(&mut self) {
        if let Err(e) = self.stop() {
            eprintln!("perflab: {e}");
        }
    }
}

fn pump(a: &OwnedFd, b: &OwnedFd, stop: RawFd) -> std::io::Result<()> {
    let mut buf = vec![0u8; FRAME];
    let (a, b) = (a.as_raw_fd(), b.as_raw_fd());
    loop {
        let mut fds = [a, b, stop].map(|fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        });
        // SAFETY: `fds` is a valid array of three pollfd for the duration of the call.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), 3, -1) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if fds[2].revents != 0 {
            return Ok(());
        }
        if fds[0].revents != 0 {
            drain(a, b, &mut buf)?;
        }
        if fds[1].revents != 0 {
            drain(b, a, &mut buf)?;
        }
    }
}

/// Moves every frame waiting on `from` to `to`, one read and one write each.
fn drain(from: RawFd, to: RawFd, buf: &mut [u8]) -> std::io::Result<()> {
    loop {
        // SAFETY: reads at most buf.len() bytes into a live buffer.
        let n = unsafe { libc::read(from, buf.as_mut_ptr().cast(), buf.len()) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            return match e.raw_os_error() {
                Some(libc::EAGAIN) => Ok(()),
                Some(libc::EINTR) => continue,
                _ => Err(e),
            };
        }
        let len = usize::try_from(n).unwrap_or(0);
        // SAFETY: writes the `len` bytes just read from a live buffer.
        let w: isize = unsafe { libc::write(to, buf.as_ptr().cast(), len) };
        // A tap that is down or whose queue is full refuses the frame, as a NIC would
        // drop it; the sender's protocol recovers.
        let _ = w;
    }
}
