use std::collections::BTreeMap;

use super::Check;
use crate::cpufreq;
use crate::cpuidle::{self, state_dir};
use crate::cpulist::format_cpu_list;
use crate::probe::Access;
use crate::root::SysRoot;
use crate::topology::Topology;

fn online(sys: &SysRoot) -> Vec<u32> {
    Topology::read(sys).map(|t| t.online).unwrap_or_default()
}

pub(super) fn cpuidle(sys: &SysRoot) -> Check {
    const NAME: &str = "cpuidle";
    let Some(driver) = cpuidle::driver(sys) else {
        return Check::missing(
            NAME,
            "no cpuidle driver",
            "idle-state studies need a cpuidle driver: run on bare metal (intel_idle, \
             acpi_idle, powernv_idle), or in a KVM guest use cpuidle-haltpoll \
             (CONFIG_HALTPOLL_CPUIDLE)",
        );
    };
    let governor = cpuidle::governor(sys).unwrap_or_else(|| "none".into());
    let cpus = online(sys);
    let first = cpus.first().copied().unwrap_or(0);
    let states = match cpuidle::states(sys, first) {
        Ok(s) => s,
        Err(e) => {
            return Check::partial(
                NAME,
                format!("driver {driver}, states unreadable: {e}"),
                "check permissions on /sys/devices/system/cpu/cpu*/cpuidle",
            )
        }
    };
    if states.is_empty() {
        return Check::partial(
            NAME,
            format!("driver {driver}, governor {governor}, but CPU {first} has no idle states"),
            "the driver registered no states; check the firmware's idle-state table (BIOS C-states)",
        );
    }
    let names: Vec<String> = states
        .iter()
        .map(|s| {
            if s.is_polling() {
                format!("{} (polling)", s.name)
            } else {
                s.name.clone()
            }
        })
        .collect();
    let detail = format!(
        "driver {driver}, governor {governor}, {} states on CPU {first}: {}",
        states.len(),
        names.join(", ")
    );
    // Writable is not the same as honoured: say which before a study relies on it.
    let ignored = format!(
        "the {driver} driver ignores `disable` (a disabled state is still entered), so \
         cpuidle=poll-only and cpuidle=states:… cannot take effect here"
    );
    let hint_ignored = "measure idle states where the driver honours `disable` (bare metal: \
                        intel_idle, acpi_idle, powernv_idle, pseries_idle); here such \
                        measurements are recorded ineffective";
    let writable = states
        .iter()
        .all(|s| sys.writable(&format!("{}/disable", state_dir(first, s.index))));
    match cpuidle::disable_effect(&driver) {
        cpuidle::DisableEffect::Ignored => {
            let how = if writable { "writable" } else { "not writable" };
            return Check::partial(
                NAME,
                format!("{detail}; disable is {how}, but {ignored}"),
                hint_ignored,
            );
        }
        cpuidle::DisableEffect::Unknown if writable => {
            return Check::ok(
                NAME,
                format!(
                    "{detail}; disable is writable; whether the {driver} driver honours it \
                     is not known: every measurement of a cpuidle variant checks that no \
                     disabled state was entered"
                ),
            );
        }
        _ => {}
    }
    if !writable {
        return Check::partial(
            NAME,
            format!("{detail}; state disable files are not writable"),
            "run as root to switch idle states on and off",
        );
    }
    Check::ok(
        NAME,
        format!("{detail}; disable is writable and {driver} honours it"),
    )
}

pub(super) fn pm_qos(sys: &SysRoot) -> Check {
    const NAME: &str = "pm qos";
    // The same probe the pmqos knob asks before it applies.
    match crate::probe::pm_qos(sys) {
        Access::Missing => Check::missing(
            NAME,
            "no /dev/cpu_dma_latency",
            "the kernel's CPU latency QoS device is missing: mount devtmpfs on /dev",
        ),
        Access::Writable => Check::ok(NAME, "/dev/cpu_dma_latency is writable"),
        Access::ReadOnly => Check::partial(
            NAME,
            "/dev/cpu_dma_latency exists but is not writable",
            "run as root to hold a CPU latency request",
        ),
    }
}

pub(super) fn cpufreq(sys: &SysRoot) -> Check {
    const NAME: &str = "cpufreq";
    let cpus = online(sys);
    let mut by_governor: BTreeMap<String, Vec<u32>> = BTreeMap::new();
    let mut without = Vec::new();
    for &cpu in &cpus {
        match cpufreq::governor(sys, cpu) {
            Some(g) => by_governor.entry(g).or_default().push(cpu),
            None => without.push(cpu),
        }
    }
    if by_governor.is_empty() {
        return Check::missing(
            NAME,
            "no cpufreq driver: frequency is controlled by the hypervisor or firmware",
            "on bare metal, set the BIOS power profile to OS control so a cpufreq driver \
             (intel_pstate, acpi-cpufreq, powernv-cpufreq) loads",
        );
    }
    let driver = cpus.first().and_then(|&c| cpufreq::driver(sys, c));
    let groups: Vec<String> = by_governor
        .iter()
        .map(|(g, c)| format!("{g} on CPUs {}", format_cpu_list(c)))
        .collect();
    let mut detail = format!(
        "driver {}, governor {}",
        driver.as_deref().unwrap_or("unknown"),
        groups.join("; ")
    );
    if !without.is_empty() {
        detail.push_str(&format!(
            "; no cpufreq on CPUs {}",
            format_cpu_list(&without)
        ));
        return Check::partial(
            NAME,
            detail,
            "some CPUs lack a cpufreq policy; check the driver's log in dmesg",
        );
    }
    Check::ok(NAME, detail)
}
