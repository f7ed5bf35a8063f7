//! Reads the host fingerprint ([`perflab_core::Fingerprint`]) stored with every run: what a
//! reader of the numbers needs to know about the machine, and what `compare` checks before
//! putting two runs side by side.
//! It carries a short timing probe ([`probe`]) so that two runs compared with each other
//! can tell whether the machine itself ran at another speed.

mod probe;

use std::io::BufRead;

use perflab_core::Fingerprint;
use perflab_sys::{cpuidle, format_cpu_list, SysRoot, Topology};

pub use probe::timing_probe;

/// Reads the fingerprint. Missing sources become "unknown"/"none" with no error: a
/// fingerprint describes, it does not gate.
///
/// A setting another perflab holds changed is recorded as it was before that perflab
/// changed it (its journaled original), never as that perflab's temporary value.
pub fn fingerprint(sys: &SysRoot, topo: &Topology) -> Fingerprint {
    let (hostname, kernel, machine) = uname();
    let read = |p: &str| perflab_knobs::target_lock::machine_value(sys, p);
    Fingerprint {
        hostname: Some(hostname),
        kernel: Some(kernel),
        machine: Some(machine),
        cmdline: Some(read("proc/cmdline")),
        cpu_model: Some(
            sys.open("proc/cpuinfo")
                .ok()
                .and_then(cpu_model)
                .unwrap_or_else(|| "unknown".into()),
        ),
        online_cpus: Some(format_cpu_list(&topo.online)),
        cores: Some(topo.cores().len() as u64),
        threads_per_core: Some(topo.threads_per_core() as u64),
        idle_driver: Some(cpuidle::driver(sys).unwrap_or_else(|| "none".into())),
        idle_governor: Some(cpuidle::governor(sys).unwrap_or_else(|| "none".into())),
        cpufreq_governor: Some(non_empty(
            read("sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
            "none",
        )),
        isolated_cpus: Some(non_empty(read("sys/devices/system/cpu/isolated"), "none")),
        thp: Some(
            choice(&read("sys/kernel/mm/transparent_hugepage/enabled"))
                .unwrap_or_else(|| "unknown".into()),
        ),
        perflab_version: Some(perflab_core::VERSION.to_string()),
        sysroot: (!sys.is_host()).then(|| sys.root().display().to_string()),
        probe: Some(timing_probe()),
        extra: Default::default(),
    }
}

fn non_empty(s: String, default: &str) -> String {
    if s.is_empty() {
        default.to_string()
    } else {
        s
    }
}

/// The selected word of a choice list as the kernel shows it (`always [madvise] never`)
/// or as a journal keeps it (`madvise`, the form written back).
fn choice(text: &str) -> Option<String> {
    bracketed(text).or_else(|| {
        let word = text.trim();
        (!word.is_empty() && !word.contains(char::is_whitespace)).then(|| word.to_string())
    })
}

/// The selected word of a sysfs choice list such as `always [madvise] never`.
pub fn bracketed(text: &str) -> Option<String> {
    let start = text.find('[')?;
    let end = text[start..].find(']')? + start;
    Some(text[start + 1..end].to_string())
}

/// The CPU model from /proc/cpuinfo: `model name` on x86, `cpu` on POWER, `Model` or
/// `CPU part` on arm64.
pub fn cpu_model(reader: impl BufRead) -> Option<String> {
    let mut fallback = None;
    for line in reader.lines() {
        let line = line.ok()?;
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let (key, value) = (key.trim(), value.trim());
        match key {
            "model name" | "cpu" if !value.is_empty() => return Some(value.to_string()),
            "Model" | "machine" | "CPU part" if fallback.is_none() => {
                fallback = Some(value.to_string())
            }
            _ => {}
        }
    }
    fallback
}

fn uname() -> (String, String, String) {
    // SAFETY: uname fills the struct we own; its fields are NUL-terminated.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    if unsafe { libc::uname(&mut u) } != 0 {
        return ("unknown".into(), "unknown".into(), "unknown".into());
    }
    let field = |f: &[libc::c_char]| {
        let bytes: Vec<u8> = f
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    (field(&u.nodename), field(&u.release), field(&u.machine))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_model_on_x86_and_power() {
        let x86 = "processor\t: 0\nmodel name\t: Intel(R) Xeon(R) Gold 6248\n";
        assert_eq!(
            cpu_model(x86.as_bytes()).unwrap(),
            "Intel(R) Xeon(R) Gold 6248"
        );
        let power = "processor\t: 0\ncpu\t\t: POWER9 (raw), altivec supported\n";
        assert_eq!(
            cpu_model(power.as_bytes()).unwrap(),
            "POWER9 (raw), altivec supported"
        );
        assert_eq!(cpu_model("".as_bytes()), None);
    }

    #[test]
    fn bracketed_choice() {
        assert_eq!(bracketed("always [madvise] never").unwrap(), "madvise");
        assert_eq!(bracketed("none"), None);
        assert_eq!(bracketed("[x"), None);
    }
}
