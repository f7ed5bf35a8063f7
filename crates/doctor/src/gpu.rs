//! The `gpu` line: an NVIDIA GPU on the PCI bus (sysfs, through the SysRoot), the CUDA
//! driver that perflab loads at run time and what it says of each device, and the PCIe
//! link each is on with the bandwidth that link gives per direction.

use perflab_cuda::pcie::{nvidia_links, Link};
use perflab_cuda::{devices, DeviceInfo, Driver, LIBCUDA_VAR};
use perflab_sys::doctor::Check;
use perflab_sys::SysRoot;

/// The need the line answers.
pub const NEED: perflab_core::Need = perflab_core::Need::Gpu;

/// What the driver said: its library and version and the devices, or why it is not there.
pub type DriverView = Result<(String, String, Vec<DeviceInfo>), String>;

/// The line for `sys`: the driver is only asked on the machine itself, never for a
/// fixture tree of another one.
pub fn check(sys: &SysRoot) -> Check {
    let links = nvidia_links(sys);
    let driver = sys.is_host().then(|| {
        let d = Driver::load().map_err(|e| e.to_string())?;
        let devs = devices(d).map_err(|e| e.to_string())?;
        Ok((d.library.clone(), d.version_text(), devs))
    });
    line(&links, driver)
}

/// The line from the links found and what the driver said (`None`: not asked).
pub fn line(links: &[Link], driver: Option<DriverView>) -> Check {
    let link_text = |l: &Link| format!("{} at {}", l.describe(), l.address);
    let hint = format!(
        "install the NVIDIA driver (libcuda.so.1 on the loader's path), or name the library \
         in {LIBCUDA_VAR}"
    );
    match driver {
        Some(Ok((library, version, devs))) if !devs.is_empty() => {
            let each: Vec<String> = devs
                .iter()
                .map(|d| {
                    let link = d
                        .pci_address
                        .as_ref()
                        .and_then(|a| links.iter().find(|l| &l.address == a));
                    format!(
                        "GPU {} {} ({}): {}",
                        d.ordinal,
                        d.name,
                        perflab_core::format_bytes(d.total_bytes),
                        match (link, &d.pci_address) {
                            (Some(l), _) => link_text(l),
                            (None, Some(a)) => format!("{a}, no link speed in sysfs"),
                            (None, None) => "no PCI address (not a PCIe device)".into(),
                        }
                    )
                })
                .collect();
            Check::ok(
                NEED,
                format!("CUDA driver {version} ({library}); {}", each.join("; ")),
            )
        }
        Some(Ok((library, version, _))) => Check::missing(
            NEED,
            format!("CUDA driver {version} ({library}) sees no GPU"),
            "gpuxfer needs a CUDA-capable GPU",
        ),
        Some(Err(why)) if links.is_empty() => {
            Check::missing(NEED, format!("no NVIDIA GPU on the PCI bus; {why}"), hint)
        }
        Some(Err(why)) => {
            let found: Vec<String> = links.iter().map(link_text).collect();
            Check::missing(
                NEED,
                format!("NVIDIA GPU {} but {why}", found.join(", ")),
                hint,
            )
        }
        None if links.is_empty() => Check::missing(
            NEED,
            "no NVIDIA GPU on the PCI bus (driver not checked: fixture tree)",
            hint,
        ),
        None => {
            let found: Vec<String> = links.iter().map(link_text).collect();
            Check::ok(
                NEED,
                format!(
                    "NVIDIA GPU {} (driver not checked: fixture tree)",
                    found.join(", ")
                ),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use perflab_sys::doctor::Status;

    fn h100() -> Vec<Link> {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/gpu-h100");
        nvidia_links(&SysRoot::at(dir))
    }

    #[test]
    fn the_fixture_gpu_is_found_with_its_link_and_other_functions_are_not() {
        let links = h100();
        // 0000:00:02.0 is an Intel VGA function, 0000:01:00.1 the GPU's audio function.
        assert_eq!(links.len(), 1, "{links:?}");
        assert_eq!(links[0].address, "0000:01:00.0");
        assert_eq!((links[0].generation(), links[0].width), (Some(5), 16));
        let c = line(&links, None);
        assert_eq!(c.status, Status::Ok);
        assert_eq!(
            c.detail,
            "NVIDIA GPU PCIe Gen5 x16 (32.0 GT/s), 63.0 GB/s per direction at 0000:01:00.0 \
             (driver not checked: fixture tree)"
        );
    }

    #[test]
    fn the_driver_names_the_gpu_and_its_link_is_matched_by_address() {
        let dev = DeviceInfo {
            ordinal: 0,
            name: "NVIDIA H100 80GB HBM3".into(),
            pci_address: Some("0000:01:00.0".into()),
            total_bytes: 80 << 30,
        };
        let c = line(
            &h100(),
            Some(Ok(("libcuda.so.1".into(), "12.4".into(), vec![dev]))),
        );
        assert_eq!(c.status, Status::Ok);
        assert_eq!(
            c.detail,
            "CUDA driver 12.4 (libcuda.so.1); GPU 0 NVIDIA H100 80GB HBM3 (80G): PCIe Gen5 x16 \
             (32.0 GT/s), 63.0 GB/s per direction at 0000:01:00.0"
        );
    }

    /// A device's memory is rarely a whole number of GiB (an H100 says 85029158912 bytes,
    /// the CUDA stand-in what CUDA_STANDIN_MEMORY says): written as gpuxfer writes it.
    #[test]
    fn a_devices_memory_reads_in_the_units_of_sizes() {
        let dev = |total_bytes| DeviceInfo {
            ordinal: 0,
            name: "GPU".into(),
            pci_address: None,
            total_bytes,
        };
        for (bytes, shown) in [(85_029_158_912, "(79.2G)"), (100_000_000, "(95.4M)")] {
            let c = line(&[], Some(Ok(("l".into(), "1".into(), vec![dev(bytes)]))));
            assert!(
                c.detail.contains(&format!("GPU 0 GPU {shown}")),
                "{}",
                c.detail
            );
        }
    }

    #[test]
    fn a_gpu_without_its_driver_and_no_gpu_at_all_are_missing_with_the_fix() {
        let c = line(
            &h100(),
            Some(Err("no CUDA driver: cannot load libcuda.so.1: nope".into())),
        );
        assert_eq!(c.status, Status::Missing);
        assert!(
            c.detail.starts_with("NVIDIA GPU PCIe Gen5 x16"),
            "{}",
            c.detail
        );
        assert!(c
            .detail
            .ends_with("but no CUDA driver: cannot load libcuda.so.1: nope"));
        assert!(c.hint.unwrap().contains("PERFLAB_LIBCUDA"));
        let c = line(&[], Some(Err("no CUDA driver: x".into())));
        assert_eq!(c.detail, "no NVIDIA GPU on the PCI bus; no CUDA driver: x");
    }
}
