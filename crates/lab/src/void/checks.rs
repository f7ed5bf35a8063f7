//! Did an intent's telemetry move between the two sides of one point? Each check reads the
//! measurements' own rows and says `Void` with the figures it read, `Moved`, or `Unknown`
//! when the telemetry it needs was not recorded.

use perflab_core::{IneffectiveCount, Intent, IrqSet};
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
    // The states a side entered where it disables them, and those no side entered, each
    // said in one sentence per pair of sides (C1, C1E and C6 of an intel_idle machine read
    // alike: a sentence each made idle-ipi's mail 20 lines of void notes).
    let mut slipped: Vec<Entered> = Vec::new();
    let mut never: Vec<((&str, &str), Vec<&str>)> = Vec::new();
    for (state, disabled_in_with) in differ {
        let (off, on) = match disabled_in_with {
            true => (with, without),
            false => (without, with),
        };
        match entries_of(state, off, on) {
            None => return Judged::Unknown,
            Some(Seen::Slipped(median_on)) => {
                match slipped
                    .iter_mut()
                    .find(|e| (e.off.0, e.on.0) == (off.0, on.0))
                {
                    Some(e) => e.states.push((state, median_on)),
                    None => slipped.push(Entered {
                        off,
                        on,
                        states: vec![(state, median_on)],
                    }),
                }
            }
            Some(Seen::Never) => match never.iter_mut().find(|(s, _)| *s == (on.0, off.0)) {
                Some((_, states)) => states.push(state),
                None => never.push(((on.0, off.0), vec![state])),
            },
            Some(Seen::Moved) => return Judged::Moved,
        }
    }
    let mut reasons: Vec<String> = slipped.iter().filter_map(ignored_disable).collect();
    reasons.extend(
        never
            .iter()
            .filter_map(|(sides, states)| never_entered(*sides, states)),
    );
    Judged::Void(reasons.join("; "))
}

/// What the telemetry of the measured CPUs says of one idle state that `off` disables and
/// `on` allows.
enum Seen {
    /// `off` entered it, at this point or at another (the setting is machine-wide): with
    /// `on`'s median entries per measurement here where `off` entered it here.
    Slipped(Option<f64>),
    /// Neither side entered it here, nor `off` anywhere.
    Never,
    Moved,
}

/// How `state` was entered on each side; `None` when `on` recorded no entries of it.
fn entries_of(state: &str, off: Side, on: Side) -> Option<Seen> {
    let usage = format!("{state}:usage");
    let entries = |ms: &[&MeasurementRecord]| -> Vec<f64> {
        per_measurement(ms, "cpuidle", |k, _, _| k == usage)
            .into_iter()
            .flatten()
            .collect()
    };
    let m_on = median(entries(on.1))?;
    let entered = |ms| entries(ms).iter().any(|&e| e > 0.0);
    Some(if entered(off.1) {
        Seen::Slipped(Some(m_on))
    } else if entered(off.2) {
        Seen::Slipped(None)
    } else if m_on == 0.0 {
        Seen::Never
    } else {
        Seen::Moved
    })
}

/// The states `off` disables and entered anyway, each with `on`'s median entries here.
struct Entered<'a, 'r, 's> {
    off: Side<'a, 'r>,
    on: Side<'a, 'r>,
    states: Vec<(&'s str, Option<f64>)>,
}

/// The states `off` entered where it disables them, in one sentence. The count it gives
/// is [`IneffectiveCount`] of `off`'s measurements in the run, the count the report's
/// "Ineffective measurements" list gives: the knob's own check reads every CPU and this
/// telemetry only the measured ones, so counting these entries gave another fraction for
/// the same fact ("5 of 10 ... (none at this point)" beside the list's "12 of 12").
fn ignored_disable(e: &Entered) -> Option<String> {
    let (off, on) = (e.off.0, e.on.0);
    let names: Vec<&str> = e.states.iter().map(|(s, _)| *s).collect();
    let (states, pronoun) = match names.split_last()? {
        (one, []) => (one.to_string(), "it is"),
        (last, init) => (format!("{} and {last}", init.join(", ")), "they are"),
    };
    let mut why = Vec::new();
    let count = IneffectiveCount::of(e.off.2.iter().copied());
    if count.ineffective > 0 {
        why.push(format!("{count} of {off}, all points, were ineffective"));
    }
    let here: Vec<(&str, f64)> = e
        .states
        .iter()
        .filter_map(|(s, m)| Some((*s, (*m)?)))
        .collect();
    match here.as_slice() {
        [] => {}
        [(_, m)] if names.len() == 1 => why.push(format!(
            "{on} here: median {} entries per measurement on the measured CPUs",
            fmt_count(*m)
        )),
        many => why.push(format!(
            "{on} here, median entries per measurement on the measured CPUs: {}",
            many.iter()
                .map(|(s, m)| format!("{s} {}", fmt_count(*m)))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
    let why = match why.is_empty() {
        true => String::new(),
        false => format!(" ({})", why.join("; ")),
    };
    Some(format!(
        "{off} entered {states}, where {pronoun} disabled: the idle driver ignores \
         `disable`, so {off} ran with the idle states of {on}{why}"
    ))
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
