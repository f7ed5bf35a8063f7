//! `cpuidle=poll-only|all|states:NAME,...`: which idle states the online CPUs may enter,
//! through `cpuN/cpuidle/stateK/disable`.

use perflab_core::{Descriptor, Kind, Need, Needs, ParamKind, ParamSpec, ReportHints};
use std::collections::BTreeSet;

use perflab_core::Unavailable;
use perflab_sys::cpuidle::{self, IdleState};
use perflab_sys::{SysRoot, Topology};

use perflab_core::WorkloadOutput;

use crate::effect::Verified;
use crate::error::KnobError;
use crate::files::write_files;
use crate::journal::Journal;
use crate::knob::{EffectProbe, Knob, KnobGuard};

pub static DESCRIPTOR: Descriptor = Descriptor {
    kind: Kind::Knob,
    name: "cpuidle",
    help: "idle states of every online CPU: poll-only, all, or states:NAME[,NAME...]",
    params: &[ParamSpec {
        name: "value",
        role: perflab_core::ParamRole::Plain,
        help: "poll-only, all, or states:NAME[,NAME...]",
        kind: ParamKind::Text { max_len: 4096 },
        default: None,
    }],
    needs: Needs::all(&[Need::Privileges, Need::Cpuidle]),
    report: ReportHints::None,
};

/// Which states stay enabled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IdleMode {
    /// Only the polling state(s) (`POLL` on x86, `snooze` on POWER): no wakeup needs an IPI.
    PollOnly,
    /// Every state.
    All,
    /// Exactly the states named (matched without regard to case); all others disabled.
    States(Vec<String>),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuidleKnob {
    pub mode: IdleMode,
}

/// The fact an applied cpuidle setting publishes: `poll-only`, `all`, `states:C1,C1E`.
pub const FACT: &str = "cpuidle.mode";

const VALID: &str = "poll-only, all, or states:NAME[,NAME...]";

impl CpuidleKnob {
    pub fn parse(value: &str) -> Result<Self, KnobError> {
        let invalid = |reason: String| KnobError::InvalidValue {
            knob: "cpuidle".into(),
            value: value.into(),
            reason,
        };
        let mode = match value.trim() {
            "poll-only" => IdleMode::PollOnly,
            "all" => IdleMode::All,
            v => match v.strip_prefix("states:") {
                Some(list) => {
                    let names: Vec<String> = list
                        .split(',')
                        .map(str::trim)
                        .filter(|n| !n.is_empty())
                        .map(String::from)
                        .collect();
                    if names.is_empty() {
                        return Err(invalid(format!("name at least one state ({VALID})")));
                    }
                    IdleMode::States(names)
                }
                None => return Err(invalid(format!("expected {VALID}"))),
            },
        };
        Ok(Self { mode })
    }

    fn enabled(&self, state: &IdleState) -> bool {
        match &self.mode {
            IdleMode::PollOnly => state.is_polling(),
            IdleMode::All => true,
            IdleMode::States(names) => names.iter().any(|n| n.eq_ignore_ascii_case(&state.name)),
        }
    }

    /// The `disable` files whose value must change, with the value each needs.
    fn plan(&self, sys: &SysRoot) -> Result<Vec<(String, Vec<u8>)>, Unavailable> {
        if cpuidle::driver(sys).is_none() {
            // Without a driver the kernel's default idle is all the idle there is, so
            // "every state enabled" already holds and needs no write; only modes that
            // restrict the states are impossible.
            if self.mode == IdleMode::All {
                return Ok(Vec::new());
            }
            return Err(Unavailable::new("no cpuidle driver").with_hint(
                "the kernel idles without one (a VM, or idle=/cpuidle.off= on its command line)",
            ));
        }
        let topology = Topology::read(sys)
            .map_err(|e| Unavailable::new(format!("cannot read the online CPUs: {e}")))?;
        let mut per_cpu = Vec::new();
        for &cpu in &topology.online {
            let states = cpuidle::states(sys, cpu).map_err(|e| Unavailable::new(e.to_string()))?;
            if !states.is_empty() {
                per_cpu.push((cpu, states));
            }
        }
        if per_cpu.is_empty() {
            return Err(Unavailable::new("no online CPU has cpuidle states"));
        }
        match &self.mode {
            IdleMode::PollOnly => {
                if let Some((cpu, states)) = per_cpu
                    .iter()
                    .find(|(_, s)| !s.iter().any(IdleState::is_polling))
                {
                    return Err(Unavailable::new(format!(
                        "cpu{cpu} has no polling idle state (POLL or snooze); it has {}",
                        state_names(states.iter())
                    )));
                }
            }
            IdleMode::All => {}
            IdleMode::States(names) => {
                let all = per_cpu.iter().flat_map(|(_, s)| s.iter());
                for name in names {
                    if !all.clone().any(|s| s.name.eq_ignore_ascii_case(name)) {
                        return Err(Unavailable::new(format!(
                            "no idle state named {name:?}; the states are {}",
                            state_names(all)
                        )));
                    }
                }
            }
        }
        let mut writes = Vec::new();
        for (cpu, states) in &per_cpu {
            for state in states {
                let disable = !self.enabled(state);
                if disable != state.disabled {
                    let rel = format!("{}/disable", cpuidle::state_dir(*cpu, state.index));
                    writes.push((
                        rel,
                        if disable {
                            b"1".to_vec()
                        } else {
                            b"0".to_vec()
                        },
                    ));
                }
            }
        }
        Ok(writes)
    }
}

/// Distinct state names in order of first appearance: `POLL, C1, C1E, C6`.
fn state_names<'a>(states: impl Iterator<Item = &'a IdleState>) -> String {
    let mut seen = BTreeSet::new();
    let names: Vec<&str> = states
        .filter(|s| seen.insert(s.name.as_str()))
        .map(|s| s.name.as_str())
        .collect();
    names.join(", ")
}

impl Knob for CpuidleKnob {
    fn name(&self) -> String {
        match &self.mode {
            IdleMode::PollOnly => "cpuidle=poll-only".into(),
            IdleMode::All => "cpuidle=all".into(),
            IdleMode::States(names) => format!("cpuidle=states:{}", names.join(",")),
        }
    }

    fn check(&self, sys: &SysRoot) -> Result<(), Unavailable> {
        let writes = self.plan(sys)?;
        if let Some((rel, _)) = writes.iter().find(|(rel, _)| !sys.writable(rel)) {
            return Err(Unavailable::new(format!(
                "{} is not writable: needs root",
                sys.path(rel).display()
            ))
            .with_hint("run perflab as root"));
        }
        Ok(())
    }

    fn intent(&self) -> Option<perflab_core::Intent> {
        Some(perflab_core::Intent::IdleStates)
    }

    fn forecast(&self, sys: &SysRoot) -> Option<String> {
        // The same probe `perflab doctor`'s cpuidle line renders.
        let found = perflab_sys::probe::cpuidle::cpuidle(sys)?;
        let driver = found.driver;
        let disabled: Vec<IdleState> = found
            .states
            .ok()?
            .into_iter()
            .filter(|s| !self.enabled(s))
            .collect();
        if disabled.is_empty() {
            return None;
        }
        let names = state_names(disabled.iter());
        match found.effect {
            cpuidle::DisableEffect::Ignored => Some(format!(
                "the {driver} driver ignores `disable`: {names} will still be entered, so \
                 this variant's measurements will be recorded ineffective (see perflab doctor)"
            )),
            cpuidle::DisableEffect::Unknown => Some(format!(
                "whether the {driver} driver honours `disable` is not known: each \
                 measurement checks that {names} was not entered, and is recorded \
                 ineffective if it was"
            )),
            cpuidle::DisableEffect::Honoured => None,
        }
    }

    fn targets(&self, sys: &SysRoot) -> Vec<String> {
        self.plan(sys)
            .map(|writes| writes.into_iter().map(|(rel, _)| rel).collect())
            .unwrap_or_default()
    }

    fn apply(&self, sys: &SysRoot, journal: &Journal) -> Result<Box<dyn KnobGuard>, KnobError> {
        let writes = self
            .plan(sys)
            .map_err(|u| KnobError::unavailable(self.name(), u))?;
        let guard = Box::new(write_files(sys, journal, &self.name(), &writes)?);
        let knob = self.clone();
        // Which idle states a measurement ran with: the trace monitor picks its idle-state
        // span set where a variant sets them (idle-ipi runs the ctxsw workload).
        let mode = self.name().trim_start_matches("cpuidle=").to_string();
        Ok(Box::new(
            Verified::new(guard, move |sys| {
                DisabledStates::take(&knob, sys).map(|p| Box::new(p) as Box<dyn EffectProbe>)
            })
            .with_facts(vec![(FACT.to_string(), mode)]),
        ))
    }
}

/// The usage counters of every state the knob disabled, before a measurement: a disabled
/// state must not be entered during it. The `haltpoll` driver of KVM guests accepts
/// `disable` and keeps entering the state, which turned a `poll-only` variant into
/// "poll plus haltpoll" without a word.
struct DisabledStates {
    /// (cpu, state index, state name, usage before).
    watched: Vec<(u32, u32, String, u64)>,
}

impl DisabledStates {
    fn take(knob: &CpuidleKnob, sys: &SysRoot) -> Option<Self> {
        cpuidle::driver(sys)?;
        let topology = Topology::read(sys).ok()?;
        let mut watched = Vec::new();
        for &cpu in &topology.online {
            for state in cpuidle::states(sys, cpu).unwrap_or_default() {
                if !knob.enabled(&state) {
                    watched.push((cpu, state.index, state.name.clone(), state.usage));
                }
            }
        }
        (!watched.is_empty()).then_some(Self { watched })
    }
}

impl EffectProbe for DisabledStates {
    fn verify(&self, sys: &SysRoot, _output: &WorkloadOutput) -> Result<(), String> {
        // (name, index) -> (entries, per-CPU parts); states re-enabled behind our back.
        let mut entered: Vec<(String, u32, u64, Vec<String>)> = Vec::new();
        let mut reenabled: Vec<String> = Vec::new();
        let mut unreadable: Vec<String> = Vec::new();
        // Each CPU's states read once, however many of them are watched.
        let mut read: std::collections::BTreeMap<u32, Vec<IdleState>> = Default::default();
        for (cpu, index, name, before) in &self.watched {
            let states = read
                .entry(*cpu)
                .or_insert_with(|| cpuidle::states(sys, *cpu).unwrap_or_default());
            let now = states.iter().find(|s| s.index == *index);
            let Some(now) = now else {
                unreadable.push(format!("cpu{cpu} state{index}"));
                continue;
            };
            if !now.disabled {
                reenabled.push(format!("{name} on cpu{cpu}"));
            }
            let delta = now.usage.saturating_sub(*before);
            if delta > 0 {
                match entered.iter_mut().find(|e| e.0 == *name && e.1 == *index) {
                    Some(e) => {
                        e.2 += delta;
                        e.3.push(format!("cpu{cpu} {delta}"));
                    }
                    None => entered.push((
                        name.clone(),
                        *index,
                        delta,
                        vec![format!("cpu{cpu} {delta}")],
                    )),
                }
            }
        }
        let mut why = Vec::new();
        let driver = match entered.is_empty() {
            true => String::new(),
            false => cpuidle::driver(sys)
                .map(|d| format!(": the {d} driver does not honour `disable`"))
                .unwrap_or_default(),
        };
        for (name, index, n, parts) in &entered {
            why.push(format!(
                "disabled state {name} (state{index}) was entered {n} times during the \
                 measurement ({}){driver}",
                parts.join(", "),
            ));
        }
        if !reenabled.is_empty() {
            why.push(format!(
                "re-enabled by someone else: {}",
                reenabled.join(", ")
            ));
        }
        if !unreadable.is_empty() {
            why.push(format!("could not be read back: {}", unreadable.join(", ")));
        }
        if why.is_empty() {
            Ok(())
        } else {
            Err(why.join("; "))
        }
    }
}
