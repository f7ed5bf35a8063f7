//! doctor's isolation and dmatest lines, and the isolation parsers, on the constructed
//! isolation and dmatest fixture trees (tests/fixtures/make_*_fixtures.py).

use std::path::Path;

use perflab_sys::doctor::{self, Check, Status};
use perflab_sys::isolation::{kernel_support, rcu_offload, tasks, Isolation};
use perflab_sys::SysRoot;

fn tree(name: &str) -> SysRoot {
    SysRoot::at(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures")
            .join(name),
    )
}

fn check(name: &str, which: &str) -> Check {
    doctor::probe(&tree(name))
        .into_iter()
        .find(|c| c.name == which)
        .unwrap()
}

#[test]
fn the_seed_board_is_partial_for_lack_of_no_hz_full() {
    let c = check("isolation-seed", "isolation");
    assert_eq!(c.status, Status::Partial, "{}", c.detail);
    assert!(
        c.detail.contains("the kernel lacks CONFIG_NO_HZ_FULL"),
        "{}",
        c.detail
    );
    assert!(
        !c.detail.contains("lacks CONFIG_RCU_NOCB_CPU"),
        "{}",
        c.detail
    );
    assert!(
        c.detail
            .contains("kernel config from /boot/config-4.9.82-rt61"),
        "{}",
        c.detail
    );
    assert_eq!(
        c.hint.as_deref(),
        Some("use a kernel built with CONFIG_NO_HZ_FULL=y")
    );
    let full = check("isolation-full", "isolation");
    assert_eq!(full.status, Status::Ok, "{}", full.detail);
}

#[test]
fn rcu_nocbs_without_the_kernel_option_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path();
    for d in ["proc/sys/kernel", "boot", "sys/devices/system/cpu"] {
        std::fs::create_dir_all(r.join(d)).unwrap();
    }
    std::fs::write(
        r.join("proc/cmdline"),
        "isolcpus=1 nohz_full=1 rcu_nocbs=1\n",
    )
    .unwrap();
    std::fs::write(r.join("proc/sys/kernel/osrelease"), "6.1.0\n").unwrap();
    std::fs::write(
        r.join("boot/config-6.1.0"),
        "CONFIG_NO_HZ_FULL=y\n# CONFIG_RCU_NOCB_CPU is not set\n",
    )
    .unwrap();
    let c = doctor::probe(&SysRoot::at(r))
        .into_iter()
        .find(|c| c.name == "isolation")
        .unwrap();
    assert_eq!(c.status, Status::Partial);
    assert!(
        c.detail.contains("lacks CONFIG_RCU_NOCB_CPU"),
        "{}",
        c.detail
    );
    assert!(c.detail.contains("RCU callbacks still run"), "{}", c.detail);
    assert_eq!(
        c.hint.as_deref(),
        Some("use a kernel built with CONFIG_RCU_NOCB_CPU=y")
    );
}

#[test]
fn support_and_offload_threads_are_read_from_the_tree() {
    let sys = tree("isolation-seed");
    let iso = Isolation::read(&sys).unwrap();
    assert_eq!(iso.isolated_cpus(), vec![7]);
    let s = kernel_support(&sys, &iso);
    assert_eq!((s.nohz_full, s.rcu_nocb), (Some(false), Some(true)));
    let ts = tasks(&sys);
    assert_eq!(ts.len(), 7);
    let rcu: Vec<(String, u32, Option<u32>)> = ts
        .iter()
        .filter(|t| rcu_offload(&t.comm).is_some())
        .map(|t| (t.comm.clone(), t.cpu, rcu_offload(&t.comm)))
        .collect();
    assert_eq!(rcu.len(), 2);
    assert!(rcu
        .iter()
        .all(|(_, ran_on, serves)| *ran_on == 0 && *serves == Some(7)));
    let io = ts.iter().find(|t| t.comm == "lmbench-io").unwrap();
    assert_eq!((io.tgid, io.tid, io.cpu), (4203, 4204, 7));
    assert_eq!(io.runtime_ns, 400_000_000);
}

#[test]
fn dmatest_line_says_whether_it_can_run() {
    let ok = check("dmatest-4chan", "dmatest");
    assert_eq!(ok.status, Status::Ok);
    assert!(ok
        .detail
        .starts_with("4 DMA channel(s): dma0chan0 dma0chan1 dma1chan0 dma1chan1"));
    let absent = check("dmatest-absent", "dmatest");
    assert_eq!(absent.status, Status::Partial);
    assert!(absent.hint.unwrap().contains("modprobe dmatest"));
    let kvm = check("kvm-2vcpu", "dmatest");
    assert_eq!(kvm.status, Status::Missing);
    assert!(
        kvm.detail.contains("no DMA engine channels"),
        "{}",
        kvm.detail
    );
}
