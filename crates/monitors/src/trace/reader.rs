//! Reads an instance's `trace_pipe` on a thread while the workload runs, feeding each
//! line to the span matcher as it comes (no trace text is kept).
//!
//! The pipe is opened non-blocking: a blocking read would never return once tracing is
//! off, and the thread must end when asked. The thread owns the instance and drops it
//! after closing the pipe (the kernel refuses to remove an instance whose pipe is open).
//!
//! Stopping, on `finish` and on drop alike: tracing goes off first, so the buffer stops
//! growing; then the thread drains what it holds and returns. Asked to stop while tracing
//! still ran, a thread that could not keep up never saw the pipe empty and never returned.
//! Both waits are bounded: the drain by [`DRAIN_LIMIT`] (what is left unread is said),
//! the wait for the thread by [`JOIN_LIMIT`]; a thread that outlives it is left to end
//! on its own, taking the instance with it.

use std::fs::OpenOptions;
use std::io::{ErrorKind, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::matcher::Matcher;
use super::parse::parse_line;
use super::tracefs::Instance;

/// How long the thread sleeps when the pipe is empty: short enough that the per-CPU
/// buffers do not fill between reads at netrr's event rate.
const IDLE: Duration = Duration::from_millis(2);
/// The longest the thread drains the buffer once asked to stop: a full buffer of a
/// many-CPU machine read by a slow matcher need not be read to the end.
pub const DRAIN_LIMIT: Duration = Duration::from_secs(10);
/// The longest `finish` or drop waits for the thread to return.
pub const JOIN_LIMIT: Duration = Duration::from_secs(15);

/// What the thread leaves.
pub struct Drained {
    pub matcher: Matcher,
    /// The drain stopped at [`DRAIN_LIMIT`] with events still in the buffer.
    pub cut_short: bool,
}

pub struct Reader {
    stop: Arc<AtomicBool>,
    done: Receiver<Result<Drained, String>>,
    handle: Option<JoinHandle<()>>,
    /// Where tracing is switched off, without waiting for the thread.
    tracing_on: std::path::PathBuf,
}

impl Reader {
    /// Starts reading `instance`'s pipe into `matcher`, then turns tracing on.
    pub fn spawn(instance: Instance, matcher: Matcher) -> Result<Self, String> {
        let pipe = instance.trace_pipe();
        let file = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&pipe)
            .map_err(|e| format!("cannot open {}: {e}", pipe.display()))?;
        let tracing_on = instance.tracing_on();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let (tx, done) = mpsc::channel();
        let handle = std::thread::Builder::new()
            .name("perflab-trace".into())
            .spawn(move || {
                let result = read(file, matcher, &flag);
                // The pipe is closed (in `read`); now the instance can go.
                drop(instance);
                let _ = tx.send(result);
            })
            .map_err(|e| format!("cannot start the trace reader thread: {e}"))?;
        let reader = Self {
            stop,
            done,
            handle: Some(handle),
            tracing_on,
        };
        // On an error the reader drops here: the thread stops and removes the instance.
        reader.set_tracing(true)?;
        Ok(reader)
    }

    fn set_tracing(&self, on: bool) -> Result<(), String> {
        std::fs::write(&self.tracing_on, if on { "1" } else { "0" })
            .map_err(|e| format!("{}: {e}", self.tracing_on.display()))
    }

    /// Turns tracing off, drains what is left, stops the thread and returns its matcher.
    pub fn finish(mut self) -> Result<Drained, String> {
        self.stop()
    }

    fn stop(&mut self) -> Result<Drained, String> {
        let Some(handle) = self.handle.take() else {
            return Err("the trace reader already finished".into());
        };
        // Off before asking: while events still come, the drain would not end.
        let off = self.set_tracing(false);
        self.stop.store(true, Ordering::Release);
        match self.done.recv_timeout(JOIN_LIMIT) {
            Ok(r) => {
                let _ = handle.join();
                if let Err(e) = off {
                    return Err(format!("cannot turn tracing off: {e}"));
                }
                r
            }
            Err(RecvTimeoutError::Timeout) => Err(format!(
                "the trace reader did not stop within {} s; its spans are left out",
                JOIN_LIMIT.as_secs()
            )),
            Err(RecvTimeoutError::Disconnected) => Err("the trace reader thread panicked".into()),
        }
    }
}

impl Drop for Reader {
    fn drop(&mut self) {
        if self.handle.is_some() {
            let _ = self.stop();
        }
    }
}

/// The thread's loop: read what comes, feed whole lines, and once `stop` is set drain
/// until the pipe is empty or [`DRAIN_LIMIT`] has passed.
fn read(
    mut file: std::fs::File,
    mut matcher: Matcher,
    stop: &AtomicBool,
) -> Result<Drained, String> {
    let mut buf = vec![0u8; 1 << 16];
    let mut pending: Vec<u8> = Vec::new();
    let mut deadline: Option<Instant> = None;
    let mut cut_short = false;
    loop {
        if deadline.is_none() && stop.load(Ordering::Acquire) {
            deadline = Some(Instant::now() + DRAIN_LIMIT);
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            cut_short = true;
            break;
        }
        match file.read(&mut buf) {
            Ok(n) if n > 0 => {
                pending.extend_from_slice(&buf[..n]);
                if let Some(cut) = pending.iter().rposition(|&b| b == b'\n') {
                    for line in pending[..cut].split(|&b| b == b'\n') {
                        matcher.feed_line(parse_line(&String::from_utf8_lossy(line)));
                    }
                    pending.drain(..=cut);
                }
            }
            Ok(_) => {
                if deadline.is_some() {
                    break;
                }
                std::thread::sleep(IDLE);
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                if deadline.is_some() {
                    break;
                }
                std::thread::sleep(IDLE);
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(format!("reading trace_pipe: {e}")),
        }
    }
    drop(file);
    if !pending.is_empty() && !cut_short {
        matcher.feed_line(parse_line(&String::from_utf8_lossy(&pending)));
    }
    Ok(Drained { matcher, cut_short })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::spans::parse_set;
    use crate::trace::tracefs::Tracefs;
    use perflab_sys::SysRoot;
    use std::os::unix::net::UnixStream;

    /// Two threads waking each other as fast as they can until `stop`.
    fn ping_pong(stop: Arc<AtomicBool>) -> JoinHandle<()> {
        use std::io::Write;
        let (mut a, mut b) = UnixStream::pair().unwrap();
        let echo = std::thread::spawn(move || {
            let mut byte = [0u8; 1];
            while b.read_exact(&mut byte).is_ok() && b.write_all(&byte).is_ok() {}
        });
        std::thread::spawn(move || {
            let mut byte = [0u8; 1];
            while !stop.load(Ordering::Relaxed) {
                if a.write_all(&byte).is_err() || a.read_exact(&mut byte).is_err() {
                    break;
                }
            }
            drop(a);
            let _ = echo.join();
        })
    }

    /// A reader dropped while its instance traces a context-switch load through 300
    /// spans (as the plan's trial of the monitor was) comes back, and removes the
    /// instance: it was joined with tracing still on and never saw its pipe empty.
    #[test]
    fn a_reader_dropped_mid_trace_under_load_returns_and_removes_its_instance_needs_root() {
        if !perflab_testkit::have_root("making an ftrace instance") {
            return;
        }
        let Ok(fs) = Tracefs::open(&SysRoot::host()) else {
            perflab_testkit::skip("tracefs", "tracefs cannot be mounted");
            return;
        };
        let mut toml = String::from("name = \"many\"\n");
        for i in 0..300 {
            toml.push_str(&format!(
                "[[span]]\nname = \"s{i}\"\nlabel = \"s\"\n\
                 from = {{ events = [\"sched:sched_waking\"], key = \"field:pid\", \
                 where = {{ comm = \"*\" }} }}\n\
                 to = {{ events = [\"sched:sched_switch\"], key = \"field:next_pid\" }}\n"
            ));
        }
        let spans = parse_set(&toml, "test").unwrap().spans;
        let events = vec![
            ("sched".to_string(), "sched_waking".to_string()),
            ("sched".to_string(), "sched_switch".to_string()),
        ];
        let instance = Instance::create(&fs, &events, 1024, None).unwrap();
        let name = instance.name().to_string();
        let stop = Arc::new(AtomicBool::new(false));
        let load: Vec<_> = (0..2).map(|_| ping_pong(stop.clone())).collect();
        let reader = Reader::spawn(instance, Matcher::new(spans)).unwrap();
        std::thread::sleep(Duration::from_millis(500));
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            drop(reader);
            let _ = tx.send(());
        });
        // Bounded, not timed: the drop is waited for well past its own limits.
        let back = rx.recv_timeout(JOIN_LIMIT + DRAIN_LIMIT + Duration::from_secs(30));
        stop.store(true, Ordering::Relaxed);
        for l in load {
            l.join().unwrap();
        }
        assert!(back.is_ok(), "dropping the reader hung");
        // The thread takes the instance with it once its pipe is closed.
        let t0 = Instant::now();
        while fs.fs.exists(&format!("instances/{name}")) && t0.elapsed() < JOIN_LIMIT {
            std::thread::sleep(Duration::from_millis(50));
        }
        assert!(
            !fs.fs.exists(&format!("instances/{name}")),
            "{name} is left"
        );
    }
}
