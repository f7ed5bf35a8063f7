//! What each number rests on: which repetitions carried which monitors (the disturbing
//! ones run only in telemetry repetitions, never around a result), and which measurements
//! ran while a knob of their variant did not hold.

use std::collections::BTreeMap;

use perflab_core::record::{MeasurementRecord, MeasurementStatus, Role};
use perflab_core::ParamRoles;

/// One line per role and monitor set, e.g. "headline repetitions (10 of 12): interrupts,
/// softirqs; telemetry repetitions (2 of 12, never used as results): interrupts, …,
/// counters". Empty when nothing was measured, or when no measurement recorded its
/// monitors (runs stored before perflab kept them: nothing is known to say).
pub fn monitor_lines<'a>(ms: impl IntoIterator<Item = &'a MeasurementRecord>) -> Vec<String> {
    let ms: Vec<&MeasurementRecord> = ms.into_iter().collect();
    if ms.iter().all(|m| m.monitors.is_empty()) {
        return Vec::new();
    }
    let total = ms.len();
    let mut groups: BTreeMap<(Role, Vec<String>), usize> = BTreeMap::new();
    for m in ms {
        *groups.entry((m.role, m.monitors.clone())).or_default() += 1;
    }
    groups
        .into_iter()
        .map(|((role, monitors), n)| {
            let what = match role {
                Role::Headline => format!("headline repetitions ({n} of {total})"),
                Role::Telemetry => format!(
                    "telemetry repetitions ({n} of {total}; they carry the monitors that \
                     disturb the workload and are never used as results)"
                ),
            };
            let list = if monitors.is_empty() {
                "no monitor recorded".to_string()
            } else {
                monitors.join(", ")
            };
            format!("monitors: {what}: {list}")
        })
        .collect()
}

/// One line per ineffective measurement: where (each value in its role's unit), which
/// variant, and why.
pub fn ineffective_lines<'a>(
    roles: &ParamRoles,
    ms: impl IntoIterator<Item = &'a MeasurementRecord>,
) -> Vec<String> {
    status_lines(roles, ms, |s| match s {
        MeasurementStatus::Ineffective(why) => Some(why),
        _ => None,
    })
}

/// One line per disturbed measurement: where, which variant, and how much other work took.
pub fn disturbed_lines<'a>(
    roles: &ParamRoles,
    ms: impl IntoIterator<Item = &'a MeasurementRecord>,
) -> Vec<String> {
    status_lines(roles, ms, |s| match s {
        MeasurementStatus::Disturbed(why) => Some(why),
        _ => None,
    })
}

/// `seq N [variant] point rep R: why` for each measurement whose status `why_of` picks.
fn status_lines<'a>(
    roles: &ParamRoles,
    ms: impl IntoIterator<Item = &'a MeasurementRecord>,
    why_of: impl Fn(&MeasurementStatus) -> Option<&String>,
) -> Vec<String> {
    ms.into_iter()
        .filter_map(|m| {
            let why = why_of(&m.status)?;
            Some(format!(
                "seq {} [{}] {} rep {}: {why}",
                m.seq,
                m.variant,
                roles.describe(&m.params),
                m.rep
            ))
        })
        .collect()
}

/// The notes a table over `ms` carries: the monitor coverage, and a count of the
/// ineffective measurements with the first reason (the full list is in `show`).
pub fn table_notes<'a>(
    roles: &ParamRoles,
    ms: impl IntoIterator<Item = &'a MeasurementRecord>,
) -> Vec<String> {
    let ms: Vec<&MeasurementRecord> = ms.into_iter().collect();
    let mut notes = monitor_lines(ms.iter().copied());
    let ineffective = ineffective_lines(roles, ms.iter().copied());
    if let Some(first) = ineffective.first() {
        notes.push(format!(
            "INEFFECTIVE: {} measurement(s) ran while a knob of their variant did not hold \
             and are not counted as that variant; first: {first}",
            ineffective.len()
        ));
    }
    let disturbed = disturbed_lines(roles, ms.iter().copied());
    if let Some(first) = disturbed.first() {
        notes.push(format!(
            "DISTURBED: {} measurement(s) ran while other work took more of their CPUs than \
             the run allows and are not counted; first: {first}",
            disturbed.len()
        ));
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(
        seq: u32,
        role: Role,
        monitors: &[&str],
        status: MeasurementStatus,
    ) -> MeasurementRecord {
        MeasurementRecord {
            seq,
            point: 0,
            params: Default::default(),
            variant: "poll".into(),
            rep: seq,
            status,
            started_at: 0.0,
            elapsed_s: 1.0,
            output: Default::default(),
            telemetry: Vec::new(),
            role,
            monitors: monitors.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn roles_and_monitor_sets_are_counted_apart() {
        let ms = vec![
            rec(0, Role::Headline, &["interrupts"], MeasurementStatus::Ok),
            rec(1, Role::Headline, &["interrupts"], MeasurementStatus::Ok),
            rec(
                2,
                Role::Telemetry,
                &["interrupts", "counters"],
                MeasurementStatus::Ok,
            ),
            rec(3, Role::Headline, &[], MeasurementStatus::Ok),
        ];
        assert_eq!(
            monitor_lines(&ms),
            [
                "monitors: headline repetitions (1 of 4): no monitor recorded",
                "monitors: headline repetitions (2 of 4): interrupts",
                "monitors: telemetry repetitions (1 of 4; they carry the monitors that \
                 disturb the workload and are never used as results): interrupts, counters",
            ]
        );
    }

    #[test]
    fn runs_that_recorded_no_monitors_get_no_line() {
        let ms = vec![rec(0, Role::Headline, &[], MeasurementStatus::Ok)];
        assert!(monitor_lines(&ms).is_empty());
    }

    #[test]
    fn ineffective_measurements_are_listed_with_their_reason() {
        let why = "cpuidle=poll-only: disabled state1 (haltpoll) was entered 1416 times";
        let ms = vec![
            rec(0, Role::Headline, &[], MeasurementStatus::Ok),
            rec(
                1,
                Role::Headline,
                &[],
                MeasurementStatus::Ineffective(why.into()),
            ),
        ];
        let lines = ineffective_lines(&ParamRoles::default(), &ms);
        assert_eq!(lines.len(), 1);
        assert!(lines[0].starts_with("seq 1 [poll]"), "{}", lines[0]);
        assert!(lines[0].ends_with(why));
        let notes = table_notes(&ParamRoles::default(), &ms);
        assert!(notes
            .last()
            .unwrap()
            .starts_with("INEFFECTIVE: 1 measurement(s)"));
    }
}
