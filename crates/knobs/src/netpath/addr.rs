//! The addresses of a path. Both ends live in perflab's own namespaces, whose routing
//! tables are their own, so no host route can capture the traffic; the subnet still
//! avoids every host route, so that a person reading `ip addr` in either place never sees
//! the same network twice.

use std::io::BufRead;
use std::net::Ipv4Addr;

use perflab_sys::SysRoot;

/// A host route: destination and netmask.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Route {
    pub dest: Ipv4Addr,
    pub mask: Ipv4Addr,
}

/// Parses `/proc/net/route`: a header line, then one route a line with the destination
/// (field 2) and mask (field 8) as the hex of the kernel's network-order word, printed in
/// the machine's byte order. Lines that do not parse are skipped: a route the parser
/// cannot read only makes the subnet choice more cautious, never wrong.
pub fn parse_routes(reader: impl BufRead) -> Vec<Route> {
    let word = |s: &str| {
        u32::from_str_radix(s, 16)
            .ok()
            .map(|w| Ipv4Addr::from(w.to_ne_bytes()))
    };
    reader
        .lines()
        .map_while(Result::ok)
        .skip(1)
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            Some(Route {
                dest: word(f.get(1)?)?,
                mask: word(f.get(7)?)?,
            })
        })
        .collect()
}

fn overlaps(a: Route, b: Route) -> bool {
    let mask = u32::from(a.mask) & u32::from(b.mask);
    u32::from(a.dest) & mask == u32::from(b.dest) & mask
}

/// The first /24 in 10.213.0.0/16 (a block no common tool hands out by default) that no
/// host route other than the default one covers or falls in.
pub fn choose_subnet(sys: &SysRoot) -> [u8; 3] {
    let routes: Vec<Route> = sys
        .open("proc/net/route")
        .map(parse_routes)
        .unwrap_or_default()
        .into_iter()
        .filter(|r| !r.mask.is_unspecified())
        .collect();
    (0..=255u8)
        .map(|c| [10, 213, c])
        .find(|&[a, b, c]| {
            let ours = Route {
                dest: Ipv4Addr::new(a, b, c, 0),
                mask: Ipv4Addr::new(255, 255, 255, 0),
            };
            !routes.iter().any(|r| overlaps(*r, ours))
        })
        // Every /24 of the block routed on the host: the namespaces are isolated anyway.
        .unwrap_or([10, 213, 0])
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn route_line(dest: [u8; 4], mask: [u8; 4]) -> String {
        let hex = |b: [u8; 4]| format!("{:08X}", u32::from_ne_bytes(b));
        format!(
            "eth0\t{}\t00000000\t0001\t0\t0\t0\t{}\t0\t0\t0\n",
            hex(dest),
            hex(mask)
        )
    }

    const HEADER: &str =
        "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n";

    #[test]
    fn parses_routes_in_machine_order() {
        let text = format!(
            "{HEADER}{}{}",
            route_line([0, 0, 0, 0], [0, 0, 0, 0]),
            route_line([192, 0, 2, 0], [255, 255, 255, 0])
        );
        let routes = parse_routes(text.as_bytes());
        assert_eq!(routes.len(), 2);
        assert_eq!(routes[1].dest, Ipv4Addr::new(192, 0, 2, 0));
        assert_eq!(routes[1].mask, Ipv4Addr::new(255, 255, 255, 0));
    }

    #[test]
    fn skips_subnets_the_host_routes() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("proc/net")).unwrap();
        let text = format!(
            "{HEADER}{}{}{}",
            route_line([0, 0, 0, 0], [0, 0, 0, 0]),
            route_line([10, 213, 0, 0], [255, 255, 255, 0]),
            route_line([10, 213, 1, 128], [255, 255, 255, 128])
        );
        std::fs::write(dir.path().join("proc/net/route"), text).unwrap();
        assert_eq!(choose_subnet(&SysRoot::at(dir.path())), [10, 213, 2]);
        // A covering /8 leaves no free /24: the fallback still gives an address.
        let text = format!("{HEADER}{}", route_line([10, 0, 0, 0], [255, 0, 0, 0]));
        std::fs::write(dir.path().join("proc/net/route"), text).unwrap();
        assert_eq!(choose_subnet(&SysRoot::at(dir.path())), [10, 213, 0]);
        // No routing table at all (a fixture tree): the first subnet.
        assert_eq!(choose_subnet(&SysRoot::at("/nonexistent")), [10, 213, 0]);
    }

    proptest! {
        #[test]
        fn parse_never_panics(s in "\\PC{0,300}") {
            let _ = parse_routes(s.as_bytes());
        }
    }
}
