//! Every parser and reader of perflab-sys run against the three fixture trees in
//! tests/fixtures, asserting facts each tree was built (or captured) with.

use perflab_sys::doctor::{self, Status};
use perflab_sys::isolation::{kernel_has_nohz_full, Isolation};
use perflab_sys::{cmdline, cpufreq, cpuidle, hugepages, interrupts, procstat, softirqs};
use perflab_sys::{SysRoot, Topology};

fn tree(name: &str) -> SysRoot {
    SysRoot::at(format!(
        "{}/../../tests/fixtures/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
}

const TREES: [&str; 3] = ["kvm-2vcpu", "x86-intel-idle", "power-smt4"];

#[test]
fn every_parser_reads_every_tree() {
    for name in TREES {
        let sys = tree(name);
        let topo = Topology::read(&sys).unwrap_or_else(|e| panic!("{name}: {e}"));
        let irq = interrupts::read(&sys).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            irq.cpus, topo.online,
            "{name}: interrupt columns are the online CPUs"
        );
        assert!(irq.rows.iter().any(|r| r.name == "LOC"), "{name}");
        let soft = softirqs::read(&sys).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(soft.rows.len(), 10, "{name}");
        let stat = procstat::read(&sys).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(stat.cpus.len(), topo.online.len(), "{name}");
        assert!(stat.ctxt.is_some(), "{name}");
        let sum_user: u64 = stat.cpus.iter().map(|(_, t)| t.user).sum();
        // The aggregate line is the sum of the per-CPU lines (the kernel sums the same
        // counters, but a live capture may be off by the ticks of the read itself).
        assert!(sum_user.abs_diff(stat.total.user) <= 2, "{name}");
        cmdline::read(&sys).unwrap_or_else(|e| panic!("{name}: {e}"));
        Isolation::read(&sys).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(hugepages::pools(&sys).unwrap().len(), 2, "{name}");
        assert!(hugepages::thp(&sys).enabled.is_some(), "{name}");
        for &cpu in &topo.online {
            cpuidle::states(&sys, cpu).unwrap_or_else(|e| panic!("{name} cpu{cpu}: {e}"));
        }
    }
}

#[test]
fn kvm_2vcpu_is_the_machine_it_was_captured_from() {
    let sys = tree("kvm-2vcpu");
    let topo = Topology::read(&sys).unwrap();
    assert_eq!(topo.online, vec![0, 1]);
    assert_eq!(topo.cores().len(), 2);
    assert_eq!(topo.threads_per_core(), 1);
    assert_eq!(topo.partners_one_per_core(0), vec![0, 1]);
    assert_eq!(cpuidle::driver(&sys), None, "current_driver reads `none`");
    assert!(cpuidle::states(&sys, 0).unwrap().is_empty());
    assert_eq!(cpufreq::governor(&sys, 0), None);
    let irq = interrupts::read(&sys).unwrap();
    let err = irq.rows_named("ERR").next().unwrap();
    assert!(!err.per_cpu);
    assert_eq!(
        irq.rows_named("LOC").next().unwrap().desc,
        "Local timer interrupts"
    );
    let ged = irq.rows_named("24").next().unwrap();
    assert_eq!(ged.desc, "IO-APIC 5-edge ACPI:Ged");
    let c = cmdline::read(&sys).unwrap();
    assert!(c.has("quiet"));
    assert_eq!(c.init_args, vec!["--init-placeholder"]);
    let iso = Isolation::read(&sys).unwrap();
    assert_eq!(iso.isolcpus, None);
    assert_eq!(iso.sysfs_isolated, Some(vec![]));
    assert!(!kernel_has_nohz_full(&sys));
    assert_eq!(hugepages::thp(&sys).enabled.as_deref(), Some("madvise"));
}

#[test]
fn x86_intel_idle_facts() {
    let sys = tree("x86-intel-idle");
    let topo = Topology::read(&sys).unwrap();
    assert_eq!(topo.online.len(), 16);
    assert_eq!(topo.cores().len(), 8);
    assert_eq!(topo.threads_per_core(), 2);
    assert_eq!(topo.place(3).unwrap().siblings, vec![3, 11]);
    let partners = topo.partners_one_per_core(1);
    assert_eq!(partners.len(), 8);
    assert!(
        partners.contains(&9),
        "the anchor's own core offers its sibling 9"
    );
    assert_eq!(cpuidle::driver(&sys).as_deref(), Some("intel_idle"));
    assert_eq!(cpuidle::governor(&sys).as_deref(), Some("menu"));
    let states = cpuidle::states(&sys, 5).unwrap();
    let names: Vec<&str> = states.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["POLL", "C1", "C1E", "C6"]);
    assert!(states[0].is_polling());
    assert!(states[1..].iter().all(|s| !s.is_polling()));
    assert_eq!(states[3].latency_us, 133);
    assert_eq!(cpufreq::governor(&sys, 15).as_deref(), Some("performance"));
    let irq = interrupts::read(&sys).unwrap();
    for name in [
        "NMI", "LOC", "SPU", "PMI", "IWI", "RTR", "RES", "CAL", "TLB", "TRM", "THR", "DFR", "MCE",
        "MCP", "ERR", "MIS", "PIN", "NPI", "PIW",
    ] {
        assert_eq!(irq.rows_named(name).count(), 1, "{name}");
    }
    let loc = irq.rows_named("LOC").next().unwrap();
    assert!(
        irq.count(loc, 0).unwrap() > 100 * irq.count(loc, 1).unwrap(),
        "nohz_full CPU 1 ticks rarely"
    );
    let iso = Isolation::read(&sys).unwrap();
    let isolated = vec![1, 2, 3, 5, 6, 7, 9, 10, 11, 13, 14, 15];
    let isolcpus = iso.isolcpus.clone().unwrap();
    assert_eq!(isolcpus.flags, vec!["managed_irq", "domain"]);
    assert_eq!(isolcpus.cpus, isolated);
    assert_eq!(iso.nohz_full.as_ref(), Some(&isolated));
    assert_eq!(iso.rcu_nocbs.as_ref(), Some(&isolated));
    assert_eq!(iso.sysfs_nohz_full.as_ref(), Some(&isolated));
    assert_eq!(iso.isolated_cpus(), isolated);
    assert!(kernel_has_nohz_full(&sys));
    let pools = hugepages::pools(&sys).unwrap();
    assert_eq!((pools[0].size_kb, pools[0].nr), (2048, 64));
}

#[test]
fn power_smt4_facts() {
    let sys = tree("power-smt4");
    let topo = Topology::read(&sys).unwrap();
    assert_eq!(topo.online.len(), 32);
    assert_eq!(topo.cores().len(), 8);
    assert_eq!(topo.threads_per_core(), 4);
    assert_eq!(topo.place(24).unwrap().core, 2068);
    assert_eq!(topo.place(24).unwrap().package, 8);
    let partners = topo.partners_one_per_core(4);
    assert_eq!(partners.len(), 8);
    assert!(partners.contains(&24));
    assert!(
        partners.iter().any(|&p| p != 4 && (4..8).contains(&p)),
        "{partners:?}"
    );
    assert!(!partners.contains(&4));
    let states = cpuidle::states(&sys, 24).unwrap();
    let names: Vec<&str> = states.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "snooze",
            "stop0_lite",
            "stop0",
            "stop1",
            "stop2",
            "stop4",
            "stop5"
        ]
    );
    assert!(states[0].is_polling());
    assert_eq!(states.iter().filter(|s| s.is_polling()).count(), 1);
    assert_eq!(cpuidle::driver(&sys).as_deref(), Some("powernv_idle"));
    let irq = interrupts::read(&sys).unwrap();
    let locs: Vec<_> = irq.rows_named("LOC").collect();
    assert_eq!(locs.len(), 2);
    assert_eq!(
        locs[0].desc,
        "Local timer interrupts for timer event device"
    );
    assert_eq!(locs[1].desc, "Local timer interrupts for others");
    for name in ["BCT", "PMI", "MCE", "NMI", "WDG", "DBL", "SPU", "HMI"] {
        assert_eq!(irq.rows_named(name).count(), 1, "{name}");
    }
    assert_eq!(
        irq.rows_named("WDG").next().unwrap().desc,
        "Watchdog soft-NMI interrupts"
    );
    assert_eq!(
        irq.rows_named("16").next().unwrap().desc,
        "XIVE-IPI 0 Edge IPI"
    );
    assert!(irq.rows.iter().all(|r| r.per_cpu));
    let iso = Isolation::read(&sys).unwrap();
    assert_eq!(
        iso.sysfs_nohz_full,
        Some(vec![]),
        "`(null)` is an empty mask"
    );
    assert!(iso.warnings.is_empty(), "{:?}", iso.warnings);
    assert_eq!(hugepages::thp(&sys).enabled.as_deref(), Some("always"));
}

fn check<'a>(checks: &'a [doctor::Check], name: &str) -> &'a doctor::Check {
    checks
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no check {name}"))
}

#[test]
fn doctor_on_every_tree() {
    for name in TREES {
        let checks = doctor::probe(&tree(name));
        let names: Vec<&str> = checks.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, doctor::CHECK_NAMES, "{name}");
        for c in &checks {
            if c.status != Status::Ok {
                assert!(c.hint.is_some(), "{name}: {} has no hint", c.name);
            }
        }
        let privs = check(&checks, "privileges");
        assert_eq!(privs.status, Status::Partial);
        assert!(privs.detail.contains("not checked: fixture tree"));
        assert!(check(&checks, "perf software events")
            .detail
            .contains("perf_event_paranoid=2"));
        assert_eq!(check(&checks, "pm qos").status, Status::Ok, "{name}");
    }

    let kvm = doctor::probe(&tree("kvm-2vcpu"));
    let idle = check(&kvm, "cpuidle");
    assert_eq!(idle.status, Status::Missing);
    assert!(idle.detail.contains("no cpuidle driver"), "{}", idle.detail);
    assert_eq!(check(&kvm, "cpufreq").status, Status::Missing);
    assert_eq!(check(&kvm, "isolation").status, Status::Missing);
    assert!(check(&kvm, "isolation").detail.contains("NO_HZ_FULL"));
    assert_eq!(check(&kvm, "schedstat").status, Status::Missing);
    assert_eq!(check(&kvm, "tracefs").status, Status::Missing);
    assert_eq!(check(&kvm, "huge pages").status, Status::Ok);
    assert!(check(&kvm, "cpu topology").detail.contains("2 online CPUs"));

    let intel = doctor::probe(&tree("x86-intel-idle"));
    let idle = check(&intel, "cpuidle");
    assert_eq!(idle.status, Status::Ok, "{}", idle.detail);
    assert!(idle.detail.contains("4 states"), "{}", idle.detail);
    assert!(idle.detail.contains("POLL (polling)"), "{}", idle.detail);
    assert_eq!(check(&intel, "isolation").status, Status::Ok);
    assert!(check(&intel, "cpufreq")
        .detail
        .contains("performance on CPUs 0-15"));
    assert_eq!(check(&intel, "tracefs").status, Status::Ok);
    assert_eq!(
        check(&intel, "schedstat").status,
        Status::Partial,
        "sched_schedstats=0"
    );
    assert!(check(&intel, "cpu topology")
        .detail
        .contains("8 cores, 2 threads per core"));

    let power = doctor::probe(&tree("power-smt4"));
    assert!(check(&power, "cpuidle").detail.contains("snooze (polling)"));
    assert!(check(&power, "tracefs").detail.contains("debug/tracing"));
    assert!(check(&power, "cpu topology")
        .detail
        .contains("4 threads per core"));
}

#[test]
fn doctor_says_before_any_run_that_haltpoll_ignores_disable() {
    // The kvm-haltpoll tree's `disable` files are writable (it was captured as root), yet
    // the haltpoll driver goes on entering a disabled state: writable is not "ok".
    let checks = doctor::probe(&tree("kvm-haltpoll"));
    let idle = check(&checks, "cpuidle");
    assert_eq!(idle.status, Status::Partial, "{}", idle.detail);
    assert!(
        idle.detail
            .contains("the haltpoll driver ignores `disable` (a disabled state is still entered)")
            && idle.detail.contains("cpuidle=poll-only"),
        "{}",
        idle.detail
    );
    assert!(idle.hint.as_deref().unwrap().contains("intel_idle"));

    // Drivers seen honouring it say so; one not known says how it is checked instead.
    let intel = doctor::probe(&tree("x86-intel-idle"));
    assert!(check(&intel, "cpuidle")
        .detail
        .contains("intel_idle honours it"));
    assert_eq!(
        cpuidle::disable_effect("intel_idle"),
        cpuidle::DisableEffect::Honoured
    );
    assert_eq!(
        cpuidle::disable_effect("some_new_idle"),
        cpuidle::DisableEffect::Unknown
    );
}

#[test]
fn isolation_partial_names_what_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("proc")).unwrap();
    std::fs::create_dir_all(root.join("sys/devices/system/cpu")).unwrap();
    std::fs::write(root.join("proc/cmdline"), "ro isolcpus=2-3 nohz_full=2-3\n").unwrap();
    std::fs::write(root.join("sys/devices/system/cpu/nohz_full"), "2-3\n").unwrap();
    let checks = doctor::probe(&SysRoot::at(root));
    let iso = check(&checks, "isolation");
    assert_eq!(iso.status, Status::Partial);
    assert!(iso.detail.contains("rcu_nocbs missing"), "{}", iso.detail);
    assert_eq!(
        iso.hint.as_deref(),
        Some("add rcu_nocbs=2-3 to the kernel command line")
    );
}

#[test]
fn doctor_on_the_live_host_never_panics() {
    let checks = doctor::probe(&SysRoot::host());
    assert_eq!(checks.len(), doctor::CHECK_NAMES.len());
    let json = serde_json::to_string(&checks).unwrap();
    assert!(json.contains("\"status\":"), "{json}");
    // perf software events work on every machine perflab targets, VMs included, unless
    // perf_event_paranoid forbids them; either way the check must say which.
    let sw = check(&checks, "perf software events");
    assert!(
        sw.detail.contains("task-clock") || sw.detail.contains("perf_event_paranoid"),
        "{}",
        sw.detail
    );
}
