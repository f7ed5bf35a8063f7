//! Did an intent's telemetry move between the two sides of one point? Each check reads the
//! measurements' own rows and says `Void` with the figures it read, `Moved`, or `Unknown`
//! when the telemetry it needs was not recorded.

use perflab_core::{Intent, IrqSet};
use perflab_store::MeasurementRecord;

/// What the telemetry of one intent says about a comparison.
#[derive(Clone, Debug, PartialEq)]
pub enum Judged {
    /// Nothing the setting was meant to move moved: the reason, with the figures.
    Void(String),
    Moved,
    /// The telemetry the check needs was not recorded on a side.
    Unknown,
}

/// A side: its variant's name, its measurements at the point, and all its measurements
/// in the run (a setting the kernel ignored at one point is ignored at every point).
pub type Side<'a, 'r> = (
    &'a str,
    &'a [&'r MeasurementRecord],
    &'a [&'r MeasurementRecord],
);

/// Judges `intent` with `with` the side that holds the setting, `without` the other.
pub fn judge_intent(intent: &Intent, with: Side, without: Side) -> Judged {
    match intent {
        Intent::IdleStates => idle_states(with, without),
        Intent::IrqsMoved { irqs, to } => irqs_moved(irqs, to, with, without),
        Intent::HugePages => huge_pages(with, without),
    }
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(match n % 2 {
        1 => v[n / 2],
        _ => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    })
}

/// Per measured CPU rows of `source` whose key passes `keep`, summed per measurement;
/// `None` for a measurement that recorded no such row.
fn per_measurement(
    side: &[&MeasurementRecord],
    source: &str,
    keep: impl Fn(&str, &str, u32) -> bool,
) -> Vec<Option<f64>> {
    side.iter()
        .map(|r| {
            let rows: Vec<f64> = r
                .telemetry
                .iter()
                .filter(|t| t.source == source)
                .filter_map(|t| Some((t, t.cpu?)))
                .filter(|(t, cpu)| keep(&t.key, &t.label, *cpu))
                .map(|(t, _)| t.value)
                .collect();
            (!rows.is_empty()).then(|| rows.iter().sum())
        })
        .collect()
}

/// The idle states (names) with their `disabled` flag on a side: disabled when any
/// measured CPU of any of its measurements read it disabled.
fn disabled_flags(side: &[&MeasurementRecord]) -> std::collections::BTreeMap<String, bool> {
    let mut out = std::collections::BTreeMap::new();
    for t in side
        .iter()
        .flat_map(|r| &r.telemetry)
        .filter(|t| t.source == "cpuidle" && t.cpu.is_some())
    {
        if let Some(name) = t.key.strip_suffix(":disabled") {
            *out.entry(name.to_string()).or_insert(false) |= t.value >= 0.5;
        }
    }
    out
}

/// `cpuidle`: the states one side disables and the other allows must be entered on the
/// side that allows them, and never on the side that disables them.
fn idle_states(with: Side, without: Side) -> Judged {
    let (fa, fb) = (disabled_flags(with.1), disabled_flags(without.1));
    if fa.is_empty() || fb.is_empty() {
        return Judged::Unknown;
    }
    let differ: Vec<(&String, bool)> = fa
        .iter()
        .filter(|(n, d)| fb.get(*n).is_some_and(|o| o != *d))
        .map(|(n, d)| (n, *d))
        .collect();
    if differ.is_empty() {
        return Judged::Void(format!(
            "{} and {} ran with the same idle states enabled",
            with.0, without.0
        ));
    }
    let mut reasons = Vec::new();
    // The states no side entered, said in one sentence (C1, C1E and C6 of an intel_idle
    // machine read alike: a sentence each made idle-ipi's mail 20 lines of void notes).
    let mut never: Vec<((&str, &str), Vec<&str>)> = Vec::new();
    for (state, disabled_in_with) in differ {
        let (off, on) = match disabled_in_with {
            true => (with, without),
            false => (without, with),
        };
        let usage = format!("{state}:usage");
        let entries = |s: Side| -> Vec<f64> {
            per_measurement(s.1, "cpuidle", |k, _, _| k == usage)
                .into_iter()
                .flatten()
                .collect()
        };
        let (e_off, e_on) = (entries(off), entries(on));
        let Some(m_on) = median(e_on.clone()) else {
            return Judged::Unknown;
        };
        let entered = e_off.iter().filter(|&&e| e > 0.0).count();
        let in_run = entries((off.0, off.2, off.2));
        let entered_in_run = in_run.iter().filter(|&&e| e > 0.0).count();
        if entered == 0 && entered_in_run > 0 {
            reasons.push(format!(
                "{state} was entered in {entered_in_run} of {} measurements of {} in this \
                 run (none at this point), where it is disabled: the idle driver ignores \
                 `disable`, so {} ran with the idle states of {}",
                in_run.len(),
                off.0,
                off.0,
                on.0
            ));
        } else if entered > 0 {
            reasons.push(format!(
                "{state} was entered in {entered} of {} measurements of {}, where it is \
                 disabled: the idle driver ignores `disable`, so {} ran with the idle states \
                 of {} ({} there: median {} entries per measurement on the measured CPUs)",
                e_off.len(),
                off.0,
                off.0,
                on.0,
                on.0,
                fmt_count(m_on)
            ));
        } else if m_on == 0.0 {
            match never.iter_mut().find(|(sides, _)| *sides == (on.0, off.0)) {
                Some((_, states)) => states.push(state),
                None => never.push(((on.0, off.0), vec![state])),
            }
        } else {
            return Judged::Moved;
        }
    }
    reasons.extend(
        never
            .iter()
            .filter_map(|(sides, states)| never_entered(*sides, states)),
    );
    Judged::Void(reasons.join("; "))
}

/// The states neither side entered, `on` allowing them and `off` not, in one sentence.
fn never_entered((on, off): (&str, &str), states: &[&str]) -> Option<String> {
    Some(match states.split_last()? {
        (one, []) => format!(
            "no idle entries in either variant: {one} was entered a median of 0 times per \
             measurement on the measured CPUs in {on}, where it is enabled, and never in \
             {off}, so disabling it changed nothing"
        ),
        (last, init) => format!(
            "no idle entries in either variant: {on} entered {} and {last} (enabled there) a \
             median of 0 times per measurement on the measured CPUs, {off} never, so \
             disabling them changed nothing",
            init.join(", ")
        ),
    })
}

/// `irqaffinity`: the steered interrupts' counts on the measured CPUs must differ between
/// the sides; none on either side means there was nothing to move.
fn irqs_moved(irqs: &IrqSet, to: &[u32], with: Side, without: Side) -> Judged {
    let count = |s: Side| -> Option<f64> {
        median(
            per_measurement(s.1, "interrupts", |k, l, _| irqs.holds(k, l))
                .into_iter()
                .map(|v| v.unwrap_or(0.0))
                .collect(),
        )
    };
    // A measurement that recorded interrupts but no row of these IRQs on its CPUs had none.
    let recorded = |s: Side| {
        s.1.iter()
            .any(|r| r.telemetry.iter().any(|t| t.source == "interrupts"))
    };
    if !recorded(with) || !recorded(without) {
        return Judged::Unknown;
    }
    let (Some(w), Some(wo)) = (count(with), count(without)) else {
        return Judged::Unknown;
    };
    let cpus = measured_cpus(with.1);
    let to = perflab_sys::format_cpu_list(to);
    if w == 0.0 && wo == 0.0 {
        return Judged::Void(format!(
            "no interrupt moved: no device interrupt of those {} steers to CPU {to} was \
             handled on the measured CPU {cpus} in either variant (median 0 per \
             measurement), so there was nothing to move",
            with.0
        ));
    }
    if w == wo {
        return Judged::Void(format!(
            "no interrupt moved: the device interrupts {} steers to CPU {to} were handled \
             on the measured CPU {cpus} as often in both variants (median {} per \
             measurement)",
            with.0,
            fmt_count(w)
        ));
    }
    Judged::Moved
}

fn measured_cpus(side: &[&MeasurementRecord]) -> String {
    let mut cpus: Vec<u32> = side
        .iter()
        .flat_map(|r| &r.telemetry)
        .filter(|t| t.source == "interrupts")
        .filter_map(|t| t.cpu)
        .collect();
    cpus.sort_unstable();
    cpus.dedup();
    perflab_sys::format_cpu_list(&cpus)
}

/// A workload's page backing: the share of its buffers on huge pages must differ.
fn huge_pages(with: Side, without: Side) -> Judged {
    let share = |s: Side| {
        median(
            s.1.iter()
                .filter_map(|r| r.output.metric("huge_fraction"))
                .map(|m| m.value)
                .filter(|v| v.is_finite())
                .collect(),
        )
    };
    let (Some(w), Some(wo)) = (share(with), share(without)) else {
        return Judged::Unknown;
    };
    // Shares are read from smaps to the page: a hundredth apart is the same backing.
    if (w - wo).abs() >= 0.01 {
        return Judged::Moved;
    }
    let what = match w < 0.01 {
        true => "no huge page used in either variant".to_string(),
        false => "the same share of huge pages in both variants".to_string(),
    };
    Judged::Void(format!(
        "{what}: huge_fraction {} {:.3}, {} {:.3} (median share of the buffers on huge \
         pages, from smaps)",
        with.0, w, without.0, wo
    ))
}

fn fmt_count(v: f64) -> String {
    match v.fract() == 0.0 {
        true => format!("{v:.0}"),
        false => format!("{v:.1}"),
    }
}
