//! CPU isolation: what the command line asked for (`isolcpus=`, `nohz_full=`,
//! `rcu_nocbs=`) and what the kernel reports it did (`devices/system/cpu/isolated` and,
//! with CONFIG_NO_HZ_FULL only, `devices/system/cpu/nohz_full`).

use crate::cmdline::{parse_cmdline, Cmdline};
use crate::cpulist::parse_cpu_list;
use crate::error::{ParseError, SysError};
use crate::root::SysRoot;

const ISOLATED: &str = "sys/devices/system/cpu/isolated";
const NOHZ_FULL: &str = "sys/devices/system/cpu/nohz_full";
const POSSIBLE: &str = "sys/devices/system/cpu/possible";

/// `isolcpus=[flag,…,]cpulist`, with the flags (`nohz`, `domain`, `managed_irq`) apart.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IsolCpus {
    pub flags: Vec<String>,
    pub cpus: Vec<u32>,
}

/// Parses the value of `isolcpus=`. As in housekeeping_isolcpus_setup, leading words made
/// of letters are flags, and the rest is the CPU list.
pub fn parse_isolcpus(value: &str, possible: &[u32]) -> Result<IsolCpus, ParseError> {
    let mut rest = value.trim();
    let mut flags = Vec::new();
    while rest.starts_with(|c: char| c.is_ascii_alphabetic()) {
        let (word, after) = rest.split_once(',').unwrap_or((rest, ""));
        // `isolcpus=all`-like words without a following list are a CPU list, not a flag.
        if after.is_empty() && !word.chars().all(|c| c.is_ascii_alphabetic() || c == '_') {
            break;
        }
        if after.is_empty() && (word == "all" || word == "N") {
            break;
        }
        flags.push(word.to_string());
        rest = after;
    }
    Ok(IsolCpus {
        flags,
        cpus: parse_kernel_cpu_list(rest, possible)?,
    })
}

/// A CPU list as the kernel accepts it on the command line (bitmap_parselist): ranges,
/// `all`, `N` for the last possible CPU, and the stride form `0-15:2/4`.
pub fn parse_kernel_cpu_list(text: &str, possible: &[u32]) -> Result<Vec<u32>, ParseError> {
    let text = text.trim();
    if text == "all" {
        return Ok(possible.to_vec());
    }
    let last = possible.iter().max().copied();
    let mut out = Vec::new();
    for part in text.split(',').filter(|p| !p.trim().is_empty()) {
        let part = part.trim();
        let resolved = if part.contains('N') {
            let n =
                last.ok_or_else(|| ParseError::new(1, "`N` used but no possible CPUs known"))?;
            part.replace('N', &n.to_string())
        } else {
            part.to_string()
        };
        match resolved.split_once(':') {
            None => out.extend(parse_cpu_list(&resolved)?),
            Some((range, stride)) => {
                let span = parse_cpu_list(range)?;
                let (used, group) = stride
                    .split_once('/')
                    .and_then(|(u, g)| Some((u.parse::<u32>().ok()?, g.parse::<u32>().ok()?)))
                    .filter(|&(u, g)| g > 0 && u <= g)
                    .ok_or_else(|| ParseError::new(1, format!("bad stride in {part:?}")))?;
                let first = span.first().copied().unwrap_or(0);
                out.extend(span.into_iter().filter(|c| (c - first) % group < used));
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// What isolation the machine was booted with, and what the kernel says is in effect.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Isolation {
    /// `isolcpus=` from the command line.
    pub isolcpus: Option<IsolCpus>,
    /// `nohz_full=` from the command line.
    pub nohz_full: Option<Vec<u32>>,
    /// `rcu_nocbs=` from the command line (present without a list: no CPU offloaded yet).
    pub rcu_nocbs: Option<Vec<u32>>,
    /// `devices/system/cpu/isolated`, when the file exists.
    pub sysfs_isolated: Option<Vec<u32>>,
    /// `devices/system/cpu/nohz_full`, when the kernel has CONFIG_NO_HZ_FULL.
    pub sysfs_nohz_full: Option<Vec<u32>>,
    /// Problems met while reading (unparsable values), reported instead of failing.
    pub warnings: Vec<String>,
}

impl Isolation {
    /// Reads `proc/cmdline` and the sysfs files. A missing file is `None`, not an error;
    /// only an unreadable command line fails.
    pub fn read(sys: &SysRoot) -> Result<Self, SysError> {
        let cmdline =
            parse_cmdline(sys.open("proc/cmdline")?).map_err(|e| e.at(sys.path("proc/cmdline")))?;
        let possible = sys
            .read_string(POSSIBLE)
            .ok()
            .and_then(|t| parse_cpu_list(&t).ok())
            .unwrap_or_default();
        let mut iso = Self::from_cmdline(&cmdline, &possible);
        let mut sysfs = |rel: &str| match sys.read_string(rel) {
            // A NO_HZ_FULL kernel booted without nohz_full= prints its unallocated mask
            // as "(null)".
            Ok(text) if text.trim() == "(null)" => Some(Vec::new()),
            Ok(text) => match parse_cpu_list(&text) {
                Ok(cpus) => Some(cpus),
                Err(e) => {
                    iso.warnings
                        .push(format!("{}: {e}", sys.path(rel).display()));
                    None
                }
            },
            Err(_) => None,
        };
        let isolated = sysfs(ISOLATED);
        let nohz = sysfs(NOHZ_FULL);
        iso.sysfs_isolated = isolated;
        iso.sysfs_nohz_full = nohz;
        Ok(iso)
    }

    /// The command-line part alone.
    pub fn from_cmdline(cmdline: &Cmdline, possible: &[u32]) -> Self {
        let mut iso = Isolation::default();
        if let Some(v) = cmdline.value("isolcpus") {
            match parse_isolcpus(v, possible) {
                Ok(i) => iso.isolcpus = Some(i),
                Err(e) => iso.warnings.push(format!("isolcpus={v}: {}", e.reason)),
            }
        }
        let mut list = |key: &str| match cmdline.get(key)? {
            None => Some(Vec::new()),
            Some(v) => match parse_kernel_cpu_list(v, possible) {
                Ok(c) => Some(c),
                Err(e) => {
                    iso.warnings.push(format!("{key}={v}: {}", e.reason));
                    None
                }
            },
        };
        let nohz = list("nohz_full");
        let rcu = list("rcu_nocbs");
        iso.nohz_full = nohz;
        iso.rcu_nocbs = rcu;
        iso
    }

    /// CPUs isolated from the scheduler: the kernel's own view when it has one, else the
    /// command line's.
    pub fn isolated_cpus(&self) -> Vec<u32> {
        match (&self.sysfs_isolated, &self.isolcpus) {
            (Some(s), _) => s.clone(),
            (None, Some(i)) => i.cpus.clone(),
            (None, None) => Vec::new(),
        }
    }
}

/// True when the running kernel was built with CONFIG_NO_HZ_FULL (only then does sysfs
/// have `devices/system/cpu/nohz_full`, see drivers/base/cpu.c).
pub fn kernel_has_nohz_full(sys: &SysRoot) -> bool {
    sys.exists(NOHZ_FULL)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn isolcpus_flags_are_split_from_the_list() {
        let i = parse_isolcpus("managed_irq,domain,2-5,8", &[]).unwrap();
        assert_eq!(i.flags, vec!["managed_irq", "domain"]);
        assert_eq!(i.cpus, vec![2, 3, 4, 5, 8]);
        let plain = parse_isolcpus("1,3", &[]).unwrap();
        assert!(plain.flags.is_empty());
        assert_eq!(plain.cpus, vec![1, 3]);
        assert!(parse_isolcpus("nohz,x-1", &[]).is_err());
    }

    #[test]
    fn kernel_cpu_lists_with_all_n_and_stride() {
        let possible: Vec<u32> = (0..8).collect();
        assert_eq!(parse_kernel_cpu_list("all", &possible).unwrap(), possible);
        assert_eq!(
            parse_kernel_cpu_list("4-N", &possible).unwrap(),
            vec![4, 5, 6, 7]
        );
        assert_eq!(
            parse_kernel_cpu_list("0-7:1/4", &possible).unwrap(),
            vec![0, 4]
        );
        assert!(parse_kernel_cpu_list("0-7:5/4", &possible).is_err());
        assert!(parse_kernel_cpu_list("N", &[]).is_err());
    }

    #[test]
    fn from_cmdline_reads_all_three() {
        let c = Cmdline::parse_str("isolcpus=domain,1-3 nohz_full=1-3 rcu_nocbs -- nohz_full=9");
        let i = Isolation::from_cmdline(&c, &[0, 1, 2, 3]);
        assert_eq!(i.isolcpus.unwrap().cpus, vec![1, 2, 3]);
        assert_eq!(i.nohz_full, Some(vec![1, 2, 3]));
        assert_eq!(i.rcu_nocbs, Some(vec![]));
        let bad = Isolation::from_cmdline(&Cmdline::parse_str("nohz_full=x"), &[]);
        assert_eq!(bad.nohz_full, None);
        assert_eq!(bad.warnings.len(), 1);
    }

    proptest! {
        #[test]
        fn never_panics(s in "[a-zN0-9,:/ -]{0,30}") {
            let _ = parse_isolcpus(&s, &[0, 1, 2, 3]);
            let _ = parse_kernel_cpu_list(&s, &[]);
        }
    }
}
