//! Background load around a measurement: bulk TCP streams over the same path (the seed's
//! three netperf streams) and busy-loop CPU hogs. Everything here stops and is joined when
//! the [`Background`] is dropped, whatever the exit path.

use std::io::{self, Write};
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::Duration;

use super::ns::{enter_netns, pin_self};
use super::responder::{Running, POLL};
use super::sock::{is_timeout, tcp_connect_from};

/// Bytes per write of a bulk stream, as netperf's TCP_STREAM default send size on Linux.
const CHUNK: usize = 128 << 10;

/// Load threads and what they achieved. Stops everything when dropped.
#[derive(Debug, Default)]
pub(crate) struct Background {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
    /// The in-process sink (None with a remote peer or no streams).
    pub sink: Option<Running>,
    /// Bytes sent by all streams.
    pub sent: Arc<AtomicU64>,
    /// Bytes received by the in-process sink.
    pub received: Arc<AtomicU64>,
    pub streams: u32,
    pub hogs: Vec<u32>,
}

impl Background {
    /// Starts `n` bulk streams from `bind` (inside `netns`) to `target`.
    pub fn start_streams(
        &mut self,
        n: u32,
        netns: &str,
        bind: IpAddr,
        target: SocketAddr,
        timeout: Duration,
    ) -> Result<(), String> {
        for i in 0..n {
            let (tx, rx) = mpsc::channel::<Result<(), String>>();
            let stop = self.stop.clone();
            let sent = self.sent.clone();
            let netns = netns.to_string();
            let h = std::thread::Builder::new()
                .name(format!("netrr-load{i}"))
                .spawn(move || {
                    let conn = enter_netns(&netns).and_then(|()| {
                        tcp_connect_from(bind, target, timeout)
                            .and_then(|s| s.set_write_timeout(Some(POLL)).map(|()| s))
                            .map_err(|e| {
                                format!("load stream {i}: cannot connect to {target}: {e}")
                            })
                    });
                    match conn {
                        Ok(s) => {
                            let _ = tx.send(Ok(()));
                            stream(s, &stop, &sent);
                        }
                        Err(e) => {
                            let _ = tx.send(Err(e));
                        }
                    }
                })
                .map_err(|e| format!("cannot start a load thread: {e}"))?;
            self.threads.push(h);
            match rx.recv_timeout(timeout + Duration::from_secs(1)) {
                Ok(Ok(())) => {}
                Ok(Err(e)) => return Err(e),
                Err(_) => return Err(format!("load stream {i} did not connect to {target}")),
            }
            self.streams += 1;
        }
        Ok(())
    }

    /// Starts one busy-loop thread pinned to each of `cpus`.
    pub fn start_hogs(&mut self, cpus: &[u32]) -> Result<(), String> {
        for &cpu in cpus {
            let (tx, rx) = mpsc::channel::<Result<(), String>>();
            let stop = self.stop.clone();
            let h = std::thread::Builder::new()
                .name(format!("netrr-hog{cpu}"))
                .spawn(move || match pin_self(Some(cpu)) {
                    Ok(()) => {
                        let _ = tx.send(Ok(()));
                        while !stop.load(Ordering::Relaxed) {
                            std::hint::spin_loop();
                        }
                    }
                    Err(e) => {
                        let _ = tx.send(Err(format!("CPU hog: {e}")));
                    }
                })
                .map_err(|e| format!("cannot start a hog thread: {e}"))?;
            self.threads.push(h);
            match rx.recv_timeout(Duration::from_secs(5)) {
                Ok(Ok(())) => self.hogs.push(cpu),
                Ok(Err(e)) => return Err(e),
                Err(_) => return Err(format!("the CPU hog on CPU {cpu} did not start")),
            }
        }
        Ok(())
    }

    /// Stops every thread and waits for them.
    pub fn stop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for h in self.threads.drain(..) {
            let _ = h.join();
        }
        if let Some(s) = self.sink.take() {
            let _ = s.finish();
        }
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        self.stop();
    }
}

fn stream(mut s: TcpStream, stop: &AtomicBool, sent: &AtomicU64) {
    let buf = vec![0x5au8; CHUNK];
    while !stop.load(Ordering::Relaxed) {
        match s.write(&buf) {
            Ok(n) => {
                sent.fetch_add(n as u64, Ordering::Relaxed);
            }
            Err(e) if is_timeout(&e) || e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return,
        }
    }
}
