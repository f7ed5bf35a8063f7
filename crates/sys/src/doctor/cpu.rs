use perflab_core::Need;

use super::check::Check;
use crate::cpulist::format_cpu_list;
use crate::probe::isolation::{isolation as probe_isolation, IsolationProbe};
use crate::root::SysRoot;
use crate::topology::Topology;

pub(super) fn topology(sys: &SysRoot) -> Check {
    const NAME: &str = "cpu topology";
    match Topology::read(sys) {
        Ok(t) if !t.online.is_empty() => {
            let tpc = t.threads_per_core();
            Check::ok(
                NAME,
                format!(
                    "{} online CPUs ({}), {} cores, {} thread{} per core",
                    t.online.len(),
                    format_cpu_list(&t.online),
                    t.cores().len(),
                    tpc,
                    if tpc == 1 { "" } else { "s" }
                ),
            )
        }
        Ok(_) => Check::missing(
            NAME,
            "no online CPUs listed",
            "check that sysfs is mounted on /sys",
        ),
        Err(e) => Check::missing(
            NAME,
            e.to_string(),
            "mount sysfs: `mount -t sysfs sysfs /sys`",
        ),
    }
}

const ISOLATION: Need = Need::Isolation;

fn list(cpus: &Option<Vec<u32>>) -> String {
    match cpus {
        None => "-".into(),
        Some(c) if c.is_empty() => "(none)".into(),
        Some(c) => format_cpu_list(c),
    }
}

/// `use a kernel built with CONFIG_X=y and CONFIG_Y=y`.
fn build_with(options: &[&str]) -> String {
    format!(
        "use a kernel built with {}",
        options
            .iter()
            .map(|o| format!("{o}=y"))
            .collect::<Vec<_>>()
            .join(" and ")
    )
}

pub(super) fn isolation(sys: &SysRoot) -> Check {
    let found = match probe_isolation(sys) {
        Ok(found) => found,
        Err(e) => return Check::missing(ISOLATION, e, "mount procfs on /proc"),
    };
    let detail = detail(&found);
    let missing = found.support.missing();
    let Some(isolated) = found.isolcpus().filter(|c| !c.is_empty()) else {
        let mut hint = "boot with isolcpus=managed_irq,domain,<cpus> nohz_full=<cpus> \
                        rcu_nocbs=<cpus> to keep housekeeping off the measured CPUs"
            .to_string();
        if !missing.is_empty() {
            hint.push_str(&format!(", and {}", build_with(&missing)));
        }
        return Check::missing(ISOLATION, detail, hint);
    };
    let lacking = lacking(&found);
    if lacking.is_empty() && missing.is_empty() {
        return Check::ok(ISOLATION, detail);
    }
    partial(&detail, &format_cpu_list(&isolated), &lacking, &missing)
}

/// What the command line asks, what sysfs shows, and what the kernel was built with.
fn detail(found: &IsolationProbe) -> String {
    let iso = &found.iso;
    let mut detail = format!(
        "cmdline isolcpus={} nohz_full={} rcu_nocbs={}; sysfs isolated={} nohz_full={}",
        list(&found.isolcpus()),
        list(&iso.nohz_full),
        list(&iso.rcu_nocbs),
        list(&iso.sysfs_isolated),
        if found.nohz_full_kernel {
            list(&iso.sysfs_nohz_full)
        } else {
            "(kernel without NO_HZ_FULL)".into()
        }
    );
    for w in &iso.warnings {
        detail.push_str(&format!("; {w}"));
    }
    let yes_no = |x: Option<bool>| match x {
        Some(true) => "yes",
        Some(false) => "no",
        None => "not known",
    };
    let support = &found.support;
    detail.push_str(&format!(
        "; kernel NO_HZ_FULL {}, RCU_NOCB_CPU {} ({})",
        yes_no(support.nohz_full),
        yes_no(support.rcu_nocb),
        support.how.join("; ")
    ));
    detail
}

/// The companions of isolcpus= the command line leaves out.
fn lacking(found: &IsolationProbe) -> Vec<&'static str> {
    let mut lacking = Vec::new();
    if !matches!(&found.iso.nohz_full, Some(c) if !c.is_empty()) {
        lacking.push("nohz_full");
    }
    if !matches!(&found.iso.rcu_nocbs, Some(c) if !c.is_empty()) {
        lacking.push("rcu_nocbs");
    }
    lacking
}

/// isolcpus= is set on `cpus`, but the command line lacks `lacking` or the kernel the
/// `missing` options.
fn partial(detail: &str, cpus: &str, lacking: &[&str], missing: &[&str]) -> Check {
    let mut why = Vec::new();
    let mut hints = Vec::new();
    if !lacking.is_empty() {
        why.push(format!(
            "isolcpus is set but {} missing",
            lacking.join(" and ")
        ));
        hints.push(format!(
            "add {} to the kernel command line",
            lacking
                .iter()
                .map(|k| format!("{k}={cpus}"))
                .collect::<Vec<_>>()
                .join(" ")
        ));
    }
    for m in missing {
        why.push(match *m {
            "CONFIG_NO_HZ_FULL" => "isolation is partial: the kernel lacks CONFIG_NO_HZ_FULL, \
                                    so the scheduler tick keeps interrupting the isolated CPUs \
                                    (nohz_full= has no effect)"
                .to_string(),
            _ => "isolation is partial: the kernel lacks CONFIG_RCU_NOCB_CPU, so RCU callbacks \
                  still run on the isolated CPUs (rcu_nocbs= has no effect)"
                .to_string(),
        });
    }
    if !missing.is_empty() {
        hints.push(build_with(missing));
    }
    Check::partial(
        ISOLATION,
        format!("{detail}; {}", why.join("; ")),
        hints.join("; "),
    )
}
