//! Naming a split span's values after the fact: both backends leave `SPAN@N` (the number
//! the kernel recorded); a person reads the idle state by its cpuidle name, so a span
//! declared `names = "cpuidle"` becomes `SPAN@NAME` with the name in its label too.

use perflab_core::span_outline::SplitValue;
use perflab_sys::SysRoot;

#[cfg(doc)]
use perflab_core::span_outline::SPLIT_STAT;

use super::matcher::SpanResult;
use super::spans::{Span, SplitNames};

/// The cpuidle state names of this machine by index (CPU 0's: every CPU of the machines
/// perflab has met has the same states), empty where it has no cpuidle driver.
pub fn cpuidle_names(sys: &SysRoot) -> Vec<String> {
    (0..super::spans::MAX_SPLIT)
        .map_while(|i| {
            sys.read_trimmed(&format!(
                "sys/devices/system/cpu/cpu0/cpuidle/state{i}/name"
            ))
            .ok()
        })
        .collect()
}

/// A name fit for a row key (`haltpoll idle` → `haltpoll_idle`): the report splits keys at
/// `.`, `:` and `@`.
fn key_safe(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Renames the per-value results of spans declared with `names = "cpuidle"`: `@1` →
/// `@haltpoll_idle`, label `… [state 1: haltpoll idle]`; a value the machine has no name
/// for keeps its number (`[state 7]`). Returns, per result, the value it holds (index and
/// name) for the results of a split span's values, `None` for the others: the rows carry
/// it as a value ([`SPLIT_STAT`]), so no reader takes it back out of the label.
pub fn name_values(
    spans: &[Span],
    results: &mut [SpanResult],
    cpuidle: &[String],
) -> Vec<Option<SplitValue>> {
    results
        .iter_mut()
        .map(|r| name_value(spans, r, cpuidle))
        .collect()
}

fn name_value(spans: &[Span], r: &mut SpanResult, cpuidle: &[String]) -> Option<SplitValue> {
    let (base, value) = r.name.split_once('@')?;
    let span = spans.iter().find(|s| s.name == base)?;
    let split = span.split.as_ref()?;
    let index = value.parse::<u32>().ok()?;
    let base = base.to_string();
    let name = match split.names {
        SplitNames::Cpuidle => cpuidle.get(index as usize).cloned(),
        SplitNames::Number => None,
    };
    if split.names == SplitNames::Cpuidle {
        match &name {
            Some(n) => {
                r.name = format!("{base}@{}", key_safe(n));
                r.label = format!("{} [state {index}: {n}]", r.label);
            }
            None => r.label = format!("{} [state {index}]", r.label),
        }
    }
    Some(SplitValue { index, name })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::matcher::Matcher;
    use crate::trace::spans::built_in;

    #[test]
    fn cpuidle_names_come_from_the_machines_tree() {
        let sys = SysRoot::at(perflab_testkit::fixture("x86-intel-idle"));
        assert_eq!(cpuidle_names(&sys), ["POLL", "C1", "C1E", "C6"]);
        let sys = SysRoot::at(perflab_testkit::fixture("kvm-2vcpu"));
        assert!(cpuidle_names(&sys).is_empty());
    }

    #[test]
    fn values_take_state_names_where_known() {
        let spans = built_in("idlewake").unwrap().spans;
        let m = Matcher::new(spans.clone());
        let mut r = m.results();
        let mut one = r[0].clone();
        one.name = "ipi_idle_exit@1".into();
        one.label = "(2) IPI sent → target CPU leaves its idle state".into();
        let mut seven = one.clone();
        seven.name = "ipi_idle_exit@7".into();
        let mut unsplit = one.clone();
        unsplit.name = "sched@1".into();
        r = vec![one, seven, unsplit];
        let values = name_values(&spans, &mut r, &["POLL".into(), "haltpoll idle".into()]);
        assert_eq!(r[0].name, "ipi_idle_exit@haltpoll_idle");
        // The state travels as a value too, index and name, for the rows.
        assert_eq!(
            values,
            [
                Some(SplitValue {
                    index: 1,
                    name: Some("haltpoll idle".into())
                }),
                Some(SplitValue {
                    index: 7,
                    name: None
                }),
                None
            ]
        );
        assert_eq!(
            r[0].label,
            "(2) IPI sent → target CPU leaves its idle state [state 1: haltpoll idle]"
        );
        assert_eq!(r[1].name, "ipi_idle_exit@7");
        assert!(r[1].label.ends_with("[state 7]"));
        // `sched` has no split: an `@` in its name is not ours to rename.
        assert_eq!(r[2].name, "sched@1");
    }
}
