//! `irqaffinity=DEV:CPULIST`: steers the interrupts of a device or queue to chosen CPUs
//! through `/proc/irq/N/smp_affinity_list`, so that measurement traffic and load traffic
//! are handled on separate CPUs (seed 001's proposal). Each original list is journaled
//! before the first write and written back on restore.
//!
//! DEV is either IRQ numbers (`36` or `36,38`), or a name matched against the action
//! names of `/proc/interrupts`: `virtio2-input.0` picks that queue, `virtio2` (or
//! `eth0-TxRx`) every interrupt whose name continues it after a separator. A network
//! interface name (`eth0`) that no interrupt is named after falls back to its PCI
//! device's MSI interrupts (`/sys/class/net/eth0/device/msi_irqs`, or its parent's for
//! virtio). irqbalance, if it runs, may move the interrupts back meanwhile: stop it.

use perflab_core::{Descriptor, Kind, Need, Needs, ParamKind, ParamSpec, ReportHints};
use perflab_core::{Unavailable, WorkloadOutput};
use perflab_sys::{format_cpu_list, interrupts, parse_cpu_list, SysRoot};

use crate::effect::{ReadBack, Verified};
use crate::error::KnobError;
use crate::files::write_files;
use crate::irq_devices::affinity_path;
use crate::journal::Journal;
use crate::knob::{EffectProbe, Knob, KnobGuard};

pub static DESCRIPTOR: Descriptor = Descriptor {
    kind: Kind::Knob,
    name: "irqaffinity",
    help: "steer a device's or queue's interrupts to CPUs: DEV:CPULIST, e.g. eth0:1, virtio2-input.0:0, 36,38:1, devices:1 (every device interrupt the kernel lets move)",
    params: &[ParamSpec {
        name: "value",
        role: perflab_core::ParamRole::Plain,
        help: "DEV:CPULIST",
        kind: ParamKind::Text { max_len: 256 },
        default: None,
    }],
    needs: Needs::all(&[Need::Privileges, Need::IrqAffinity]),
    report: ReportHints::None,
};

const VALID: &str = "DEV:CPULIST, e.g. eth0:2, virtio2-input.0:1, 36,38:0-1, devices:1 (DEV a \
                     device or queue name from /proc/interrupts, IRQ numbers, or `devices` \
                     for every device interrupt)";

/// Which interrupts the knob steers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IrqTarget {
    Numbers(Vec<u32>),
    Name(String),
    /// `devices`: every device interrupt (the numbered rows of /proc/interrupts) that
    /// the kernel lets be steered; managed ones, which it places itself, stay.
    Devices,
}

/// The DEV that names every device interrupt.
pub const DEVICES: &str = "devices";

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IrqAffinityKnob {
    pub target: IrqTarget,
    pub cpus: Vec<u32>,
}

impl IrqAffinityKnob {
    pub fn parse(value: &str) -> Result<Self, KnobError> {
        let invalid = |reason: String| KnobError::InvalidValue {
            knob: "irqaffinity".into(),
            value: value.into(),
            reason,
        };
        // A CPU list never holds a colon; a name may (`ACPI:Ged`).
        let Some((dev, list)) = value.trim().rsplit_once(':') else {
            return Err(invalid(format!("expected {VALID}")));
        };
        let cpus = parse_cpu_list(list).map_err(|e| invalid(format!("{e}; expected {VALID}")))?;
        if cpus.is_empty() {
            return Err(invalid(format!("the CPU list is empty; expected {VALID}")));
        }
        let dev = dev.trim();
        if dev.is_empty() || dev.contains(char::is_whitespace) {
            return Err(invalid(format!("no device; expected {VALID}")));
        }
        let numbers: Option<Vec<u32>> = dev.split(',').map(|n| n.trim().parse().ok()).collect();
        let target = match numbers {
            Some(n) => IrqTarget::Numbers(n),
            None if dev == DEVICES => IrqTarget::Devices,
            None => IrqTarget::Name(dev.to_string()),
        };
        Ok(Self { target, cpus })
    }

    fn dev(&self) -> String {
        match &self.target {
            IrqTarget::Numbers(n) => n.iter().map(u32::to_string).collect::<Vec<_>>().join(","),
            IrqTarget::Name(name) => name.clone(),
            IrqTarget::Devices => DEVICES.to_string(),
        }
    }

    /// The IRQ numbers the target names on this machine, or why there are none.
    pub fn irqs(&self, sys: &SysRoot) -> Result<Vec<u32>, String> {
        let found = match &self.target {
            IrqTarget::Numbers(n) => n.clone(),
            IrqTarget::Name(name) => by_name(sys, name)?,
            IrqTarget::Devices => device_irqs(sys)?,
        };
        if let Some(n) = found.iter().find(|n| !sys.exists(&affinity_path(**n))) {
            return Err(format!(
                "{} does not exist",
                sys.path(&affinity_path(*n)).display()
            ));
        }
        Ok(found)
    }
}

/// True when `token` is `name`, or continues it after a separator (`virtio2` matches
/// `virtio2-input.0` but not `virtio21-input.0`).
fn name_matches(token: &str, name: &str) -> bool {
    let token = token.trim_end_matches(',');
    match token.strip_prefix(name) {
        Some("") => true,
        Some(rest) => rest.starts_with(|c: char| !c.is_ascii_alphanumeric()),
        None => false,
    }
}

fn by_name(sys: &SysRoot, name: &str) -> Result<Vec<u32>, String> {
    let table = interrupts::read(sys).map_err(|e| e.to_string())?;
    let mut irqs: Vec<u32> = table
        .rows
        .iter()
        .filter_map(|row| {
            let irq = row.name.parse::<u32>().ok()?;
            // The first word is the interrupt chip (`PCI-MSIX-0000:00:03.0`), not a name.
            let mut words = row.desc.split_whitespace().skip(1);
            words.any(|w| name_matches(w, name)).then_some(irq)
        })
        .collect();
    if irqs.is_empty() {
        irqs = msi_irqs(sys, name);
    }
    if irqs.is_empty() {
        const SHOWN: usize = 30;
        let mut names: Vec<&str> = Vec::new();
        for row in table.rows.iter().filter(|r| r.name.parse::<u32>().is_ok()) {
            if let Some(last) = row.desc.split_whitespace().last() {
                if !names.contains(&last) {
                    names.push(last);
                }
            }
        }
        let more = names.len() > SHOWN;
        names.truncate(SHOWN);
        return Err(format!(
            "no interrupt in {} is named {name:?} (names there: {}{})",
            sys.path("proc/interrupts").display(),
            names.join(", "),
            if more { ", ..." } else { "" }
        ));
    }
    irqs.sort_unstable();
    irqs.dedup();
    Ok(irqs)
}

/// Every numbered interrupt of /proc/interrupts that has an affinity file.
fn device_irqs(sys: &SysRoot) -> Result<Vec<u32>, String> {
    let table = interrupts::read(sys).map_err(|e| e.to_string())?;
    let irqs: Vec<u32> = table
        .rows
        .iter()
        .filter_map(|r| r.name.parse::<u32>().ok())
        .filter(|n| sys.exists(&affinity_path(*n)))
        .collect();
    if irqs.is_empty() {
        return Err(format!(
            "no device interrupt in {} has an smp_affinity_list",
            sys.path("proc/interrupts").display()
        ));
    }
    Ok(irqs)
}

/// The MSI interrupts of a network interface's device, or of its parent (a virtio
/// device's interrupts belong to the PCI function above it).
fn msi_irqs(sys: &SysRoot, ifname: &str) -> Vec<u32> {
    if ifname.contains('/') || ifname.starts_with('.') {
        return Vec::new();
    }
    ["device/msi_irqs", "device/../msi_irqs"]
        .iter()
        .map(|d| format!("sys/class/net/{ifname}/{d}"))
        .find_map(|d| sys.list_dir(&d).ok().filter(|l| !l.is_empty()))
        .unwrap_or_default()
        .iter()
        .filter_map(|n| n.parse().ok())
        .collect()
}

impl Knob for IrqAffinityKnob {
    fn name(&self) -> String {
        format!("irqaffinity={}:{}", self.dev(), format_cpu_list(&self.cpus))
    }

    fn intent(&self) -> Option<perflab_core::Intent> {
        use perflab_core::IrqSet;
        let irqs = match &self.target {
            IrqTarget::Numbers(n) => IrqSet::Numbers(n.clone()),
            IrqTarget::Name(name) => IrqSet::Name(name.clone()),
            IrqTarget::Devices => IrqSet::Devices,
        };
        Some(perflab_core::Intent::IrqsMoved {
            irqs,
            to: self.cpus.clone(),
        })
    }

    fn check(&self, sys: &SysRoot) -> Result<(), Unavailable> {
        let irqs = self.irqs(sys).map_err(Unavailable::new)?;
        if let Ok(online) = sys.read_string("sys/devices/system/cpu/online") {
            let online = parse_cpu_list(&online).map_err(|e| Unavailable::new(e.to_string()))?;
            let offline: Vec<u32> = self
                .cpus
                .iter()
                .copied()
                .filter(|c| !online.contains(c))
                .collect();
            if !offline.is_empty() {
                return Err(Unavailable::new(format!(
                    "CPUs {} are not online (online: {})",
                    format_cpu_list(&offline),
                    format_cpu_list(&online)
                )));
            }
        }
        if let Some(n) = irqs.iter().find(|n| !sys.writable(&affinity_path(**n))) {
            return Err(Unavailable::new(format!(
                "{} is not writable: needs root",
                sys.path(&affinity_path(*n)).display()
            ))
            .with_hint("run perflab as root"));
        }
        Ok(())
    }

    fn targets(&self, sys: &SysRoot) -> Vec<String> {
        let irqs = self.irqs(sys).unwrap_or_default();
        irqs.into_iter().map(affinity_path).collect()
    }

    fn apply(&self, sys: &SysRoot, journal: &Journal) -> Result<Box<dyn KnobGuard>, KnobError> {
        let irqs = self
            .irqs(sys)
            .map_err(|why| KnobError::unavailable(self.name(), Unavailable::new(why)))?;
        // Written in the kernel's own form, so the read-back compares equal.
        let list = format_cpu_list(&self.cpus).into_bytes();
        if self.target == IrqTarget::Devices {
            let (guard, moved) =
                crate::irq_devices::steer_each(sys, journal, &self.name(), &irqs, &list)?;
            let cpus = self.cpus.clone();
            return Ok(Box::new(Verified::new(Box::new(guard), move |sys| {
                crate::irq_devices::Delivered::take(sys, &moved, &cpus)
                    .map(|p| Box::new(p) as Box<dyn EffectProbe>)
            })));
        }
        let writes: Vec<(String, Vec<u8>)> = irqs
            .iter()
            .map(|n| (affinity_path(*n), list.clone()))
            .collect();
        let guard = Box::new(write_files(sys, journal, &self.name(), &writes)?);
        let cpus = self.cpus.clone();
        Ok(Box::new(Verified::new(guard, move |_| {
            let (irqs, cpus) = (irqs.clone(), cpus.clone());
            Some(Box::new(ReadBack(move |sys: &SysRoot, _: &WorkloadOutput| {
                effective_within(sys, &irqs, &cpus)
            })) as Box<dyn EffectProbe>)
        })))
    }
}

/// Where the kernel exposes it (`effective_affinity_list`, x86 and arm64 with generic IRQ
/// effective affinity), each IRQ's effective CPUs must lie within the asked ones: an IRQ
/// controller or a managed interrupt can keep delivering elsewhere whatever
/// `smp_affinity_list` reads. Without the file only the mask read back can be checked.
fn effective_within(sys: &SysRoot, irqs: &[u32], cpus: &[u32]) -> Result<(), String> {
    let mut why = Vec::new();
    for &irq in irqs {
        let effective = format!("proc/irq/{irq}/effective_affinity_list");
        let rel = if sys.exists(&effective) {
            effective
        } else {
            affinity_path(irq)
        };
        let text = match sys.read_trimmed(&rel) {
            Ok(t) => t,
            Err(e) => {
                why.push(format!("IRQ {irq}: cannot read {rel}: {e}"));
                continue;
            }
        };
        match parse_cpu_list(&text) {
            Ok(now) => {
                let outside: Vec<u32> = now.into_iter().filter(|c| !cpus.contains(c)).collect();
                if !outside.is_empty() {
                    why.push(format!(
                        "IRQ {irq} is delivered to CPU {} ({} reads {text}), outside {}",
                        format_cpu_list(&outside),
                        sys.path(&rel).display(),
                        format_cpu_list(cpus)
                    ));
                }
            }
            Err(e) => why.push(format!("IRQ {irq}: {rel}: {}", e.reason)),
        }
    }
    if why.is_empty() {
        Ok(())
    } else {
        Err(why.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_names_numbers_and_lists() {
        let k = IrqAffinityKnob::parse("virtio2-input.0:1").unwrap();
        assert_eq!(k.target, IrqTarget::Name("virtio2-input.0".into()));
        assert_eq!(k.cpus, vec![1]);
        let k = IrqAffinityKnob::parse("36,38:0,1").unwrap();
        assert_eq!(k.target, IrqTarget::Numbers(vec![36, 38]));
        assert_eq!(k.name(), "irqaffinity=36,38:0-1");
        let k = IrqAffinityKnob::parse("ACPI:Ged:0").unwrap();
        assert_eq!(k.target, IrqTarget::Name("ACPI:Ged".into()));
        for bad in ["eth0", "eth0:", ":1", "eth0:x", "eth0:3-1", "a b:1"] {
            let e = IrqAffinityKnob::parse(bad).unwrap_err().to_string();
            assert!(e.contains("DEV:CPULIST"), "{bad}: {e}");
        }
    }

    #[test]
    fn names_match_whole_words_or_prefixes_before_a_separator() {
        assert!(name_matches("virtio2-input.0", "virtio2"));
        assert!(name_matches("virtio2-input.0", "virtio2-input.0"));
        assert!(name_matches("uhci_hcd:usb1,", "uhci_hcd"));
        assert!(!name_matches("virtio21-input.0", "virtio2"));
        assert!(!name_matches("eth10-rx", "eth1"));
    }

    proptest! {
        #[test]
        fn parse_never_panics(s in "\\PC{0,40}") {
            let _ = IrqAffinityKnob::parse(&s);
        }
    }
}
