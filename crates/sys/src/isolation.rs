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

/// What the running kernel can do of what the command line asks: `nohz_full=` needs
/// CONFIG_NO_HZ_FULL, `rcu_nocbs=` needs CONFIG_RCU_NOCB_CPU. `None`: not known here.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KernelSupport {
    pub nohz_full: Option<bool>,
    pub rcu_nocb: Option<bool>,
    /// How it was found: the config file read, or the evidence used.
    pub how: Vec<String>,
}

impl KernelSupport {
    /// The `CONFIG_` options the kernel lacks, by name.
    pub fn missing(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        if self.nohz_full == Some(false) {
            out.push("CONFIG_NO_HZ_FULL");
        }
        if self.rcu_nocb == Some(false) {
            out.push("CONFIG_RCU_NOCB_CPU");
        }
        out
    }
}

/// Finds what the kernel supports: from its build configuration where readable, else
/// from evidence (sysfs `nohz_full` exists only with NO_HZ_FULL; offload kthreads
/// `rcuo*` exist only with RCU_NOCB_CPU, and only once `rcu_nocbs=` asked for them).
pub fn kernel_support(sys: &SysRoot, iso: &Isolation) -> KernelSupport {
    let mut s = KernelSupport::default();
    if let Some(c) = crate::kconfig::KernelConfig::read(sys) {
        s.nohz_full = Some(c.enabled("CONFIG_NO_HZ_FULL"));
        s.rcu_nocb = Some(c.enabled("CONFIG_RCU_NOCB_CPU"));
        s.how.push(format!("kernel config from {}", c.source));
        return s;
    }
    s.nohz_full = Some(kernel_has_nohz_full(sys));
    s.how.push("NO_HZ_FULL from sysfs nohz_full".into());
    if matches!(&iso.rcu_nocbs, Some(c) if !c.is_empty()) && sys.exists("proc/1") {
        let any = tasks(sys).iter().any(|t| rcu_offload(&t.comm).is_some());
        s.rcu_nocb = Some(any);
        s.how
            .push("RCU_NOCB_CPU from the rcuo* offload threads rcu_nocbs= creates".into());
    }
    s
}

/// One kernel or user thread as /proc shows it now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskSample {
    pub tid: i32,
    pub tgid: i32,
    pub comm: String,
    /// The CPU it last ran on (stat field 39).
    pub cpu: u32,
    /// Time it has spent on a CPU: schedstat's first field (ns) where present, else
    /// utime + stime at USER_HZ = 100.
    pub runtime_ns: u64,
}

/// (comm, processor, utime + stime ticks) of a `/proc/PID/stat` line.
pub fn parse_task_stat(text: &str) -> Option<(String, u32, u64)> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let comm = text.get(open + 1..close)?.to_string();
    let f: Vec<&str> = text.get(close + 1..)?.split_whitespace().collect();
    // Fields after the comm start at field 3: field n is f[n - 3].
    let ticks = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    let cpu = f.get(36)?.parse().ok()?;
    Some((comm, cpu, ticks))
}

/// Every thread of every process under `proc/`, skipping those that vanish meanwhile.
pub fn tasks(sys: &SysRoot) -> Vec<TaskSample> {
    let digits = |s: &String| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let mut out = Vec::new();
    let Ok(pids) = sys.list_dir("proc") else {
        return out;
    };
    for pid in pids.iter().filter(|p| digits(p)) {
        let tids = sys
            .list_dir(&format!("proc/{pid}/task"))
            .unwrap_or_else(|_| vec![pid.clone()]);
        for tid in tids.iter().filter(|t| digits(t)) {
            let base = if sys.exists(&format!("proc/{pid}/task/{tid}")) {
                format!("proc/{pid}/task/{tid}")
            } else {
                format!("proc/{pid}")
            };
            let Ok(stat) = sys.read_string(&format!("{base}/stat")) else {
                continue;
            };
            let Some((comm, cpu, ticks)) = parse_task_stat(&stat) else {
                continue;
            };
            let runtime_ns = sys
                .read_string(&format!("{base}/schedstat"))
                .ok()
                .and_then(|s| s.split_whitespace().next()?.parse().ok())
                .unwrap_or(ticks.saturating_mul(10_000_000));
            out.push(TaskSample {
                tid: tid.parse().unwrap_or(0),
                tgid: pid.parse().unwrap_or(0),
                comm,
                cpu,
                runtime_ns,
            });
        }
    }
    out
}

/// For an RCU callback-offload kthread (`rcuop/7`, `rcuos/7`, `rcuob/7`, the grace-period
/// group leader `rcuog/6`), the CPU whose callbacks it handles.
pub fn rcu_offload(comm: &str) -> Option<u32> {
    let rest = comm.strip_prefix("rcuo")?;
    let (kind, cpu) = rest.split_once('/')?;
    if !matches!(kind, "p" | "s" | "b" | "g") {
        return None;
    }
    cpu.parse().ok()
}

#[cfg(test)]
mod task_tests {
    use super::*;

    #[test]
    fn stat_lines_give_comm_cpu_and_ticks() {
        let stat = "63 (rcuos/7) S 2 0 0 0 -1 2129984 0 0 0 0 41 3 0 0 20 0 1 0 \
                    44 0 0 18446744073709551615 0 0 0 0 0 0 0 2147483647 0 0 0 0 17 0 \
                    0 0 0 0 0 0 0 0 0 0 0 0 0";
        assert_eq!(parse_task_stat(stat), Some(("rcuos/7".into(), 0, 44)));
        let odd = "9 (a) (b c)) R 1 0 0 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 1 0 0 0 0 0 0 0 0 \
                   0 0 0 0 0 0 0 17 3 0";
        assert_eq!(parse_task_stat(odd), Some(("a) (b c)".into(), 3, 3)));
        assert_eq!(parse_task_stat("1 (x) S"), None);
        assert_eq!(parse_task_stat(""), None);
    }

    #[test]
    fn rcu_offload_threads_name_their_cpu() {
        assert_eq!(rcu_offload("rcuop/7"), Some(7));
        assert_eq!(rcu_offload("rcuog/0"), Some(0));
        assert_eq!(rcu_offload("rcuob/12"), Some(12));
        assert_eq!(rcu_offload("rcu_preempt"), None);
        assert_eq!(rcu_offload("rcuox/1"), None);
        assert_eq!(rcu_offload("rcuop/x"), None);
    }

    #[test]
    fn missing_options_are_named() {
        let s = KernelSupport {
            nohz_full: Some(false),
            rcu_nocb: Some(true),
            how: vec![],
        };
        assert_eq!(s.missing(), vec!["CONFIG_NO_HZ_FULL"]);
        assert!(KernelSupport::default().missing().is_empty());
    }

    proptest::proptest! {
        #[test]
        fn task_parsers_never_panic(s in "\\PC{0,120}") {
            let _ = parse_task_stat(&s);
            let _ = rcu_offload(&s);
        }
    }
}
