//! cpuidle: the idle driver and the idle states of each CPU
//! (`devices/system/cpu/cpuN/cpuidle/stateK/`).

use crate::error::SysError;
use crate::root::SysRoot;

/// One idle state of one CPU, with its cumulative counters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdleState {
    pub index: u32,
    pub name: String,
    pub desc: String,
    pub latency_us: u64,
    pub residency_us: u64,
    pub disabled: bool,
    pub usage: u64,
    pub time_us: u64,
}

impl IdleState {
    /// A polling state: the CPU spins instead of halting, so a wakeup needs no IPI.
    /// sysfs has no flag for CPUIDLE_FLAG_POLLING; the kernel's polling states are named
    /// `POLL` (x86, drivers/cpuidle/poll_state.c) and `snooze` (POWER, pseries/powernv).
    pub fn is_polling(&self) -> bool {
        let n = self.name.to_ascii_lowercase();
        n == "poll"
            || n == "snooze"
            || self
                .desc
                .to_ascii_uppercase()
                .starts_with("CPUIDLE CORE POLL")
    }
}

/// The current idle driver, or `None` when the kernel runs without one ("none").
pub fn driver(sys: &SysRoot) -> Option<String> {
    sys.read_trimmed("sys/devices/system/cpu/cpuidle/current_driver")
        .ok()
        .filter(|d| !d.is_empty() && d != "none")
}

/// What is known of how an idle driver treats a state's `disable` file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DisableEffect {
    /// The kernel keeps a disabled state out of the governor's choice.
    Honoured,
    /// The driver accepts the write and goes on entering the state: a variant that
    /// disables states measures the same idle as one that does not.
    Ignored,
    /// Not known for this driver: only the state's usage counter during a measurement
    /// tells (perflab checks it after every measurement of a cpuidle variant).
    Unknown,
}

/// Drivers seen honouring `disable` on real machines (the fixture trees under
/// tests/fixtures were captured from them).
const HONOURS_DISABLE: &[&str] = &[
    "intel_idle",
    "acpi_idle",
    "powernv_idle",
    "pseries_idle",
    "psci_idle",
];

/// Drivers seen ignoring it: KVM guests' `haltpoll` (with its haltpoll governor) entered
/// a "disabled" haltpoll state 1,416 times in a 10 s poll-only measurement.
const IGNORES_DISABLE: &[&str] = &["haltpoll"];

/// How `driver` treats `disable`, so that a setting which cannot take effect is said
/// before anything is measured rather than discovered after.
pub fn disable_effect(driver: &str) -> DisableEffect {
    if IGNORES_DISABLE.contains(&driver) {
        DisableEffect::Ignored
    } else if HONOURS_DISABLE.contains(&driver) {
        DisableEffect::Honoured
    } else {
        DisableEffect::Unknown
    }
}

/// The current idle governor, if the file exists.
pub fn governor(sys: &SysRoot) -> Option<String> {
    sys.read_trimmed("sys/devices/system/cpu/cpuidle/current_governor")
        .or_else(|_| sys.read_trimmed("sys/devices/system/cpu/cpuidle/current_governor_ro"))
        .ok()
        .filter(|g| !g.is_empty())
}

/// Directory of a CPU's idle states, relative to the root.
pub fn state_dir(cpu: u32, index: u32) -> String {
    format!("sys/devices/system/cpu/cpu{cpu}/cpuidle/state{index}")
}

/// Reads all idle states of a CPU. A CPU without a cpuidle directory has no states.
pub fn states(sys: &SysRoot, cpu: u32) -> Result<Vec<IdleState>, SysError> {
    let dir = format!("sys/devices/system/cpu/cpu{cpu}/cpuidle");
    let names = match sys.list_dir(&dir) {
        Ok(n) => n,
        Err(e) if e.is_not_found() => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut indices: Vec<u32> = names
        .iter()
        .filter_map(|n| n.strip_prefix("state")?.parse().ok())
        .collect();
    indices.sort_unstable();
    let mut out = Vec::with_capacity(indices.len());
    for index in indices {
        let d = state_dir(cpu, index);
        let num = |f: &str| -> Result<u64, SysError> { sys.read_parsed(&format!("{d}/{f}")) };
        out.push(IdleState {
            index,
            name: sys.read_trimmed(&format!("{d}/name"))?,
            desc: sys.read_trimmed(&format!("{d}/desc")).unwrap_or_default(),
            latency_us: num("latency").unwrap_or(0),
            residency_us: num("residency").unwrap_or(0),
            disabled: num("disable")? != 0,
            usage: num("usage")?,
            time_us: num("time")?,
        });
    }
    Ok(out)
}
