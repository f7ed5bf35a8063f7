//! The answering side: echoes each request of the agreed size back to its sender, and a
//! sink that reads and discards bulk load streams. Used in-process by `netrr` (on a thread
//! inside the server's namespace) and by `perflab serve` for each session.
//!
//! Each runs on its own thread that polls a stop flag between socket timeouts of
//! [`POLL`], so dropping the handle stops it within that time on every exit path.

use std::io::{self, Read};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use super::ns::{enter_netns, pin_self};
use super::sock::{is_timeout, read_whole, write_whole, Proto};

/// How often a blocked responder thread looks at its stop flag.
pub(crate) const POLL: Duration = Duration::from_millis(50);

/// Where and how a responder runs.
#[derive(Clone, Debug)]
pub(crate) struct Placement {
    /// Network namespace file; empty: perflab's own.
    pub netns: String,
    pub addr: IpAddr,
    pub cpu: Option<u32>,
    /// Answer only this address (serve: the session's peer); None: anyone.
    pub allow: Option<IpAddr>,
}

/// A running thread that stops and is joined when dropped.
#[derive(Debug)]
pub(crate) struct Running {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<Result<(), String>>>,
    pub port: u16,
}

impl Running {
    /// Stops the thread and returns what it ended with.
    pub fn finish(mut self) -> Result<(), String> {
        self.halt()
    }

    fn halt(&mut self) -> Result<(), String> {
        self.stop.store(true, Ordering::Relaxed);
        match self.handle.take() {
            Some(h) => h
                .join()
                .unwrap_or_else(|_| Err("the responder thread panicked".into())),
            None => Ok(()),
        }
    }

    /// True when the thread ended on its own (an error).
    pub fn is_finished(&self) -> bool {
        self.handle.as_ref().is_none_or(|h| h.is_finished())
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.halt();
    }
}

/// The loop a responder thread runs once bound, until its stop flag is set.
type Serve = Box<dyn FnOnce(&AtomicBool) -> Result<(), String> + Send>;

/// Starts a thread that enters `place`, binds `place.addr` on a kernel-chosen port, hands
/// the port back, then runs `serve` until the stop flag is set.
fn spawn<F>(place: &Placement, role: &str, bind: F) -> Result<Running, String>
where
    F: FnOnce(SocketAddr) -> io::Result<(u16, Serve)> + Send + 'static,
{
    let stop = Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::channel::<Result<u16, String>>();
    let place = place.clone();
    let flag = stop.clone();
    let role = role.to_string();
    let handle = std::thread::Builder::new()
        .name(format!("netrr-{role}"))
        .spawn(move || {
            let setup = enter_netns(&place.netns)
                .and_then(|()| pin_self(place.cpu))
                .and_then(|()| {
                    bind(SocketAddr::new(place.addr, 0))
                        .map_err(|e| format!("{role}: cannot listen on {}: {e}", place.addr))
                });
            match setup {
                Ok((port, run)) => {
                    let _ = tx.send(Ok(port));
                    run(&flag)
                }
                Err(e) => {
                    let _ = tx.send(Err(e.clone()));
                    Err(e)
                }
            }
        })
        .map_err(|e| format!("cannot start a thread: {e}"))?;
    let mut running = Running {
        stop,
        handle: Some(handle),
        port: 0,
    };
    match rx.recv_timeout(Duration::from_secs(10)) {
        Ok(Ok(port)) => {
            running.port = port;
            Ok(running)
        }
        Ok(Err(e)) => Err(e),
        Err(_) => Err("the responder did not start within 10 s".into()),
    }
}

/// Starts an echo responder for requests of `size` bytes.
pub(crate) fn start_echo(proto: Proto, size: usize, place: &Placement) -> Result<Running, String> {
    let allow = place.allow;
    match proto {
        Proto::Udp => spawn(place, "udp-responder", move |addr| {
            let s = UdpSocket::bind(addr)?;
            s.set_read_timeout(Some(POLL))?;
            let port = s.local_addr()?.port();
            Ok((
                port,
                Box::new(move |stop: &AtomicBool| udp_echo(&s, size, allow, stop)) as Serve,
            ))
        }),
        Proto::Tcp => spawn(place, "tcp-responder", move |addr| {
            let l = TcpListener::bind(addr)?;
            l.set_nonblocking(true)?;
            let port = l.local_addr()?.port();
            Ok((
                port,
                Box::new(move |stop: &AtomicBool| tcp_echo(&l, size, allow, stop)) as Serve,
            ))
        }),
    }
}

fn udp_echo(
    s: &UdpSocket,
    size: usize,
    allow: Option<IpAddr>,
    stop: &AtomicBool,
) -> Result<(), String> {
    // One byte more than any datagram, so an oversized one is seen as such.
    let mut buf = vec![0u8; 65_536];
    while !stop.load(Ordering::Relaxed) {
        match s.recv_from(&mut buf) {
            // Only requests of the agreed size from the allowed peer are answered: the
            // responder must not become a reflector of arbitrary traffic.
            Ok((n, from)) if n == size && allow.is_none_or(|a| a == from.ip()) => {
                if let Err(e) = s.send_to(&buf[..n], from) {
                    if !is_timeout(&e) && e.kind() != io::ErrorKind::ConnectionRefused {
                        return Err(format!("udp responder: cannot answer {from}: {e}"));
                    }
                }
            }
            Ok(_) => {}
            Err(e) if is_timeout(&e) || e.kind() == io::ErrorKind::Interrupted => {}
            // An ICMP error for an earlier reply (the client has gone) is not ours to end on.
            Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {}
            Err(e) => return Err(format!("udp responder: {e}")),
        }
    }
    Ok(())
}

/// Accepts one connection at a time (the measurement's), echoing whole messages.
fn tcp_echo(
    l: &TcpListener,
    size: usize,
    allow: Option<IpAddr>,
    stop: &AtomicBool,
) -> Result<(), String> {
    let mut buf = vec![0u8; size];
    while !stop.load(Ordering::Relaxed) {
        let (mut c, from) = match l.accept() {
            Ok(x) => x,
            Err(e) if is_timeout(&e) || e.kind() == io::ErrorKind::Interrupted => {
                std::thread::sleep(POLL / 5);
                continue;
            }
            Err(e) => return Err(format!("tcp responder: accept: {e}")),
        };
        if allow.is_some_and(|a| a != from.ip()) {
            continue;
        }
        let setup = c
            .set_nonblocking(false)
            .and_then(|()| c.set_nodelay(true))
            .and_then(|()| c.set_read_timeout(Some(POLL)))
            .and_then(|()| c.set_write_timeout(Some(POLL)));
        if let Err(e) = setup {
            return Err(format!("tcp responder: {e}"));
        }
        while !stop.load(Ordering::Relaxed) {
            match read_whole(&mut c, &mut buf, 20) {
                Ok(_) => {
                    if write_whole(&mut c, &buf, 20).is_err() {
                        break;
                    }
                }
                Err(e) if is_timeout(&e) || e.kind() == io::ErrorKind::Interrupted => {}
                // The client closed or reset: wait for the next one.
                Err(_) => break,
            }
        }
    }
    Ok(())
}

/// Starts a sink for up to `streams` bulk TCP connections; bytes read go to `bytes`.
pub(crate) fn start_sink(
    streams: u32,
    place: &Placement,
    bytes: Arc<AtomicU64>,
) -> Result<Running, String> {
    let allow = place.allow;
    spawn(place, "load-sink", move |addr| {
        let l = TcpListener::bind(addr)?;
        l.set_nonblocking(true)?;
        let port = l.local_addr()?.port();
        Ok((
            port,
            Box::new(move |stop: &AtomicBool| sink(&l, streams, allow, stop, &bytes)) as Serve,
        ))
    })
}

fn sink(
    l: &TcpListener,
    streams: u32,
    allow: Option<IpAddr>,
    stop: &AtomicBool,
    bytes: &AtomicU64,
) -> Result<(), String> {
    std::thread::scope(|scope| {
        let mut accepted = 0;
        while !stop.load(Ordering::Relaxed) {
            if accepted >= streams {
                std::thread::sleep(POLL);
                continue;
            }
            match l.accept() {
                Ok((c, from)) if allow.is_none_or(|a| a == from.ip()) => {
                    accepted += 1;
                    scope.spawn(move || drain(c, stop, bytes));
                }
                Ok(_) => {}
                Err(e) if is_timeout(&e) || e.kind() == io::ErrorKind::Interrupted => {
                    std::thread::sleep(POLL / 5);
                }
                Err(e) => return Err(format!("load sink: accept: {e}")),
            }
        }
        Ok(())
    })
}

fn drain(mut c: TcpStream, stop: &AtomicBool, bytes: &AtomicU64) {
    if c.set_nonblocking(false).is_err() || c.set_read_timeout(Some(POLL)).is_err() {
        return;
    }
    let mut buf = vec![0u8; 128 << 10];
    while !stop.load(Ordering::Relaxed) {
        match c.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => {
                bytes.fetch_add(n as u64, Ordering::Relaxed);
            }
            Err(e) if is_timeout(&e) || e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return,
        }
    }
}
