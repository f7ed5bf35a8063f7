//! Failed authentications by peer, for `perflab serve`: a peer whose handshakes fail
//! `limit` times in a row is refused at accept for `block`, doubled at each further block
//! (at most an hour), so guessing a token costs hours instead of seconds. A peer is its
//! IP address (an IPv6 peer its /64, which one host usually holds whole); a successful
//! authentication clears it. Times are passed in, so the rules are tested by counts alone.

use std::collections::HashMap;
use std::net::IpAddr;
use std::time::{Duration, Instant};

/// Peers remembered at once; past it, the least recently seen one not blocked is
/// forgotten, so a flood from many addresses cannot grow the table without bound.
const MAX_PEERS: usize = 4096;
/// The longest block.
const MAX_BLOCK: Duration = Duration::from_secs(3600);

#[derive(Debug)]
struct Peer {
    /// Failures since the last block or success.
    failures: u32,
    /// Blocks so far: each doubles the next.
    blocks: u32,
    blocked_until: Option<Instant>,
    last: Instant,
}

/// The failures of every peer seen.
#[derive(Debug)]
pub(crate) struct PeerGuard {
    limit: u32,
    block: Duration,
    peers: HashMap<IpAddr, Peer>,
}

/// What one more failure did.
#[derive(Debug, PartialEq)]
pub(crate) enum Failed {
    /// Counted: this many of the limit so far.
    Counted(u32),
    /// The peer reached the limit and is refused for this long.
    Blocked(Duration),
}

impl PeerGuard {
    pub fn new(limit: u32, block: Duration) -> Self {
        Self {
            limit: limit.max(1),
            block,
            peers: HashMap::new(),
        }
    }

    /// How much longer `ip` is refused, if it is.
    pub fn blocked(&self, ip: IpAddr, now: Instant) -> Option<Duration> {
        let until = self.peers.get(&key(ip))?.blocked_until?;
        (until > now).then(|| until - now)
    }

    /// Counts a failed handshake of `ip`. Failures older than a block's length are
    /// forgiven first, so a person who mistypes a token now and then is never refused.
    pub fn failed(&mut self, ip: IpAddr, now: Instant) -> Failed {
        self.make_room(now);
        let block = self.block;
        let p = self.peers.entry(key(ip)).or_insert(Peer {
            failures: 0,
            blocks: 0,
            blocked_until: None,
            last: now,
        });
        if now.saturating_duration_since(p.last) > block.max(Duration::from_secs(1)) * 2 {
            p.failures = 0;
        }
        p.last = now;
        p.failures += 1;
        if p.failures < self.limit {
            return Failed::Counted(p.failures);
        }
        let length = block
            .saturating_mul(1 << p.blocks.min(16))
            .min(MAX_BLOCK.max(block));
        p.failures = 0;
        p.blocks += 1;
        p.blocked_until = Some(now + length);
        Failed::Blocked(length)
    }

    /// `ip` proved it holds the token: its record is cleared.
    pub fn succeeded(&mut self, ip: IpAddr) {
        self.peers.remove(&key(ip));
    }

    pub fn limit(&self) -> u32 {
        self.limit
    }

    fn make_room(&mut self, now: Instant) {
        if self.peers.len() < MAX_PEERS {
            return;
        }
        let oldest = self
            .peers
            .iter()
            .filter(|(_, p)| p.blocked_until.is_none_or(|u| u <= now))
            .min_by_key(|(_, p)| p.last)
            .map(|(ip, _)| *ip);
        match oldest {
            Some(ip) => {
                self.peers.remove(&ip);
            }
            // Every one blocked: the one whose block ends first goes.
            None => {
                if let Some(ip) = self
                    .peers
                    .iter()
                    .min_by_key(|(_, p)| p.blocked_until)
                    .map(|(ip, _)| *ip)
                {
                    self.peers.remove(&ip);
                }
            }
        }
    }
}

/// The peer an address belongs to: IPv4 (an IPv4-mapped IPv6 address too) as it is, IPv6
/// by its /64.
fn key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let s = v6.segments();
                IpAddr::V6(std::net::Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0))
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, 1));
    const B: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, 2));

    #[test]
    fn a_peer_is_blocked_at_the_limit_and_longer_each_time() {
        let t0 = Instant::now();
        let block = Duration::from_secs(60);
        let mut g = PeerGuard::new(3, block);
        assert_eq!(g.failed(A, t0), Failed::Counted(1));
        assert_eq!(g.failed(A, t0), Failed::Counted(2));
        assert_eq!(g.blocked(A, t0), None);
        assert_eq!(g.failed(A, t0), Failed::Blocked(block));
        assert_eq!(g.blocked(A, t0), Some(block));
        // Another peer is not touched.
        assert_eq!(g.blocked(B, t0), None);
        // Once the block is over the count starts again; the next block is twice as long.
        let t1 = t0 + block;
        assert_eq!(g.blocked(A, t1), None);
        g.failed(A, t1);
        g.failed(A, t1);
        assert_eq!(g.failed(A, t1), Failed::Blocked(2 * block));
        // Blocks stop growing at an hour.
        let mut t = t1;
        for _ in 0..20 {
            t += MAX_BLOCK;
            for _ in 0..3 {
                g.failed(A, t);
            }
        }
        assert_eq!(g.blocked(A, t), Some(MAX_BLOCK));
    }

    #[test]
    fn success_clears_and_old_failures_are_forgiven() {
        let t0 = Instant::now();
        let mut g = PeerGuard::new(3, Duration::from_secs(60));
        g.failed(A, t0);
        g.failed(A, t0);
        g.succeeded(A);
        assert_eq!(g.failed(A, t0), Failed::Counted(1));
        // A mistake a day never adds up to a block.
        let mut t = t0;
        for _ in 0..10 {
            t += Duration::from_secs(86_400);
            assert_eq!(g.failed(A, t), Failed::Counted(1));
        }
    }

    #[test]
    fn ipv6_peers_are_their_64_and_the_table_is_bounded() {
        let t0 = Instant::now();
        let mut g = PeerGuard::new(2, Duration::from_secs(60));
        let a: IpAddr = "2001:db8:1:2::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2::ffff".parse().unwrap();
        g.failed(a, t0);
        assert_eq!(g.failed(b, t0), Failed::Blocked(Duration::from_secs(60)));
        assert!(g.blocked(a, t0).is_some());
        let mapped: IpAddr = "::ffff:10.0.0.1".parse().unwrap();
        g.failed(mapped, t0);
        assert!(matches!(g.failed(A, t0), Failed::Blocked(_)));
        for i in 0..(MAX_PEERS as u32 + 100) {
            g.failed(IpAddr::V4(std::net::Ipv4Addr::from(0x0b00_0000 + i)), t0);
        }
        assert!(g.peers.len() <= MAX_PEERS);
    }
}
