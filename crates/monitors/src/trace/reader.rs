//! Reads an instance's `trace_pipe` on a thread while the workload runs, feeding each
//! line to the span matcher as it comes (no trace text is kept).
//!
//! The pipe is opened non-blocking: a blocking read would never return once tracing is
//! off, and the thread must end when asked. At the end the caller turns tracing off first,
//! then asks the thread to stop: it drains what the buffer still holds, then returns.

use std::fs::OpenOptions;
use std::io::{ErrorKind, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use super::matcher::Matcher;
use super::parse::parse_line;

/// How long the thread sleeps when the pipe is empty: short enough that the per-CPU
/// buffers do not fill between reads at netrr's event rate.
const IDLE: Duration = Duration::from_millis(2);

pub struct Reader {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<Result<Matcher, String>>>,
}

impl Reader {
    pub fn spawn(pipe: &Path, mut matcher: Matcher) -> Result<Self, String> {
        let mut file = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(pipe)
            .map_err(|e| format!("cannot open {}: {e}", pipe.display()))?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::Builder::new()
            .name("perflab-trace".into())
            .spawn(move || {
                let mut buf = vec![0u8; 1 << 16];
                let mut pending: Vec<u8> = Vec::new();
                loop {
                    match file.read(&mut buf) {
                        Ok(n) if n > 0 => {
                            pending.extend_from_slice(&buf[..n]);
                            let cut = pending.iter().rposition(|&b| b == b'\n');
                            if let Some(cut) = cut {
                                for line in pending[..cut].split(|&b| b == b'\n') {
                                    matcher.feed_line(parse_line(&String::from_utf8_lossy(line)));
                                }
                                pending.drain(..=cut);
                            }
                        }
                        Ok(_) => {
                            if flag.load(Ordering::Acquire) {
                                break;
                            }
                            std::thread::sleep(IDLE);
                        }
                        Err(e) if e.kind() == ErrorKind::WouldBlock => {
                            if flag.load(Ordering::Acquire) {
                                break;
                            }
                            std::thread::sleep(IDLE);
                        }
                        Err(e) if e.kind() == ErrorKind::Interrupted => {}
                        Err(e) => return Err(format!("reading trace_pipe: {e}")),
                    }
                }
                if !pending.is_empty() {
                    matcher.feed_line(parse_line(&String::from_utf8_lossy(&pending)));
                }
                Ok(matcher)
            })
            .map_err(|e| format!("cannot start the trace reader thread: {e}"))?;
        Ok(Self {
            stop,
            handle: Some(handle),
        })
    }

    /// Drains what is left, stops the thread and returns its matcher.
    pub fn finish(mut self) -> Result<Matcher, String> {
        self.stop.store(true, Ordering::Release);
        match self.handle.take().map(JoinHandle::join) {
            Some(Ok(r)) => r,
            Some(Err(_)) => Err("the trace reader thread panicked".into()),
            None => Err("the trace reader already finished".into()),
        }
    }
}

impl Drop for Reader {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}
