//! The host fingerprint stored with every run: what a reader of the numbers needs to know
//! about the machine, and what `compare` checks before putting two runs side by side.
//! It carries a short timing probe ([`probe`]) so that two runs compared with each other
//! can tell whether the machine itself ran at another speed.

mod probe;

use std::io::BufRead;

use perflab_stats::TimingProbe;
use perflab_sys::{cpuidle, format_cpu_list, SysRoot, Topology};
use serde::{Deserialize, Serialize};

pub use probe::timing_probe;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Fingerprint {
    pub hostname: String,
    pub kernel: String,
    pub machine: String,
    pub cmdline: String,
    pub cpu_model: String,
    pub online_cpus: String,
    pub cores: usize,
    pub threads_per_core: usize,
    pub idle_driver: String,
    pub idle_governor: String,
    pub cpufreq_governor: String,
    pub isolated_cpus: String,
    pub thp: String,
    pub perflab_version: String,
    /// Set when the measurements read a fixture tree instead of the live machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sysroot: Option<String>,
    /// The timing probe taken when the run was created; `None` in runs from before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<TimingProbe>,
}

/// Reads the fingerprint. Missing sources become "unknown"/"none" with no error: a
/// fingerprint describes, it does not gate.
///
/// A setting another perflab holds changed is recorded as it was before that perflab
/// changed it (its journaled original), never as that perflab's temporary value.
pub fn fingerprint(sys: &SysRoot, topo: &Topology) -> Fingerprint {
    let (hostname, kernel, machine) = uname();
    let read = |p: &str| perflab_knobs::target_lock::machine_value(sys, p);
    Fingerprint {
        hostname,
        kernel,
        machine,
        cmdline: read("proc/cmdline"),
        cpu_model: sys
            .open("proc/cpuinfo")
            .ok()
            .and_then(cpu_model)
            .unwrap_or_else(|| "unknown".into()),
        online_cpus: format_cpu_list(&topo.online),
        cores: topo.cores().len(),
        threads_per_core: topo.threads_per_core(),
        idle_driver: cpuidle::driver(sys).unwrap_or_else(|| "none".into()),
        idle_governor: cpuidle::governor(sys).unwrap_or_else(|| "none".into()),
        cpufreq_governor: non_empty(
            read("sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
            "none",
        ),
        isolated_cpus: non_empty(read("sys/devices/system/cpu/isolated"), "none"),
        thp: choice(&read("sys/kernel/mm/transparent_hugepage/enabled"))
            .unwrap_or_else(|| "unknown".into()),
        perflab_version: perflab_core::VERSION.to_string(),
        sysroot: (!sys.is_host()).then(|| sys.root().display().to_string()),
        probe: Some(timing_probe()),
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

/// Fields that differ between two fingerprints, as `(field, a, b)`; hostname and
/// version are included because they change what a comparison means. The timing probe
/// is left out: it differs a little every time, and the drift guard judges it.
pub fn differences(a: &Fingerprint, b: &Fingerprint) -> Vec<(String, String, String)> {
    let (ja, jb) = (serde_json::to_value(a), serde_json::to_value(b));
    let (Ok(serde_json::Value::Object(ma)), Ok(serde_json::Value::Object(mb))) = (ja, jb) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (k, va) in ma.iter().filter(|(k, _)| k.as_str() != "probe") {
        let vb = mb.get(k).cloned().unwrap_or(serde_json::Value::Null);
        if *va != vb {
            out.push((k.clone(), show(va), show(&vb)));
        }
    }
    out
}

fn show(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
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

    #[test]
    fn differences_list_changed_fields() {
        let a = Fingerprint {
            kernel: "6.1".into(),
            ..Default::default()
        };
        let b = Fingerprint {
            kernel: "6.6".into(),
            ..Default::default()
        };
        let d = differences(&a, &b);
        assert_eq!(d, vec![("kernel".into(), "6.1".into(), "6.6".into())]);
        assert!(differences(&a, &a).is_empty());
        // Two probes always differ a little; the drift guard judges them, not this list.
        let probed = Fingerprint {
            probe: Some(timing_probe()),
            ..a.clone()
        };
        assert!(differences(&a, &probed).is_empty());
    }
}
