//! `irqaffinity=` on a copy of a real 2-vCPU KVM guest's /proc/irq, without root.

use crate::common;

use std::fs;

use common::{applied, orphan_entries, refused, snapshot};
use perflab_knobs::{parse_setting, restore_pending, Journal};
use perflab_sys::SysRoot;

type Tree = common::Parts;

fn tree() -> Tree {
    common::kvm_parts(common::IRQS)
}

fn affinity(sys: &SysRoot, irq: u32) -> String {
    sys.read_trimmed(&format!("proc/irq/{irq}/smp_affinity_list"))
        .unwrap()
}

#[test]
fn a_device_name_steers_all_its_queues_and_restore_puts_them_back() {
    let t = tree();
    let before = snapshot(&t.sys);
    assert_eq!(
        parse_setting("irqaffinity=virtio2:1")
            .unwrap()
            .check(&t.sys),
        Ok(())
    );
    let guard = applied(&t.sys, "irqaffinity=virtio2:1", &t.journal);
    // virtio2-config, virtio2-input.0, virtio2-output.0; not virtio1 or virtio3.
    for irq in [37, 38, 39] {
        assert_eq!(affinity(&t.sys, irq), "1", "irq {irq}");
    }
    for irq in [36, 40, 41] {
        assert_eq!(affinity(&t.sys, irq), "0-1", "irq {irq}");
    }
    let entries = t.journal.entries().unwrap();
    assert_eq!(entries.len(), 3);
    assert!(entries.iter().all(|e| e.knob == "irqaffinity=virtio2:1"));
    guard.restore().unwrap();
    assert_eq!(snapshot(&t.sys), before);
    assert!(t.journal.entries().unwrap().is_empty());
}

#[test]
fn devices_steers_every_device_interrupt_and_restore_puts_them_back() {
    let t = tree();
    let before = snapshot(&t.sys);
    let guard = applied(&t.sys, "irqaffinity=devices:1", &t.journal);
    let numbered: Vec<u32> = fs::read_dir(t.sys.path("proc/irq"))
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .filter(|n| t.sys.exists(&format!("proc/irq/{n}/smp_affinity_list")))
        .collect();
    assert!(numbered.len() > 3, "{numbered:?}");
    for irq in &numbered {
        assert_eq!(affinity(&t.sys, *irq), "1", "irq {irq}");
    }
    // One journal entry per interrupt: each is restored alone if its neighbour is refused.
    assert!(t.journal.entries().unwrap().len() >= numbered.len().min(3));
    guard.restore().unwrap();
    assert_eq!(snapshot(&t.sys), before);
    assert!(t.journal.entries().unwrap().is_empty());
}

#[test]
fn a_queue_name_or_irq_numbers_pick_exactly_those() {
    let t = tree();
    let guard = applied(&t.sys, "irqaffinity=virtio2-input.0:0", &t.journal);
    assert_eq!(affinity(&t.sys, 38), "0");
    assert_eq!(affinity(&t.sys, 39), "0-1");
    drop(guard);
    assert_eq!(affinity(&t.sys, 38), "0-1", "drop restores");

    let guard = applied(&t.sys, "irqaffinity=36,41:1", &t.journal);
    assert_eq!(affinity(&t.sys, 36), "1");
    assert_eq!(affinity(&t.sys, 41), "1");
    assert_eq!(affinity(&t.sys, 38), "0-1");
    guard.restore().unwrap();
    assert_eq!(affinity(&t.sys, 41), "0-1");
}

#[test]
fn an_interface_falls_back_to_its_devices_msi_interrupts() {
    let t = tree();
    // virtio-net: the interface's device is virtio2, whose PCI parent owns the MSI-X
    // vectors.
    let pci = t.sys.path("sys/devices/pci0000:00/0000:00:03.0");
    for irq in [38, 39] {
        fs::create_dir_all(pci.join(format!("msi_irqs/{irq}"))).unwrap();
    }
    fs::create_dir_all(pci.join("virtio2/net/eth0")).unwrap();
    fs::create_dir_all(t.sys.path("sys/class/net")).unwrap();
    std::os::unix::fs::symlink(
        pci.join("virtio2/net/eth0"),
        t.sys.path("sys/class/net/eth0"),
    )
    .unwrap();
    std::os::unix::fs::symlink(pci.join("virtio2"), pci.join("virtio2/net/eth0/device")).unwrap();
    let guard = applied(&t.sys, "irqaffinity=eth0:1", &t.journal);
    assert_eq!(affinity(&t.sys, 38), "1");
    assert_eq!(affinity(&t.sys, 39), "1");
    assert_eq!(affinity(&t.sys, 37), "0-1");
    guard.restore().unwrap();
}

#[test]
fn unknown_devices_offline_cpus_and_missing_irqs_are_unavailable_with_the_reason() {
    let t = tree();
    let why = refused(&t.sys, "irqaffinity=eth7:1");
    assert!(why.contains("no interrupt in"), "{why}");
    assert!(
        why.contains("virtio2-input.0"),
        "lists the names there: {why}"
    );
    let why = refused(&t.sys, "irqaffinity=virtio2:5");
    assert!(why.contains("CPUs 5 are not online (online: 0-1)"), "{why}");
    let why = refused(&t.sys, "irqaffinity=999:0");
    assert!(
        why.contains("proc/irq/999/smp_affinity_list does not exist"),
        "{why}"
    );
}

#[test]
fn after_a_kill_restore_pending_writes_the_originals_back() {
    let t = tree();
    let before = snapshot(&t.sys);
    let guard = applied(&t.sys, "irqaffinity=virtio3:0", &t.journal);
    assert_eq!(affinity(&t.sys, 42), "0");
    // As if SIGKILLed: the guard never runs.
    std::mem::forget(guard);
    orphan_entries(&t.journal_path);
    let report = restore_pending(&t.journal_path).unwrap();
    assert!(report.is_clean(), "{:?}", report.lines());
    assert_eq!(report.restored.len(), 4, "{:?}", report.lines());
    assert_eq!(snapshot(&t.sys), before);
}

/// On the live machine: the first interrupt the kernel lets move is moved to one CPU and
/// back. An interrupt that refuses (a managed or per-CPU one) must be left as it was.
#[test]
fn irqaffinity_on_the_host_needs_root() {
    if !perflab_testkit::have_root("writing /proc/irq") {
        return;
    }
    let host = SysRoot::host();
    let table = match perflab_sys::interrupts::read(&host) {
        Ok(table) => table,
        Err(e) => {
            perflab_testkit::skip(
                "proc-interrupts",
                format!("no readable /proc/interrupts: {e}"),
            );
            return;
        }
    };
    let dir = tempfile::tempdir().unwrap();
    let journal = Journal::open(dir.path().join("journal.json")).unwrap();
    for row in &table.rows {
        let Ok(irq) = row.name.parse::<u32>() else {
            continue;
        };
        let rel = format!("proc/irq/{irq}/smp_affinity_list");
        let Ok(before) = host.read_bytes(&rel) else {
            continue;
        };
        let Ok(cpus) = perflab_sys::parse_cpu_list(&String::from_utf8_lossy(&before)) else {
            continue;
        };
        if cpus.len() < 2 {
            continue;
        }
        let setting = format!("irqaffinity={irq}:{}", cpus[1]);
        let knob = parse_setting(&setting).unwrap();
        if knob.check(&host).is_err() {
            continue;
        }
        match knob.apply(&host, &journal) {
            Ok(guard) => {
                assert_eq!(host.read_trimmed(&rel).unwrap(), cpus[1].to_string());
                guard.restore().unwrap();
                assert_eq!(host.read_bytes(&rel).unwrap(), before, "{setting}");
                assert!(journal.entries().unwrap().is_empty());
                return;
            }
            Err(e) => {
                assert_eq!(host.read_bytes(&rel).unwrap(), before, "{setting}: {e}");
                assert!(journal.entries().unwrap().is_empty());
            }
        }
    }
    perflab_testkit::skip("movable-irq", "no interrupt here may be moved");
}
