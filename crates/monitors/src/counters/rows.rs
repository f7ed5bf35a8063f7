//! Counter readings to telemetry rows: counts, multiplex shares, derived ratios.

use perflab_core::{TelemetryRow, Unit};

use super::events::{Event, DERIVED, PER_BYTE};
use super::scale::{Reading, Scaled};

/// The sources of the two monitors' rows (`counters`, the process; `counters-cpu`, CPUs).
pub(super) const NAME: &str = "counters";
pub(super) const CPU_NAME: &str = "counters-cpu";

/// True for the `source` of rows these monitors produce.
fn is_counters_source(source: &str) -> bool {
    source == NAME || source == CPU_NAME
}

/// One event's readings: `None` for the per-process counter, `Some(cpu)` per CPU.
pub(crate) type EventReadings<'a> = (&'a Event, Vec<(Option<u32>, Reading)>);

/// Rows for `measured` CPUs (those of the readings) and the total over all readings.
/// Per event: the count (scaled), and `{event}:running_pct` when it was multiplexed;
/// then the derived ratios where both of their events have a count.
pub(crate) fn rows(
    source: &str,
    measured: &[u32],
    user_only: bool,
    readings: &[EventReadings<'_>],
) -> Vec<TelemetryRow> {
    let suffix = if user_only { " (user space only)" } else { "" };
    let scopes = scopes(measured, readings);
    let mut out = Vec::new();
    let mut counts: Vec<(&str, Option<u32>, f64)> = Vec::new();
    for (event, parts) in readings {
        let per_scope: Vec<(Option<u32>, Scaled)> = scopes
            .iter()
            .filter_map(|&s| Some((s, scaled(parts, s)?)))
            .collect();
        for &(scope, s) in &per_scope {
            if let Some(count) = s.count {
                counts.push((event.name, scope, count));
                out.push(TelemetryRow::new(
                    source,
                    event.name,
                    format!("{}{suffix}", event.label),
                    scope,
                    event.value(count),
                    event.unit(),
                ));
            }
        }
        for &(scope, s) in &per_scope {
            if let Some(pct) = s.running_pct() {
                out.push(TelemetryRow::new(
                    source,
                    format!("{}:running_pct", event.name),
                    format!(
                        "share of enabled time {} was on a counter (count scaled by enabled/running)",
                        event.name
                    ),
                    scope,
                    pct,
                    Unit::Percent,
                ));
            }
        }
    }

    derived(source, suffix, &scopes, &counts, &mut out);
    out
}

/// The measured CPUs that have a reading, then `None` for the total.
fn scopes(measured: &[u32], readings: &[EventReadings<'_>]) -> Vec<Option<u32>> {
    let mut scopes: Vec<Option<u32>> = measured
        .iter()
        .filter(|&&c| {
            readings
                .iter()
                .any(|(_, r)| r.iter().any(|(rc, _)| *rc == Some(c)))
        })
        .map(|&c| Some(c))
        .collect();
    scopes.push(None);
    scopes
}

/// An event's reading for one CPU, or the sum of all its readings for the total.
fn scaled(parts: &[(Option<u32>, Reading)], scope: Option<u32>) -> Option<Scaled> {
    match scope {
        None if !parts.is_empty() => Some(Scaled::sum(
            &parts.iter().map(|(_, r)| r.scale()).collect::<Vec<_>>(),
        )),
        None => None,
        Some(c) => parts
            .iter()
            .find(|(rc, _)| *rc == Some(c))
            .map(|(_, r)| r.scale()),
    }
}

/// The derived ratios, per scope where both events were counted and the divisor is
/// positive.
fn derived(
    source: &str,
    suffix: &str,
    scopes: &[Option<u32>],
    counts: &[(&str, Option<u32>, f64)],
    out: &mut Vec<TelemetryRow>,
) {
    let count = |name: &str, scope: Option<u32>| {
        counts
            .iter()
            .find(|(n, s, _)| *n == name && *s == scope)
            .map(|(_, _, c)| *c)
    };
    for &(key, num, den, percent) in DERIVED {
        for &scope in scopes {
            let (Some(n), Some(d)) = (count(num, scope), count(den, scope)) else {
                continue;
            };
            if d <= 0.0 {
                continue;
            }
            let (value, unit) = if percent {
                (100.0 * n / d, Unit::Percent)
            } else {
                (n / d, Unit::Ratio)
            };
            out.push(TelemetryRow::new(
                source,
                key,
                format!("{num} / {den}{suffix}"),
                scope,
                value,
                unit,
            ));
        }
    }
}

/// Miss (and page-fault) counts per byte the workload moved: `{event}:per_byte` (Ratio)
/// for each total (`cpu: None`) such row of a counters monitor in `rows`. One miss per 64 bytes (0.0156)
/// is a miss on every cache line streamed. Nothing when `bytes` is not a positive number.
pub fn per_byte(rows: &[TelemetryRow], bytes: f64) -> Vec<TelemetryRow> {
    if !(bytes.is_finite() && bytes > 0.0) {
        return Vec::new();
    }
    rows.iter()
        .filter(|r| {
            is_counters_source(&r.source)
                && r.cpu.is_none()
                && r.unit == Unit::Count
                && PER_BYTE.contains(&r.key.as_str())
        })
        .map(|r| {
            TelemetryRow::new(
                &r.source,
                format!("{}:per_byte", r.key),
                format!("{} per byte moved", r.key),
                None,
                r.value / bytes,
                Unit::Ratio,
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::events::{EVENTS, TASK_CLOCK};
    use super::*;

    fn ev(name: &str) -> &'static Event {
        EVENTS.iter().find(|e| e.name == name).unwrap()
    }

    fn rd(value: u64, enabled: u64, running: u64) -> Reading {
        Reading {
            value,
            enabled,
            running,
        }
    }

    fn find<'a>(rows: &'a [TelemetryRow], key: &str, cpu: Option<u32>) -> Option<&'a TelemetryRow> {
        rows.iter().find(|r| r.key == key && r.cpu == cpu)
    }

    #[test]
    fn per_process_rows_scale_and_derive() {
        let readings = vec![
            (&TASK_CLOCK, vec![(None, rd(2_500_000, 10, 10))]),
            (ev("cycles"), vec![(None, rd(1000, 100, 50))]),
            (ev("instructions"), vec![(None, rd(3000, 100, 100))]),
            (ev("LLC-loads"), vec![(None, rd(400, 100, 100))]),
            (ev("LLC-load-misses"), vec![(None, rd(0, 100, 0))]),
        ];
        let rows = rows("counters", &[], false, &readings);
        let tc = find(&rows, "task-clock", None).unwrap();
        assert_eq!((tc.value, tc.unit), (2.5, Unit::Milliseconds));
        assert_eq!(find(&rows, "cycles", None).unwrap().value, 2000.0);
        let pct = find(&rows, "cycles:running_pct", None).unwrap();
        assert_eq!((pct.value, pct.unit), (50.0, Unit::Percent));
        assert!(find(&rows, "instructions:running_pct", None).is_none());
        let ipc = find(&rows, "ipc", None).unwrap();
        assert_eq!((ipc.value, ipc.unit), (1.5, Unit::Ratio));
        // Never on a counter: no count, no rate, but the 0% running share says why.
        assert!(find(&rows, "LLC-load-misses", None).is_none());
        assert!(find(&rows, "LLC-miss_rate", None).is_none());
        assert_eq!(
            find(&rows, "LLC-load-misses:running_pct", None)
                .unwrap()
                .value,
            0.0
        );
        assert!(rows
            .iter()
            .all(|r| r.source == "counters" && r.cpu.is_none()));
    }

    #[test]
    fn per_cpu_rows_report_measured_cpus_and_totals() {
        let readings = vec![
            (
                ev("cache-references"),
                vec![(Some(0), rd(100, 10, 10)), (Some(1), rd(300, 10, 5))],
            ),
            (
                ev("cache-misses"),
                vec![(Some(0), rd(10, 10, 10)), (Some(1), rd(20, 10, 10))],
            ),
        ];
        // CPU 1 is counted (it belongs to the total) but not reported on its own.
        let rows = rows("counters-cpu", &[0], true, &readings);
        assert_eq!(
            find(&rows, "cache-references", Some(0)).unwrap().value,
            100.0
        );
        assert!(find(&rows, "cache-references", Some(1)).is_none());
        assert_eq!(find(&rows, "cache-references", None).unwrap().value, 700.0);
        assert_eq!(
            find(&rows, "cache-references:running_pct", None)
                .unwrap()
                .value,
            75.0
        );
        assert!(find(&rows, "cache-references:running_pct", Some(0)).is_none());
        assert_eq!(find(&rows, "cache_miss_rate", Some(0)).unwrap().value, 10.0);
        let total = find(&rows, "cache_miss_rate", None).unwrap();
        assert!((total.value - 100.0 * 30.0 / 700.0).abs() < 1e-9);
        assert!(find(&rows, "cache-misses", None)
            .unwrap()
            .label
            .ends_with("(user space only)"));
    }

    #[test]
    fn zero_denominators_give_no_ratio() {
        let readings = vec![
            (ev("cycles"), vec![(None, rd(0, 10, 10))]),
            (ev("instructions"), vec![(None, rd(5, 10, 10))]),
        ];
        let rows = rows("counters", &[], false, &readings);
        assert!(find(&rows, "ipc", None).is_none());
        assert_eq!(find(&rows, "cycles", None).unwrap().value, 0.0);
    }

    #[test]
    fn per_byte_uses_totals_of_miss_and_fault_rows_only() {
        let t = |source: &str, key: &str, cpu, value| {
            TelemetryRow::new(source, key, "", cpu, value, Unit::Count)
        };
        let rows = vec![
            t("counters", "LLC-load-misses", None, 1024.0),
            t("counters", "LLC-load-misses", Some(0), 512.0),
            t("counters", "cycles", None, 1e9),
            t("counters", "page-faults", None, 16.0),
            t("counters-cpu", "cache-misses", None, 64.0),
            t("interrupts", "cache-misses", None, 1.0),
        ];
        let out = per_byte(&rows, 65536.0);
        let keys: Vec<(&str, &str, f64)> = out
            .iter()
            .map(|r| (r.source.as_str(), r.key.as_str(), r.value))
            .collect();
        assert_eq!(
            keys,
            [
                ("counters", "LLC-load-misses:per_byte", 1.0 / 64.0),
                ("counters", "page-faults:per_byte", 1.0 / 4096.0),
                ("counters-cpu", "cache-misses:per_byte", 1.0 / 1024.0)
            ]
        );
        assert!(out.iter().all(|r| r.unit == Unit::Ratio && r.cpu.is_none()));
        assert!(per_byte(&rows, 0.0).is_empty());
        assert!(per_byte(&rows, f64::NAN).is_empty());
    }
}
