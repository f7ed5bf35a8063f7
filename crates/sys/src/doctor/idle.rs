use perflab_core::Need;

use super::check::Check;
use crate::cpuidle::{DisableEffect, IdleState};
use crate::cpulist::format_cpu_list;
use crate::probe::access::Access;
use crate::probe::cpufreq::cpufreq as probe_cpufreq;
use crate::probe::cpuidle::{cpuidle as probe_cpuidle, IdleDriver};
use crate::probe::pm_qos::pm_qos as probe_pm_qos;
use crate::root::SysRoot;

const CPUIDLE: Need = Need::Cpuidle;

pub(super) fn cpuidle(sys: &SysRoot) -> Check {
    let Some(found) = probe_cpuidle(sys) else {
        return Check::missing(
            CPUIDLE,
            "no cpuidle driver",
            "idle-state studies need a cpuidle driver: run on bare metal (intel_idle, \
             acpi_idle, powernv_idle), or in a KVM guest use cpuidle-haltpoll \
             (CONFIG_HALTPOLL_CPUIDLE)",
        );
    };
    let IdleDriver {
        driver,
        governor,
        cpu,
        ..
    } = &found;
    let states = match &found.states {
        Ok(s) => s,
        Err(e) => {
            return Check::partial(
                CPUIDLE,
                format!("driver {driver}, states unreadable: {e}"),
                "check permissions on /sys/devices/system/cpu/cpu*/cpuidle",
            )
        }
    };
    if states.is_empty() {
        return Check::partial(
            CPUIDLE,
            format!("driver {driver}, governor {governor}, but CPU {cpu} has no idle states"),
            "the driver registered no states; check the firmware's idle-state table (BIOS C-states)",
        );
    }
    let detail = format!(
        "driver {driver}, governor {governor}, {} states on CPU {cpu}: {}",
        states.len(),
        state_names(states)
    );
    disable(&found, detail)
}

/// `POLL (polling), C1, C6`.
fn state_names(states: &[IdleState]) -> String {
    states
        .iter()
        .map(|s| {
            if s.is_polling() {
                format!("{} (polling)", s.name)
            } else {
                s.name.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The verdict on switching states off: writable is not the same as honoured, so say
/// which before a study relies on it.
fn disable(found: &IdleDriver, detail: String) -> Check {
    let driver = &found.driver;
    let writable = found.disable_writable;
    match found.effect {
        DisableEffect::Ignored => {
            let how = if writable { "writable" } else { "not writable" };
            Check::partial(
                CPUIDLE,
                format!(
                    "{detail}; disable is {how}, but the {driver} driver ignores `disable` \
                     (a disabled state is still entered), so cpuidle=poll-only and \
                     cpuidle=states:… cannot take effect here"
                ),
                "measure idle states where the driver honours `disable` (bare metal: \
                 intel_idle, acpi_idle, powernv_idle, pseries_idle); here such \
                 measurements are recorded ineffective",
            )
        }
        DisableEffect::Unknown if writable => Check::ok(
            CPUIDLE,
            format!(
                "{detail}; disable is writable; whether the {driver} driver honours it \
                 is not known: every measurement of a cpuidle variant checks that no \
                 disabled state was entered"
            ),
        ),
        _ if !writable => Check::partial(
            CPUIDLE,
            format!("{detail}; state disable files are not writable"),
            "run as root to switch idle states on and off",
        ),
        _ => Check::ok(
            CPUIDLE,
            format!("{detail}; disable is writable and {driver} honours it"),
        ),
    }
}

pub(super) fn pm_qos(sys: &SysRoot) -> Check {
    const NAME: Need = Need::PmQos;
    // The same probe the pmqos knob asks before it applies.
    match probe_pm_qos(sys) {
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
    // No plug-in declares a need for cpufreq: the line says what governs the frequency.
    const NAME: &str = "cpufreq";
    let found = probe_cpufreq(sys);
    if !found.present() {
        return Check::missing(
            NAME,
            "no cpufreq driver: frequency is controlled by the hypervisor or firmware",
            "on bare metal, set the BIOS power profile to OS control so a cpufreq driver \
             (intel_pstate, acpi-cpufreq, powernv-cpufreq) loads",
        );
    }
    let groups: Vec<String> = found
        .by_governor
        .iter()
        .map(|(g, c)| format!("{g} on CPUs {}", format_cpu_list(c)))
        .collect();
    let mut detail = format!(
        "driver {}, governor {}",
        found.driver.as_deref().unwrap_or("unknown"),
        groups.join("; ")
    );
    if !found.without.is_empty() {
        detail.push_str(&format!(
            "; no cpufreq on CPUs {}",
            format_cpu_list(&found.without)
        ));
        return Check::partial(
            NAME,
            detail,
            "some CPUs lack a cpufreq policy; check the driver's log in dmesg",
        );
    }
    Check::ok(NAME, detail)
}
