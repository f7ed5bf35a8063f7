//! One description of a plug-in, whatever its kind (workload, monitor, knob, parser): its
//! name and help, its parameters with units and limits, what it needs from the machine,
//! and how the report words and groups what it records. Each plug-in declares its
//! descriptor in its own file; each registry is a list of (descriptor, constructor)
//! entries. `perflab list`, completions, `perflab doctor` and the report read these, so
//! none of them names a plug-in.

use crate::params::ParamSpec;

/// What sort of plug-in a descriptor describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    Workload,
    Monitor,
    Knob,
    Parser,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Workload => "workload",
            Kind::Monitor => "monitor",
            Kind::Knob => "knob",
            Kind::Parser => "parser",
        }
    }
}

/// A plug-in described as data.
#[derive(Debug)]
pub struct Descriptor {
    pub kind: Kind,
    pub name: &'static str,
    pub help: &'static str,
    /// A workload's parameters; a knob's value or a parser's options described the same
    /// way (one entry named `value` for a knob).
    pub params: &'static [ParamSpec],
    /// What the machine must offer for the plug-in to work (`perflab doctor` checks each
    /// and says which plug-ins a missing one blocks or limits).
    pub needs: Needs,
    pub report: ReportHints,
}

impl Descriptor {
    /// The metric comparisons use by default: a workload's, else empty.
    pub fn primary_metric(&self) -> &'static str {
        match &self.report {
            ReportHints::Workload(w) => w.primary_metric,
            _ => "",
        }
    }

    /// How the report shows a monitor's rows, where the plug-in records rows.
    pub fn rows(&self) -> Option<&RowHints> {
        match &self.report {
            ReportHints::Rows(r) => Some(r),
            _ => None,
        }
    }

    /// How the report shows a workload's results, where the plug-in is a workload.
    pub fn results(&self) -> Option<&WorkloadHints> {
        match &self.report {
            ReportHints::Workload(w) => Some(w),
            _ => None,
        }
    }

    /// The first line of the help, for listings.
    pub fn summary(&self) -> &'static str {
        self.help.lines().next().unwrap_or("")
    }
}

/// What a plug-in needs from the machine: for everything it does, or for some of its
/// values only (netpath=ovs, xfer's 2M pages, hardware counters), where a missing need
/// limits the plug-in rather than blocking it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Needs {
    pub all: &'static [Need],
    pub some: &'static [Need],
}

impl Needs {
    pub const NONE: Needs = Needs {
        all: &[],
        some: &[],
    };

    /// Needed for everything the plug-in does.
    pub const fn all(all: &'static [Need]) -> Self {
        Self { all, some: &[] }
    }

    /// Whether a missing `need` blocks the plug-in (`Some(true)`), limits it
    /// (`Some(false)`), or does not concern it (`None`).
    pub fn blocks(&self, need: Need) -> Option<bool> {
        if self.all.contains(&need) {
            Some(true)
        } else if self.some.contains(&need) {
            Some(false)
        } else {
            None
        }
    }

    /// Every need, those for everything first.
    pub fn iter(&self) -> impl Iterator<Item = Need> + '_ {
        self.all.iter().chain(self.some).copied()
    }
}

/// Something a plug-in needs from the machine. Each is one line of `perflab doctor`
/// ([`Need::check`] names the line), which says how to get it when it is missing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Need {
    /// Root or CAP_SYS_ADMIN: writing /sys, /dev/cpu_dma_latency, namespaces.
    Privileges,
    /// Isolated CPUs (isolcpus=, nohz_full= on the kernel command line).
    Isolation,
    /// A cpuidle driver with idle states (/sys/devices/system/cpu/cpuidle).
    Cpuidle,
    /// /dev/cpu_dma_latency (PM QoS).
    PmQos,
    /// perf_event_open with software events.
    PerfSoftware,
    /// A PMU: hardware perf events (cycles, instructions, cache misses).
    PerfHardware,
    /// tracefs mounted, for the trace monitor.
    Tracefs,
    /// A hugetlb pool and transparent huge pages.
    HugePages,
    /// Memory a process may lock (RLIMIT_MEMLOCK, `ulimit -l`, unless CAP_IPC_LOCK): what
    /// pinned (mlock'd) buffers may hold.
    LockedMemory,
    /// Network namespaces (unshare CLONE_NEWNET).
    NetNamespaces,
    /// Writable /proc/irq/*/smp_affinity_list.
    IrqAffinity,
    /// The `ip` tool (iproute2).
    IpTool,
    /// Open vSwitch (`ovs-vsctl`, the openvswitch module).
    OpenVswitch,
    /// /proc/schedstat and per-task sched statistics.
    Schedstat,
    /// The kernel's dmatest module and a DMA engine.
    Dmatest,
    /// QEMU, a kernel and busybox to boot a guest (netpath=vm-*).
    VmGuest,
    /// KVM or another accelerator for that guest.
    VmAccelerator,
    /// vhost-net for a guest's network.
    VhostNet,
    /// An NVIDIA GPU and its CUDA driver (libcuda.so.1, loaded at run time).
    Gpu,
}

impl Need {
    /// Every need, in the order `perflab doctor` checks them.
    pub const ALL: [Need; 19] = [
        Need::Privileges,
        Need::Isolation,
        Need::Cpuidle,
        Need::PmQos,
        Need::PerfSoftware,
        Need::PerfHardware,
        Need::Tracefs,
        Need::HugePages,
        Need::LockedMemory,
        Need::NetNamespaces,
        Need::IrqAffinity,
        Need::IpTool,
        Need::OpenVswitch,
        Need::Schedstat,
        Need::Dmatest,
        Need::VmGuest,
        Need::VmAccelerator,
        Need::VhostNet,
        Need::Gpu,
    ];

    /// The `perflab doctor` line that checks this need.
    pub fn check(self) -> &'static str {
        match self {
            Need::Privileges => "privileges",
            Need::Isolation => "isolation",
            Need::Cpuidle => "cpuidle",
            Need::PmQos => "pm qos",
            Need::PerfSoftware => "perf software events",
            Need::PerfHardware => "perf hardware events",
            Need::Tracefs => "tracefs",
            Need::HugePages => "huge pages",
            Need::LockedMemory => "locked memory",
            Need::NetNamespaces => "network namespaces",
            Need::IrqAffinity => "irq affinity",
            Need::IpTool => "ip tool",
            Need::OpenVswitch => "openvswitch",
            Need::Schedstat => "schedstat",
            Need::Dmatest => "dmatest",
            Need::VmGuest => "vm guest",
            Need::VmAccelerator => "vm accelerator",
            Need::VhostNet => "vhost-net",
            Need::Gpu => "gpu",
        }
    }
}

/// How the report shows what a plug-in records.
#[derive(Debug)]
pub enum ReportHints {
    /// A plug-in that records nothing of its own (knobs, parsers).
    None,
    Workload(WorkloadHints),
    /// A monitor's telemetry rows.
    Rows(RowHints),
}

/// How the report shows a workload's results.
#[derive(Debug)]
pub struct WorkloadHints {
    /// The metric comparisons use by default.
    pub primary_metric: &'static str,
    /// The title of a drill-down's result section (`Context Switch Information`); `None`:
    /// `{metric} Information`.
    pub result_title: Option<&'static str>,
    /// The per-path latency table (min, avg, max, stddev, percentiles), where the workload
    /// records a round-trip histogram.
    pub latency_table: Option<LatencyTableHints>,
    /// What its thread records are, for the words of the parallelism verdict (gpuxfer's
    /// are copy engines).
    pub workers: crate::note::Workers,
}

/// Where the latency table reads its figures.
#[derive(Debug)]
pub struct LatencyTableHints {
    /// The histogram each measurement keeps (`rtt`, in ns).
    pub histogram: &'static str,
    /// The monitor whose machine totals of `NET_RX` / `NET_TX` sit beside the latencies.
    pub softirqs: &'static str,
}

/// How the report words and groups a monitor's rows.
#[derive(Debug)]
pub struct RowHints {
    /// How a row is named in "what changed" lists: the first rule whose key pattern
    /// matches; with none, `{source} {key}`.
    pub wording: &'static [Wording],
    /// What a row without a CPU is.
    pub no_cpu: NoCpu,
    /// Rows that belong to no CPU by nature and are wanted whatever CPUs a point involves
    /// (a span follows a packet across CPUs).
    pub cpu_free: bool,
    /// Keys that are settings or bookkeeping, not activity: never a change.
    pub bookkeeping: &'static [KeyMatch],
    /// Where set, only keys matching one of these are changes; the rest are bookkeeping.
    pub changes: Option<&'static [KeyMatch]>,
    /// A per-CPU section of a drill-down's summary file.
    pub per_cpu_table: Option<PerCpuTable>,
    /// A per-CPU bar chart of the HTML report, side A against side B.
    pub figure: Option<PerCpuFigure>,
    /// Rows are perf counters, shown as the report's counters table (one row per point
    /// and variant, a column per event).
    pub counter_table: bool,
    /// Rows are latency spans keyed `{set}.{span}:{stat}` (`count`, `p50`, `p90`, `p99`,
    /// `mean`, `max` in ns, `unmatched`), shown as the report's span sections. A
    /// statistic exists only in repetitions where its span's `count` is above 0, and it is
    /// the length of single events (a change's floor is one event's, not a share of the
    /// measurement).
    pub spans: bool,
}

impl RowHints {
    /// Rows worded `{source} {key}`, per CPU with machine totals, nothing else.
    pub const PLAIN: RowHints = RowHints {
        wording: &[],
        no_cpu: NoCpu::MachineTotal,
        cpu_free: false,
        bookkeeping: &[],
        changes: None,
        per_cpu_table: None,
        figure: None,
        counter_table: false,
        spans: false,
    };
}

/// What a telemetry row without a CPU (`cpu: None`) stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoCpu {
    /// The total over the machine's CPUs: said "(all CPUs)".
    MachineTotal,
    /// A figure with no CPU by nature (a process's counters, a thread): said as is.
    Unattached,
}

/// Which keys a hint applies to. `head` and `tail` are the parts a template can use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyMatch {
    /// Every key: head is the key, tail empty.
    Any,
    /// This key.
    Exact(&'static str),
    /// Keys starting with it: head is the prefix, tail the rest.
    Prefix(&'static str),
    /// Keys ending with it: head is the rest, tail the suffix.
    Suffix(&'static str),
    /// Keys of ASCII digits only (numbered IRQs).
    Digits,
    /// Keys holding the character: head before its first occurrence, tail after.
    Split(char),
    /// Keys holding the character with something on both sides: split at the last one.
    RSplit(char),
}

impl KeyMatch {
    /// `(head, tail)` where the key matches.
    pub fn split(self, key: &str) -> Option<(&str, &str)> {
        match self {
            KeyMatch::Any => Some((key, "")),
            KeyMatch::Exact(k) => (key == k).then_some((key, "")),
            KeyMatch::Prefix(p) => key.strip_prefix(p).map(|t| (p, t)),
            KeyMatch::Suffix(s) => key.strip_suffix(s).map(|h| (h, s)),
            KeyMatch::Digits => {
                (!key.is_empty() && key.bytes().all(|c| c.is_ascii_digit())).then_some((key, ""))
            }
            KeyMatch::Split(c) => key.split_once(c),
            KeyMatch::RSplit(c) => key
                .rsplit_once(c)
                .filter(|(h, t)| !h.is_empty() && !t.is_empty()),
        }
    }

    pub fn matches(self, key: &str) -> bool {
        self.split(key).is_some()
    }
}

/// One wording rule: for keys matching `key` (and, with `needs_label`, rows whose label
/// has a word), the row is called `text` with `{key}`, `{head}`, `{tail}`, `{source}` and
/// `{device}` (the label's last word) filled in.
#[derive(Clone, Copy, Debug)]
pub struct Wording {
    pub key: KeyMatch,
    pub needs_label: bool,
    pub text: &'static str,
}

impl Wording {
    pub const fn new(key: KeyMatch, text: &'static str) -> Self {
        Self {
            key,
            needs_label: false,
            text,
        }
    }

    /// The rule only for rows whose label has a word (`{device}` is then defined).
    pub const fn with_label(key: KeyMatch, text: &'static str) -> Self {
        Self {
            key,
            needs_label: true,
            text,
        }
    }
}

/// What a row is called, in the words of its source: `hints`' first matching rule, else
/// `{source} {key}`. The CPU is not part of it.
pub fn word_row(hints: Option<&RowHints>, source: &str, key: &str, label: &str) -> String {
    let device = label.split_whitespace().last();
    let rules = hints.map_or(&[][..], |h| h.wording);
    for rule in rules {
        if rule.needs_label && device.is_none() {
            continue;
        }
        if let Some((head, tail)) = rule.key.split(key) {
            return fill(
                rule.text,
                &[
                    ("{key}", key),
                    ("{head}", head),
                    ("{tail}", tail),
                    ("{source}", source),
                    ("{device}", device.unwrap_or("")),
                ],
            );
        }
    }
    format!("{source} {key}")
}

fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len() + 16);
    let mut rest = template;
    while let Some(at) = rest.find('{') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        match values.iter().find(|(name, _)| rest.starts_with(name)) {
            Some((name, value)) => {
                out.push_str(value);
                rest = &rest[name.len()..];
            }
            None => {
                out.push('{');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// A per-CPU section of a drill-down's summary file: `title : {variant}`, then each CPU's
/// lines in the layout.
#[derive(Debug)]
pub struct PerCpuTable {
    pub title: &'static str,
    pub layout: PerCpuLayout,
}

#[derive(Debug)]
pub enum PerCpuLayout {
    /// `CPU n: KEY [label] = N times` for each non-zero row, then `CPU n: {total} = N`,
    /// the median of the per-repetition totals.
    Counts { total: &'static str },
    /// Keys `{state}:usage`, `{state}:time` (µs) and `{state}:disabled`: one line per
    /// state with its status, entries and time.
    States,
}

/// A per-CPU bar chart: the median per-measurement sum of the matching rows of each CPU.
#[derive(Debug)]
pub struct PerCpuFigure {
    /// `Interrupts`: the chart is "{what} per CPU: B vs A".
    pub what: &'static str,
    pub y_label: &'static str,
    /// Rows summed per CPU.
    pub keys: KeyMatch,
    /// Applied to the sums (µs to ms: 1e-3).
    pub scale: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    const HINTS: RowHints = RowHints {
        wording: &[
            Wording::with_label(KeyMatch::Digits, "IRQ {key} ({device})"),
            Wording::new(KeyMatch::Digits, "IRQ {key}"),
            Wording::new(KeyMatch::Suffix(":time"), "{head} residency"),
            Wording::new(KeyMatch::Prefix("task:"), "{tail} runtime"),
            Wording::new(KeyMatch::Split(':'), "{head} {tail}"),
            Wording::new(KeyMatch::Any, "{key} things of {source}"),
        ],
        ..RowHints::PLAIN
    };

    #[test]
    fn the_first_matching_rule_words_the_row() {
        let w = |key, label| word_row(Some(&HINTS), "src", key, label);
        assert_eq!(w("24", "IR-PCI-MSI eth0"), "IRQ 24 (eth0)");
        assert_eq!(w("24", "  "), "IRQ 24");
        assert_eq!(w("C1:time", ""), "C1 residency");
        assert_eq!(w(":time", ""), " residency");
        assert_eq!(w("task:kworker/1:1", ""), "kworker/1:1 runtime");
        assert_eq!(w("a:b", ""), "a b");
        assert_eq!(w("LOC", ""), "LOC things of src");
        assert_eq!(word_row(None, "vmstat", "pgfault", ""), "vmstat pgfault");
        let none = RowHints::PLAIN;
        assert_eq!(word_row(Some(&none), "x", "k", ""), "x k");
    }

    #[test]
    fn templates_keep_unknown_braces() {
        assert_eq!(fill("{x} {key}", &[("{key}", "k")]), "{x} k");
        assert_eq!(fill("{", &[]), "{");
    }

    #[test]
    fn key_patterns_split_where_they_say() {
        assert_eq!(KeyMatch::RSplit(':').split("a.b:p50"), Some(("a.b", "p50")));
        assert_eq!(KeyMatch::RSplit(':').split("a:"), None);
        assert_eq!(KeyMatch::Prefix("rcu:").split("rcu:"), Some(("rcu:", "")));
        assert_eq!(KeyMatch::Prefix("rcu:").split("rc"), None);
        assert!(KeyMatch::Exact("held").matches("held"));
        assert!(!KeyMatch::Digits.matches(""));
    }
}
