//! The PCIe link of each NVIDIA display or 3D controller, from sysfs through a SysRoot
//! (so doctor's line is tested on a captured tree), and the bandwidth the link gives.

use perflab_sys::SysRoot;

const NVIDIA: &str = "0x10de";
const DEVICES: &str = "sys/bus/pci/devices";

/// One GPU's link as sysfs reports it.
#[derive(Clone, Debug, PartialEq)]
pub struct Link {
    /// `0000:01:00.0`.
    pub address: String,
    /// The transfer rate per lane, GT/s (`current_link_speed`: "32.0 GT/s PCIe").
    pub gts: f64,
    pub width: u32,
    /// `max_link_speed` and `max_link_width`, where they differ from the current ones a
    /// link trained down (a riser, a slot wired x8, power saving at idle).
    pub max_gts: Option<f64>,
    pub max_width: Option<u32>,
}

impl Link {
    /// The PCIe generation of this transfer rate.
    pub fn generation(&self) -> Option<u32> {
        generation(self.gts)
    }

    /// Theoretical bandwidth per direction in GB/s (10^9 bytes): lanes × rate × the
    /// line code's payload share (8b/10b to Gen2, 128b/130b from Gen3; Gen6's FLIT
    /// mode is counted at 242/256). Packet headers cost a further ~5-15%, so copies reach
    /// about 80-90% of it.
    pub fn gb_s(&self) -> f64 {
        let code = match self.generation() {
            Some(1 | 2) => 0.8,
            Some(6..) => 242.0 / 256.0,
            _ => 128.0 / 130.0,
        };
        self.gts * f64::from(self.width) * code / 8.0
    }

    /// "PCIe Gen5 x16 (32.0 GT/s), 63.0 GB/s per direction".
    pub fn describe(&self) -> String {
        let gen = self
            .generation()
            .map_or_else(|| "PCIe".to_string(), |g| format!("PCIe Gen{g}"));
        let mut out = format!(
            "{gen} x{} ({:.1} GT/s), {:.1} GB/s per direction",
            self.width,
            self.gts,
            self.gb_s()
        );
        let (mg, mw) = (
            self.max_gts.unwrap_or(self.gts),
            self.max_width.unwrap_or(self.width),
        );
        if mg > self.gts || mw > self.width {
            out.push_str(&format!(
                " (trained below its maximum {:.1} GT/s x{mw}; an idle GPU may lower its \
                 speed until it is busy)",
                mg
            ));
        }
        out
    }
}

fn generation(gts: f64) -> Option<u32> {
    [
        (2.5, 1),
        (5.0, 2),
        (8.0, 3),
        (16.0, 4),
        (32.0, 5),
        (64.0, 6),
    ]
    .iter()
    .find(|(r, _)| (gts - r).abs() < 0.01)
    .map(|&(_, g)| g)
}

/// `0000:01:00.0` from the driver's `cuDeviceGetPCIBusId` ("00000000:01:00.0" or
/// "0000:01:00.0", upper or lower case), or `None` when it is not such an address.
pub fn normalize_address(bus_id: &str) -> Option<String> {
    let (domain, rest) = bus_id.trim().split_once(':')?;
    let (bus, rest) = rest.split_once(':')?;
    let (dev, func) = rest.split_once('.')?;
    let hex = |s: &str| u32::from_str_radix(s, 16).ok();
    Some(format!(
        "{:04x}:{:02x}:{:02x}.{:x}",
        hex(domain)?,
        hex(bus)?,
        hex(dev)?,
        hex(func)?
    ))
}

/// "32.0 GT/s PCIe" → 32.0; "Unknown" (a function without a link) → None.
fn parse_speed(text: &str) -> Option<f64> {
    text.split_whitespace().next()?.parse().ok()
}

/// Every NVIDIA GPU function (class 0x0300xx VGA or 0x0302xx 3D controller) in sysfs,
/// with its link, sorted by address. A function without a readable link is left out.
pub fn nvidia_links(sys: &SysRoot) -> Vec<Link> {
    let Ok(dir) = std::fs::read_dir(sys.path(DEVICES)) else {
        return Vec::new();
    };
    let mut out: Vec<Link> = dir
        .flatten()
        .filter_map(|e| {
            let address = e.file_name().to_string_lossy().into_owned();
            let attr = |a: &str| sys.read_trimmed(&format!("{DEVICES}/{address}/{a}")).ok();
            if attr("vendor")?.to_ascii_lowercase() != NVIDIA {
                return None;
            }
            let class = attr("class")?.to_ascii_lowercase();
            if !(class.starts_with("0x0300") || class.starts_with("0x0302")) {
                return None;
            }
            Some(Link {
                gts: parse_speed(&attr("current_link_speed")?)?,
                width: attr("current_link_width")?.parse().ok()?,
                max_gts: attr("max_link_speed").as_deref().and_then(parse_speed),
                max_width: attr("max_link_width").and_then(|w| w.parse().ok()),
                address,
            })
        })
        .collect();
    out.sort_by(|a, b| a.address.cmp(&b.address));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generations_give_the_textbook_bandwidths() {
        let link = |gts, width| Link {
            address: String::new(),
            gts,
            width,
            max_gts: None,
            max_width: None,
        };
        assert_eq!(link(32.0, 16).generation(), Some(5));
        assert!((link(32.0, 16).gb_s() - 63.015).abs() < 0.01);
        assert!((link(16.0, 16).gb_s() - 31.5).abs() < 0.01);
        assert!((link(8.0, 16).gb_s() - 15.75).abs() < 0.01);
        assert!((link(5.0, 8).gb_s() - 4.0).abs() < 1e-9);
        assert!(link(32.0, 16)
            .describe()
            .starts_with("PCIe Gen5 x16 (32.0 GT/s), 63.0 GB/s per direction"));
    }

    #[test]
    fn bus_ids_are_normalized_to_sysfs_names() {
        assert_eq!(
            normalize_address("00000000:1A:00.0").as_deref(),
            Some("0000:1a:00.0")
        );
        assert_eq!(
            normalize_address("0000:01:00.0").as_deref(),
            Some("0000:01:00.0")
        );
        assert_eq!(normalize_address("stand-in"), None);
    }
}
