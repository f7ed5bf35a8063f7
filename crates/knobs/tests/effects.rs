//! Each knob proves its setting held during a measurement: a probe taken before, checked
//! after, on writable fixture trees whose counters and files the test moves the way a
//! kernel (or another process) would.

use crate::common;

use std::fs;

use common::{applied, kvm_parts, Tree, IRQS, MEMORY};
use perflab_core::{Better, Metric, Unit, WorkloadOutput};
use perflab_knobs::{parse_setting, verify_effects, KnobGuard};
use perflab_sys::SysRoot;

fn none() -> WorkloadOutput {
    WorkloadOutput::default()
}

/// The probe of one applied guard, checked now.
fn check(
    guard: &dyn KnobGuard,
    sys: &SysRoot,
    out: &WorkloadOutput,
    between: impl FnOnce(),
) -> Result<(), String> {
    let probe = guard
        .probe(sys)
        .expect("this knob can tell whether it holds");
    between();
    probe.verify(sys, out)
}

fn bump(sys: &SysRoot, rel: &str, by: u64) {
    let now: u64 = sys.read_parsed(rel).unwrap();
    fs::write(sys.path(rel), format!("{}\n", now + by)).unwrap();
}

#[test]
fn a_disabled_idle_state_that_is_entered_is_named_with_its_count() {
    let t = Tree::new();
    let guard = applied(&t.sys, "cpuidle=poll-only", &t.journal());
    assert_eq!(check(guard.as_ref(), &t.sys, &none(), || {}), Ok(()));
    let why = check(guard.as_ref(), &t.sys, &none(), || {
        bump(
            &t.sys,
            "sys/devices/system/cpu/cpu2/cpuidle/state3/usage",
            5,
        );
        bump(
            &t.sys,
            "sys/devices/system/cpu/cpu1/cpuidle/state3/usage",
            2,
        );
    })
    .unwrap_err();
    assert!(
        why.contains("disabled state C6 (state3) was entered 7 times")
            && why.contains("cpu1 2, cpu2 5")
            && why.contains("the intel_idle driver does not honour `disable`"),
        "{why}"
    );
    // Someone enabling the state again is caught even if it was not entered.
    let why = check(guard.as_ref(), &t.sys, &none(), || {
        fs::write(t.disable(0, 2), "0\n").unwrap();
    })
    .unwrap_err();
    assert!(
        why.contains("re-enabled by someone else: C1E on cpu0"),
        "{why}"
    );
    guard.restore().unwrap();
}

#[test]
fn an_idle_driver_known_to_ignore_disable_is_forecast_before_measuring() {
    let tree = |name: &str| SysRoot::at(perflab_testkit::fixture(name));
    let forecast = |sys: &SysRoot, setting: &str| parse_setting(setting).unwrap().forecast(sys);
    let haltpoll = tree("kvm-haltpoll");
    let why = forecast(&haltpoll, "cpuidle=poll-only").expect("haltpoll is known");
    assert!(
        why.contains("the haltpoll driver ignores `disable`: haltpoll will still be entered"),
        "{why}"
    );
    // Nothing to disable, nothing to forecast; a driver that honours it neither.
    assert_eq!(forecast(&haltpoll, "cpuidle=all"), None);
    assert_eq!(forecast(&tree("x86-intel-idle"), "cpuidle=poll-only"), None);
    assert_eq!(forecast(&tree("power-smt4"), "cpuidle=poll-only"), None);
}

#[test]
fn all_states_enabled_has_nothing_to_watch() {
    let t = Tree::new();
    let guard = applied(&t.sys, "cpuidle=all", &t.journal());
    assert!(guard.probe(&t.sys).is_none());
}

#[test]
fn thp_reads_back_the_mode_or_names_what_it_found() {
    let copy = kvm_parts(MEMORY);
    let (sys, journal) = (&copy.sys, &copy.journal);
    let guard = applied(sys, "thp=never", journal);
    assert_eq!(check(guard.as_ref(), sys, &none(), || {}), Ok(()));
    let enabled = "sys/kernel/mm/transparent_hugepage/enabled";
    let why = check(guard.as_ref(), sys, &none(), || {
        // What a second tool writing `always` leaves, as the kernel shows it.
        fs::write(sys.path(enabled), "[always] madvise never\n").unwrap();
    })
    .unwrap_err();
    assert!(why.contains("reads back [always], not never"), "{why}");
}

#[test]
fn hugepages_check_the_pool_and_the_buffers_huge_fraction() {
    let copy = kvm_parts(MEMORY);
    let (sys, journal) = (&copy.sys, &copy.journal);
    let pool = "sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages";
    let before: u64 = sys.read_parsed(pool).unwrap();
    let guard = applied(sys, "hugepages=2M:16", journal);
    let fraction = |f: f64| WorkloadOutput {
        metrics: vec![Metric::new(
            "huge_fraction",
            f,
            Unit::Ratio,
            Better::Neither,
        )],
        ..Default::default()
    };
    assert_eq!(check(guard.as_ref(), sys, &fraction(1.0), || {}), Ok(()));
    let why = check(guard.as_ref(), sys, &fraction(0.25), || {}).unwrap_err();
    assert!(
        why.contains("only 25.0% of the workload's buffers were on huge pages"),
        "{why}"
    );
    let why = check(guard.as_ref(), sys, &none(), || {
        fs::write(sys.path(pool), format!("{}\n", before + 3)).unwrap();
    })
    .unwrap_err();
    assert!(
        why.contains(&format!(
            "the pool shrank from {} to {} pages",
            before + 16,
            before + 3
        )),
        "{why}"
    );
}

#[test]
fn irq_affinity_checks_the_effective_cpus_where_the_kernel_shows_them() {
    let copy = kvm_parts(IRQS);
    let (sys, journal) = (&copy.sys, &copy.journal);
    // An IRQ number the fixture has, steered to CPU 1.
    let irq = fs::read_dir(sys.path("proc/irq"))
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .find(|n| sys.exists(&format!("proc/irq/{n}/smp_affinity_list")) && *n > 0)
        .expect("an IRQ in the fixture");
    let guard = parse_setting(&format!("irqaffinity={irq}:1"))
        .unwrap()
        .apply(sys, journal)
        .unwrap();
    let effective = format!("proc/irq/{irq}/effective_affinity_list");
    fs::write(sys.path(&effective), "1\n").unwrap();
    assert_eq!(check(guard.as_ref(), sys, &none(), || {}), Ok(()));
    let why = check(guard.as_ref(), sys, &none(), || {
        fs::write(sys.path(&effective), "0\n").unwrap();
    })
    .unwrap_err();
    assert!(
        why.contains(&format!("IRQ {irq} is delivered to CPU 0")) && why.contains("outside 1"),
        "{why}"
    );
    guard.restore().unwrap();
}

#[test]
fn pmqos_holds_its_request_while_the_guard_lives() {
    let t = Tree::new();
    let guard = applied(&t.sys, "pmqos=0", &t.journal());
    // On a test tree the device is a plain file standing in: it must keep the value.
    assert_eq!(check(guard.as_ref(), &t.sys, &none(), || {}), Ok(()));
    let why = check(guard.as_ref(), &t.sys, &none(), || {
        fs::write(t.sys.path("dev/cpu_dma_latency"), 50i32.to_ne_bytes()).unwrap();
    })
    .unwrap_err();
    assert!(why.contains("not the 0 µs written"), "{why}");
    guard.restore().unwrap();
}

#[test]
fn verify_effects_names_every_knob_that_slipped() {
    let t = Tree::new();
    let journal = t.journal();
    let settings = perflab_knobs::Settings::parse(&["cpuidle=poll-only", "fake=1"]).unwrap();
    let applied = settings.apply(&t.sys, &journal).unwrap();
    let probes = applied.probes(&t.sys);
    // The fake knob cannot tell; cpuidle can.
    assert_eq!(probes.len(), 1);
    assert_eq!(verify_effects(&probes, &t.sys, &none()), None);
    bump(
        &t.sys,
        "sys/devices/system/cpu/cpu0/cpuidle/state1/usage",
        1,
    );
    let why = verify_effects(&probes, &t.sys, &none()).unwrap();
    assert!(
        why.starts_with("cpuidle=poll-only: disabled state C1 (state1)"),
        "{why}"
    );
    applied.restore().unwrap();
}
