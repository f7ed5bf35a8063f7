//! A peer as users write it, read without asking the network: `ADDR`, `ADDR:PORT`,
//! `[V6]:PORT` or a host name with an optional port, each optionally prefixed `host:`.
//! The plan checks this form before a run exists, so `peer=999.1.1.1:1` or `peer=host:`
//! is one line of bad input instead of a run of failed measurements; the name is resolved
//! when the measurement connects.

use std::net::{IpAddr, SocketAddr};

/// The port `perflab serve` listens on unless told another.
pub const DEFAULT_PORT: u16 = 7700;

/// Why `text` is no peer, with the forms there are.
pub(crate) fn bad_peer(text: &str, why: &str) -> String {
    format!(
        "peer {text:?}: {why} (write ADDR, ADDR:PORT, [IPv6]:PORT or host:ADDR; the port \
         defaults to {DEFAULT_PORT})"
    )
}

/// Where a peer is, as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum PeerName {
    Addr(SocketAddr),
    /// A host name to resolve, and the port.
    Host(String, u16),
}

/// Reads `text` as a peer; the error says what is wrong and which forms there are.
pub(crate) fn peer_name(text: &str) -> Result<PeerName, String> {
    let t = text.trim();
    let t = t.strip_prefix("host:").unwrap_or(t);
    let bad = |why: &str| bad_peer(text, why);
    if t.is_empty() {
        return Err(bad("empty"));
    }
    let addr = if let Ok(a) = t.parse::<SocketAddr>() {
        PeerName::Addr(a)
    } else if let Ok(ip) = t.parse::<IpAddr>() {
        PeerName::Addr(SocketAddr::new(ip, DEFAULT_PORT))
    } else {
        let (host, port) = match t.rsplit_once(':') {
            Some((h, p)) => (
                h,
                p.parse::<u16>()
                    .map_err(|_| bad("the port is not a number from 1 to 65535"))?,
            ),
            None => (t, DEFAULT_PORT),
        };
        host_name(host).map_err(|why| bad(&why))?;
        PeerName::Host(host.to_string(), port)
    };
    let port = match &addr {
        PeerName::Addr(a) => a.port(),
        PeerName::Host(_, p) => *p,
    };
    if port == 0 {
        return Err(bad("port 0 is no port a server listens on"));
    }
    Ok(addr)
}

/// A DNS host name (RFC 1123): labels of letters, digits and hyphens, none starting or
/// ending with a hyphen, at most 63 bytes each and 253 in all. A name whose last label is
/// all digits is an IPv4 address that does not read (`999.1.1.1`), never a host.
fn host_name(host: &str) -> Result<(), String> {
    if host.is_empty() {
        return Err("no host before the port".into());
    }
    if host.len() > 253 {
        return Err("a host name is at most 253 bytes".into());
    }
    let labels: Vec<&str> = host.strip_suffix('.').unwrap_or(host).split('.').collect();
    for label in &labels {
        let ok = !label.is_empty()
            && label.len() <= 63
            && !label.starts_with('-')
            && !label.ends_with('-')
            && label
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-');
        if !ok {
            return Err(format!("{host:?} is neither an IP address nor a host name"));
        }
    }
    if labels
        .last()
        .is_some_and(|l| l.bytes().all(|b| b.is_ascii_digit()))
    {
        return Err(format!("{host:?} is not an IP address"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_and_names_read_without_the_network() {
        let addr = |s: &str| match peer_name(s).unwrap() {
            PeerName::Addr(a) => a.to_string(),
            other => panic!("{s}: {other:?}"),
        };
        assert_eq!(addr("10.0.0.2:7000"), "10.0.0.2:7000");
        assert_eq!(addr("host:10.0.0.2"), "10.0.0.2:7700");
        assert_eq!(addr("[::1]:9"), "[::1]:9");
        assert_eq!(addr("::1"), "[::1]:7700");
        assert_eq!(
            peer_name("host:db-1.lab.example:81").unwrap(),
            PeerName::Host("db-1.lab.example".into(), 81)
        );
        assert_eq!(
            peer_name("localhost").unwrap(),
            PeerName::Host("localhost".into(), DEFAULT_PORT)
        );
    }

    #[test]
    fn what_no_server_can_be_is_refused_with_the_forms_there_are() {
        for (bad, why) in [
            ("", "empty"),
            ("host:", "empty"),
            ("999.1.1.1:1", "\"999.1.1.1\" is not an IP address"),
            ("999.1.1.1", "is not an IP address"),
            ("10.0.0.2:http", "port is not a number"),
            ("10.0.0.2:0", "port 0"),
            ("10.0.0.2:99999", "port is not a number"),
            ("host:99999", "\"99999\" is not an IP address"),
            (":7700", "no host before the port"),
            ("bad_name:1", "neither an IP address nor a host name"),
            ("-a.example", "neither an IP address nor a host name"),
            ("a..b", "neither an IP address nor a host name"),
        ] {
            let e = peer_name(bad).unwrap_err();
            assert!(e.contains(why) && e.contains("ADDR:PORT"), "{bad}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }
}
