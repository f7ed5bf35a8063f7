//! cpufreq: the scaling governor and driver of each CPU
//! (`devices/system/cpu/cpuN/cpufreq/`). VMs usually have no cpufreq at all.

use crate::root::SysRoot;

/// Path of a CPU's governor attribute, relative to the root (for the governor knob).
pub fn governor_path(cpu: u32) -> String {
    format!("sys/devices/system/cpu/cpu{cpu}/cpufreq/scaling_governor")
}

/// The CPU's scaling governor; `None` without cpufreq.
pub fn governor(sys: &SysRoot, cpu: u32) -> Option<String> {
    sys.read_trimmed(&governor_path(cpu))
        .ok()
        .filter(|g| !g.is_empty())
}

/// The CPU's cpufreq driver (`intel_pstate`, `acpi-cpufreq`, `powernv-cpufreq`).
pub fn driver(sys: &SysRoot, cpu: u32) -> Option<String> {
    sys.read_trimmed(&format!(
        "sys/devices/system/cpu/cpu{cpu}/cpufreq/scaling_driver"
    ))
    .ok()
    .filter(|d| !d.is_empty())
}

/// The governors the CPU offers.
pub fn available_governors(sys: &SysRoot, cpu: u32) -> Vec<String> {
    sys.read_string(&format!(
        "sys/devices/system/cpu/cpu{cpu}/cpufreq/scaling_available_governors"
    ))
    .map(|t| t.split_whitespace().map(str::to_string).collect())
    .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_cpufreq_is_none() {
        let dir = tempfile::tempdir().unwrap();
        let sys = SysRoot::at(dir.path());
        assert_eq!(governor(&sys, 0), None);
        let p = dir.path().join("sys/devices/system/cpu/cpu3/cpufreq");
        std::fs::create_dir_all(&p).unwrap();
        std::fs::write(p.join("scaling_governor"), "performance\n").unwrap();
        std::fs::write(
            p.join("scaling_available_governors"),
            "performance powersave\n",
        )
        .unwrap();
        assert_eq!(governor(&sys, 3).as_deref(), Some("performance"));
        assert_eq!(
            available_governors(&sys, 3),
            vec!["performance", "powersave"]
        );
        assert_eq!(driver(&sys, 3), None);
    }
}
