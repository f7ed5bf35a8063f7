//! Sockets of the measurement: a UDP or TCP connection that sends and receives whole
//! messages, and a TCP connect that binds a chosen source address first (std has none).

use std::io::{self, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpStream, UdpSocket};
use std::os::fd::{FromRawFd, OwnedFd};
use std::time::Duration;

/// The transport of a measurement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Proto {
    Udp,
    Tcp,
}

impl Proto {
    pub const NAMES: &'static [&'static str] = &["udp", "tcp"];

    pub fn from_name(s: &str) -> Option<Self> {
        match s {
            "udp" => Some(Proto::Udp),
            "tcp" => Some(Proto::Tcp),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Proto::Udp => "udp",
            Proto::Tcp => "tcp",
        }
    }
}

/// True for the errors a socket timeout (SO_RCVTIMEO / SO_SNDTIMEO) gives.
pub(crate) fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

/// A connected measurement socket.
#[derive(Debug)]
pub(crate) enum Conn {
    Udp(UdpSocket),
    Tcp(TcpStream),
}

impl Conn {
    /// Connects from `bind` (port chosen by the kernel) to `target`, the TCP handshake
    /// allowed `timeout`; the calling thread must already be in the client's network
    /// namespace. Set the per-message timeout with [`Conn::set_timeout`] after.
    pub fn connect(
        proto: Proto,
        bind: IpAddr,
        target: SocketAddr,
        timeout: Duration,
    ) -> io::Result<Self> {
        let conn = match proto {
            Proto::Udp => {
                let s = UdpSocket::bind(SocketAddr::new(bind, 0))?;
                s.connect(target)?;
                Conn::Udp(s)
            }
            Proto::Tcp => {
                let s = tcp_connect_from(bind, target, timeout)?;
                s.set_nodelay(true)?;
                Conn::Tcp(s)
            }
        };
        Ok(conn)
    }

    pub fn set_timeout(&self, t: Duration) -> io::Result<()> {
        match self {
            Conn::Udp(s) => {
                s.set_read_timeout(Some(t))?;
                s.set_write_timeout(Some(t))
            }
            Conn::Tcp(s) => {
                s.set_read_timeout(Some(t))?;
                s.set_write_timeout(Some(t))
            }
        }
    }

    pub fn try_clone(&self) -> io::Result<Self> {
        Ok(match self {
            Conn::Udp(s) => Conn::Udp(s.try_clone()?),
            Conn::Tcp(s) => Conn::Tcp(s.try_clone()?),
        })
    }

    /// Sends one whole message.
    pub fn send(&mut self, msg: &[u8]) -> io::Result<()> {
        match self {
            Conn::Udp(s) => s.send(msg).map(|_| ()),
            Conn::Tcp(s) => s.write_all(msg),
        }
    }

    /// Receives one whole message of `buf.len()` bytes. UDP: one datagram (its length is
    /// returned, a datagram of another size is the caller's to judge). TCP: exactly
    /// `buf.len()` bytes; a timeout part-way keeps waiting for the rest, since the bytes
    /// already read cannot be put back, and reports a timeout only between messages.
    pub fn recv(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Conn::Udp(s) => s.recv(buf),
            Conn::Tcp(s) => read_whole(s, buf, 4),
        }
    }
}

/// Reads exactly `buf.len()` bytes. A timeout before the first byte is returned as is; once
/// a message has started, up to `patience` further timeouts are waited out.
pub(crate) fn read_whole(s: &mut impl Read, buf: &mut [u8], patience: u32) -> io::Result<usize> {
    let mut got = 0;
    let mut waits = 0;
    while got < buf.len() {
        match s.read(&mut buf[got..]) {
            Ok(0) => {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the peer closed the connection",
                ))
            }
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if is_timeout(&e) && got > 0 && waits < patience => waits += 1,
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// Writes all of `buf`, waiting out up to `patience` send timeouts part-way.
pub(crate) fn write_whole(s: &mut impl Write, buf: &[u8], patience: u32) -> io::Result<()> {
    let mut sent = 0;
    let mut waits = 0;
    while sent < buf.len() {
        match s.write(&buf[sent..]) {
            Ok(0) => return Err(io::Error::new(io::ErrorKind::WriteZero, "wrote nothing")),
            Ok(n) => sent += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if is_timeout(&e) && waits < patience => waits += 1,
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// A TCP connection from `bind` to `target` that gives up after `timeout` (Linux applies
/// SO_SNDTIMEO to a blocking connect).
pub(crate) fn tcp_connect_from(
    bind: IpAddr,
    target: SocketAddr,
    timeout: Duration,
) -> io::Result<TcpStream> {
    let family = match target {
        SocketAddr::V4(_) => libc::AF_INET,
        SocketAddr::V6(_) => libc::AF_INET6,
    };
    // SAFETY: plain socket(2); the descriptor is owned right after.
    let fd = unsafe { libc::socket(family, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd is a fresh descriptor nobody else owns.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    let tv = libc::timeval {
        tv_sec: timeout.as_secs() as libc::time_t,
        tv_usec: timeout.subsec_micros() as libc::suseconds_t,
    };
    // SAFETY: setsockopt reads a timeval we own, of the size we pass.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_SNDTIMEO,
            &tv as *const libc::timeval as *const libc::c_void,
            std::mem::size_of::<libc::timeval>() as libc::socklen_t,
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    if !bind.is_unspecified() {
        with_sockaddr(SocketAddr::new(bind, 0), |sa, len| {
            // SAFETY: sa points to a sockaddr of length len.
            unsafe { libc::bind(fd, sa, len) }
        })?;
    }
    with_sockaddr(target, |sa, len| {
        // SAFETY: sa points to a sockaddr of length len.
        unsafe { libc::connect(fd, sa, len) }
    })
    .map_err(|e| {
        // A connect cut short by SO_SNDTIMEO reports EINPROGRESS.
        if e.raw_os_error() == Some(libc::EINPROGRESS) {
            io::Error::new(io::ErrorKind::TimedOut, "connection timed out")
        } else {
            e
        }
    })?;
    Ok(TcpStream::from(owned))
}

/// Calls `f` with `addr` as a C sockaddr; an error when `f` returns < 0.
fn with_sockaddr(
    addr: SocketAddr,
    f: impl FnOnce(*const libc::sockaddr, libc::socklen_t) -> libc::c_int,
) -> io::Result<()> {
    let rc = match addr {
        SocketAddr::V4(a) => {
            // SAFETY: sockaddr_in is plain data; all-zero is a valid value.
            let mut sa: libc::sockaddr_in = unsafe { std::mem::zeroed() };
            sa.sin_family = libc::AF_INET as libc::sa_family_t;
            sa.sin_port = a.port().to_be();
            sa.sin_addr.s_addr = u32::from_ne_bytes(a.ip().octets());
            f(
                &sa as *const libc::sockaddr_in as *const libc::sockaddr,
                std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
            )
        }
        SocketAddr::V6(a) => {
            // SAFETY: sockaddr_in6 is plain data; all-zero is a valid value.
            let mut sa: libc::sockaddr_in6 = unsafe { std::mem::zeroed() };
            sa.sin6_family = libc::AF_INET6 as libc::sa_family_t;
            sa.sin6_port = a.port().to_be();
            sa.sin6_addr.s6_addr = a.ip().octets();
            sa.sin6_scope_id = a.scope_id();
            f(
                &sa as *const libc::sockaddr_in6 as *const libc::sockaddr,
                std::mem::size_of::<libc::sockaddr_in6>() as libc::socklen_t,
            )
        }
    };
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{Ipv4Addr, TcpListener};

    #[test]
    fn tcp_connect_binds_the_source_address() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let target = l.local_addr().unwrap();
        let src = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2));
        let s = tcp_connect_from(src, target, Duration::from_secs(1)).unwrap();
        assert_eq!(s.local_addr().unwrap().ip(), src);
        let (_, peer) = l.accept().unwrap();
        assert_eq!(peer.ip(), src);
    }

    #[test]
    fn tcp_connect_to_a_closed_port_is_refused() {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap();
        let e = tcp_connect_from(
            IpAddr::V4(Ipv4Addr::LOCALHOST),
            port,
            Duration::from_millis(300),
        )
        .unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::ConnectionRefused, "{e}");
    }
}
