//! "What changed with it": for a difference that is real, the telemetry on the CPUs
//! involved that changed most between the two sides, e.g. `DBL interrupts on CPU 24: -27%`
//! or `stop2 residency on CPU 4: +40 ms`.
//!
//! Every telemetry row (source, key, CPU) is reduced to its median over each side's
//! successful repetitions, as the drill-downs do (a row missing from a repetition that
//! recorded its source counts 0 there). Rows are ranked by a score that puts counts and
//! times on one scale, |ln((b + f) / (a + f))|, where a and b are the medians and f a floor
//! that depends on the unit (see [`floor`]): far above the floor the score is the
//! relative change, near it the absolute change measured in floors, so 1 → 3 events never
//! outranks 10,000 → 7,000. A row is listed only when the change is consistent over the
//! repetitions (Mann-Whitney on the row itself), at least one floor in size, and at least
//! ln([`MIN_CHANGE`]) in score. docs/METHODOLOGY.md ("What changed with it") has the rule.
//!
//! Trace spans (`span netrx.wakeup p50`) rank beside interrupts and softirqs by the same
//! rule, read from the telemetry repetitions that traced; their percentiles are lengths
//! of single events, so their floor is [`SPAN_FLOOR_NS`], and a span belongs to no CPU,
//! so it is looked at whatever CPUs the point involves.
//!
//! How a row is worded, which keys are bookkeeping, and which rows belong to no CPU come
//! from the monitor's report hints (`perflab_core::RowHints`), never from its name.

use std::collections::{HashMap, HashSet};

use perflab_core::descriptor::word_row;
use perflab_core::record::{MeasurementRecord, MeasurementStatus};
use perflab_core::{NoCpu, ParamRoles, ParamValue, Params, Unit};
use perflab_stats::{mann_whitney, median, min_p_value, Sample};
use serde::Serialize;

use crate::hints;
use crate::spans::rows;
use crate::tables::compare::{ComparisonTable, Row, TableKind};

/// Significance a telemetry row's own change must reach, when its repetitions allow it.
const ALPHA: f64 = 0.05;
/// Smallest change listed, as a factor: the score must reach ln(1.05), a 5% change far
/// above the floor.
pub const MIN_CHANGE: f64 = 1.05;
/// Events (and events per second) below which a count is "a few": 1 → 3 is noise.
const COUNT_FLOOR: f64 = 10.0;
/// Time floor as a share of the measurement's elapsed time: 1 ms per second.
const TIME_FLOOR_SHARE: f64 = 0.001;
/// Percentages (miss rates) move by points; one point is the floor.
const PERCENT_FLOOR: f64 = 1.0;
/// A span percentile moving by less than this is not worth a line: about what one
/// tracepoint costs the event it records.
pub const SPAN_FLOOR_NS: f64 = 100.0;
/// Other units have no natural size: the floor is this share of the larger median.
const RELATIVE_FLOOR: f64 = 0.01;

/// One telemetry row that changed between side A and side B.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TelemetryChange {
    pub source: String,
    pub key: String,
    pub label: String,
    /// `None`: the machine total (or the process, for per-process counters).
    pub cpu: Option<u32>,
    pub unit: Unit,
    /// Medians over the repetitions of each side.
    pub median_a: f64,
    pub median_b: f64,
    /// median B − median A, in `unit`.
    pub delta: f64,
    /// delta / |median A| × 100; `None` when median A is 0.
    pub change_pct: Option<f64>,
    /// Two-sided Mann-Whitney p of this row's per-repetition values, A against B.
    pub p_value: f64,
    /// The ranking score |ln((b + f) / (a + f))| (see the module documentation).
    pub score: f64,
    /// A line for people: `DBL interrupts on CPU 24: -27%`.
    pub text: String,
}

/// The telemetry changes behind one significant row of a comparison table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RowChanges {
    pub label: String,
    /// The variant, for run comparisons.
    pub variant: Option<String>,
    /// The row's verdict symbol (`WORSE`, `better`, `changed`).
    pub verdict: String,
    pub change_pct: Option<f64>,
    /// The CPUs whose telemetry was looked at; empty when unknown (machine totals then).
    pub cpus: Vec<u32>,
    pub changes: Vec<TelemetryChange>,
}

impl RowChanges {
    /// The row as tables name it: `4-24`, or `size=4K [2m]` in a run comparison.
    pub fn name(&self) -> String {
        match &self.variant {
            Some(v) => format!("{} [{v}]", self.label),
            None => self.label.clone(),
        }
    }
}

/// CPUs a point involves: those its parameters with a CPU role name (a pair's, a pinned
/// CPU, CPU lists such as `0-3,8`) and those
/// the records' threads were pinned to or seen on. Sorted, without repeats; empty when
/// nothing says (an unpinned workload with no thread records).
pub fn involved_cpus(
    roles: &ParamRoles,
    params: &Params,
    records: &[&MeasurementRecord],
) -> Vec<u32> {
    let mut cpus: Vec<u32> = Vec::new();
    for (name, value) in &params.0 {
        if !roles.names_cpus(name) {
            continue;
        }
        match value {
            // -1 means "not pinned".
            ParamValue::Int(i) => cpus.extend(u32::try_from(*i).ok()),
            ParamValue::Str(s) => cpus.extend(
                perflab_sys::cpulist::parse_cpu_list(s)
                    .unwrap_or_default()
                    .into_iter()
                    // A list that large names no particular CPUs worth attributing to.
                    .take(4096),
            ),
            _ => {}
        }
    }
    for m in records {
        for t in &m.output.threads {
            cpus.extend(t.pinned_cpu);
            cpus.extend(t.cpu_samples.iter().map(|&(c, _)| c));
        }
    }
    cpus.sort_unstable();
    cpus.dedup();
    cpus
}

/// Telemetry rows that are settings or bookkeeping, not activity, as the source's hints
/// say: a disabled flag of an idle state is the variant itself, a counter's multiplex
/// share is perf's, a verdict is the monitor's, and of a span only its percentiles are
/// what a change is.
fn is_bookkeeping(source: &str, key: &str) -> bool {
    hints::rows(source).is_some_and(|h| {
        h.bookkeeping.iter().any(|m| m.matches(key))
            || h.changes.is_some_and(|c| !c.iter().any(|m| m.matches(key)))
    })
}

/// Rows that belong to no CPU by nature and are wanted whatever CPUs a point involves:
/// a trace span follows a packet or a wake-up across CPUs.
fn cpu_free(source: &str) -> bool {
    hints::rows(source).is_some_and(|h| h.cpu_free)
}

/// Rows that are latency spans (their statistics exist where the span matched, and are
/// lengths of single events).
fn is_spans(source: &str) -> bool {
    hints::rows(source).is_some_and(|h| h.spans)
}

/// Identity of a telemetry row across repetitions. Rows with the same identity in one
/// measurement are summed (POWER's two `LOC` rows become the CPU's LOC total).
type RowId<'a> = (&'a str, &'a str, Option<u32>);

/// The telemetry rows on `cpus` (machine totals only when `cpus` is empty) that changed
/// most from side A to side B, best first, at most `limit`. Only successful records
/// count. See the module documentation for the score and what is left out.
pub fn what_changed(
    a: &[&MeasurementRecord],
    b: &[&MeasurementRecord],
    cpus: &[u32],
    limit: usize,
) -> Vec<TelemetryChange> {
    let ok = |m: &&MeasurementRecord| m.status == MeasurementStatus::Ok;
    let a: Vec<&MeasurementRecord> = a.iter().copied().filter(ok).collect();
    let b: Vec<&MeasurementRecord> = b.iter().copied().filter(ok).collect();
    // A source the headline results carry is read from them alone; telemetry repetitions
    // add only what runs nowhere else (perf counters).
    let headline: HashSet<&str> = a
        .iter()
        .chain(&b)
        .filter(|m| m.is_headline())
        .flat_map(|m| m.telemetry.iter().map(|t| t.source.as_str()))
        .collect();
    let wanted_source =
        |m: &MeasurementRecord, source: &str| m.is_headline() || !headline.contains(source);
    let elapsed = median(a.iter().chain(&b).map(|m| m.elapsed_s).filter(|s| *s > 0.0));
    let wanted = |source: &str, cpu: Option<u32>| match cpu {
        Some(c) => cpus.contains(&c),
        None => cpus.is_empty() || cpu_free(source),
    };
    // Rows are looked up once per repetition, not once per row and repetition: a big
    // machine has thousands of telemetry rows per measurement.
    let (ta, tb) = (
        tally(&a, &wanted, &wanted_source),
        tally(&b, &wanted, &wanted_source),
    );
    let mut ids: Vec<(RowId, &str, Unit)> = Vec::new();
    let mut seen: HashSet<RowId> = HashSet::new();
    for m in a.iter().chain(&b) {
        for t in m.telemetry.iter().filter(|t| wanted_source(m, &t.source)) {
            let id = (t.source.as_str(), t.key.as_str(), t.cpu);
            if wanted(&t.source, t.cpu) && !is_bookkeeping(&t.source, &t.key) && seen.insert(id) {
                ids.push((id, t.label.as_str(), t.unit));
            }
        }
    }
    let mut out: Vec<TelemetryChange> = ids
        .into_iter()
        .filter_map(|(id, label, unit)| {
            let (va, vb) = (values(&ta, id), values(&tb, id));
            change(id, label, unit, (&va, &vb), elapsed)
        })
        .collect();
    out.sort_by(|x, y| {
        y.score
            .total_cmp(&x.score)
            .then(x.p_value.total_cmp(&y.p_value))
            .then_with(|| (&x.source, &x.key, x.cpu).cmp(&(&y.source, &y.key, y.cpu)))
    });
    out.truncate(limit);
    out
}

/// One repetition's telemetry: the sources it recorded and each wanted row's value.
struct Tally<'m> {
    sources: HashSet<&'m str>,
    rows: HashMap<RowId<'m>, f64>,
}

fn tally<'m>(
    records: &[&'m MeasurementRecord],
    wanted: &dyn Fn(&str, Option<u32>) -> bool,
    wanted_source: &dyn Fn(&MeasurementRecord, &str) -> bool,
) -> Vec<Tally<'m>> {
    records
        .iter()
        .map(|m| {
            let mut t = Tally {
                sources: HashSet::new(),
                rows: HashMap::new(),
            };
            for r in m.telemetry.iter().filter(|r| wanted_source(m, &r.source)) {
                t.sources.insert(r.source.as_str());
                if wanted(&r.source, r.cpu) {
                    *t.rows
                        .entry((r.source.as_str(), r.key.as_str(), r.cpu))
                        .or_insert(0.0) += r.value;
                }
            }
            t
        })
        .collect()
}

/// Per repetition that recorded the row's source: the sum of the row's values (0 when the
/// row is absent). A repetition whose row holds a non-finite value is left out.
fn values(tallies: &[Tally], id: RowId) -> Vec<f64> {
    // A span percentile exists only where the span matched: a repetition without a match
    // has no distribution, not a zero one.
    let count_key = is_spans(id.0)
        .then(|| rows::split_key(id.1).map(|(span, _)| format!("{span}:count")))
        .flatten();
    tallies
        .iter()
        .filter(|t| t.sources.contains(id.0))
        .filter(|t| match &count_key {
            Some(k) => t
                .rows
                .get(&(id.0, k.as_str(), id.2))
                .is_some_and(|c| *c > 0.0),
            None => true,
        })
        .map(|t| t.rows.get(&id).copied().unwrap_or(0.0))
        .filter(|v| v.is_finite())
        .collect()
}

fn change(
    (source, key, cpu): RowId,
    label: &str,
    unit: Unit,
    (va, vb): (&[f64], &[f64]),
    elapsed_s: Option<f64>,
) -> Option<TelemetryChange> {
    let (sa, sb) = (
        Sample::new(va.to_vec()).ok()?,
        Sample::new(vb.to_vec()).ok()?,
    );
    let (ma, mb) = (sa.median(), sb.median());
    let delta = mb - ma;
    let f = if is_spans(source) {
        span_floor(unit)
    } else {
        floor(unit, ma, mb, elapsed_s)
    };
    if !(delta.is_finite() && f > 0.0 && delta.abs() >= f) {
        return None;
    }
    // Medians of counts and times are never negative; the floor keeps the ratio positive
    // for other units too unless a median is below −f, which has no log-ratio.
    let ratio = (mb + f) / (ma + f);
    if !(ratio.is_finite() && ratio > 0.0) {
        return None;
    }
    let score = ratio.ln().abs();
    let test = mann_whitney(&sa, &sb);
    if score < MIN_CHANGE.ln() || !consistent(&test, sa.len(), sb.len()) {
        return None;
    }
    let change_pct = (ma != 0.0).then(|| delta / ma.abs() * 100.0);
    let text = format!(
        "{}: {}",
        subject(source, key, label, cpu),
        amount(unit, ma, delta, change_pct)
    );
    Some(TelemetryChange {
        source: source.to_string(),
        key: key.to_string(),
        label: label.to_string(),
        cpu,
        unit,
        median_a: ma,
        median_b: mb,
        delta,
        change_pct,
        p_value: test.p_value,
        score,
        text,
    })
}

/// Consistent over the repetitions: significant at [`ALPHA`] where the sample sizes allow
/// that; where they do not (3 vs 3), every value of one side beyond every value of the
/// other. With one repetition a side nothing can say otherwise, so any change passes.
fn consistent(test: &perflab_stats::MannWhitney, m: usize, n: usize) -> bool {
    if min_p_value(m, n) < ALPHA {
        test.p_value < ALPHA
    } else {
        test.u_a == 0.0 || test.u_b == 0.0
    }
}

/// The size below which a change of a row in `unit` is not worth a line: 10 events (or
/// 10 per second), 1 ms per second of the measurement for times, 1 point for
/// percentages, else 1% of the larger median.
pub fn floor(unit: Unit, a: f64, b: f64, elapsed_s: Option<f64>) -> f64 {
    match unit {
        Unit::Count | Unit::PerSecond => COUNT_FLOOR,
        Unit::Nanoseconds | Unit::Microseconds | Unit::Milliseconds | Unit::Seconds => {
            // Without an elapsed time, as if the measurement took one second.
            let secs = elapsed_s.unwrap_or(1.0) * TIME_FLOOR_SHARE;
            secs / seconds_per(unit)
        }
        Unit::Percent => PERCENT_FLOOR,
        Unit::Ratio | Unit::Bytes | Unit::BytesPerSecond | Unit::MibPerSecond => {
            RELATIVE_FLOOR * a.abs().max(b.abs())
        }
    }
}

/// The floor of a span percentile: [`SPAN_FLOOR_NS`] in `unit`. A percentile is the
/// length of one event, not time summed over the measurement, so the elapsed-time floor
/// of other times (1 ms per second) would hide every span.
pub fn span_floor(unit: Unit) -> f64 {
    SPAN_FLOOR_NS * 1e-9 / seconds_per(unit)
}

fn seconds_per(unit: Unit) -> f64 {
    match unit {
        Unit::Nanoseconds => 1e-9,
        Unit::Microseconds => 1e-6,
        Unit::Milliseconds => 1e-3,
        _ => 1.0,
    }
}

fn is_time(unit: Unit) -> bool {
    matches!(
        unit,
        Unit::Nanoseconds | Unit::Microseconds | Unit::Milliseconds | Unit::Seconds
    )
}

/// What the row is, in the words of the source (its hints): "DBL interrupts on CPU 24".
fn subject(source: &str, key: &str, label: &str, cpu: Option<u32>) -> String {
    let h = hints::rows(source);
    let what = word_row(h, source, key, label);
    match cpu {
        Some(c) => format!("{what} on CPU {c}"),
        // Per-process counters and per-thread figures have no CPU by nature.
        None if h.is_some_and(|h| h.no_cpu == NoCpu::Unattached) => what,
        None => format!("{what} (all CPUs)"),
    }
}

/// The change for people: a signed time for times ("+40 ms"), points for percentages,
/// else percent ("-27%"), or the new value when the old one was 0 ("+23 from 0").
/// Plain ASCII signs, for mail.
fn amount(unit: Unit, a: f64, delta: f64, change_pct: Option<f64>) -> String {
    if is_time(unit) {
        return signed_time(delta * seconds_per(unit));
    }
    if unit == Unit::Percent {
        return format!("{} points", signed(delta));
    }
    match change_pct {
        Some(p) if a != 0.0 => format!("{}%", signed(p)),
        _ => format!("{}{} from 0", signed(delta), unit.symbol()),
    }
}

/// Two significant digits or so, with a sign: +40, -27, +3.5, -0.8.
fn signed(x: f64) -> String {
    let sign = if x < 0.0 { "-" } else { "+" };
    let m = x.abs();
    let digits = if m >= 10.0 { 0 } else { 1 };
    let s = format!("{m:.digits$}");
    let s = s.strip_suffix(".0").unwrap_or(&s);
    format!("{sign}{s}")
}

fn signed_time(secs: f64) -> String {
    let m = secs.abs();
    let (v, unit) = if m >= 1.0 {
        (secs, "s")
    } else if m >= 1e-3 {
        (secs * 1e3, "ms")
    } else if m >= 1e-6 {
        (secs * 1e6, "us")
    } else {
        (secs * 1e9, "ns")
    };
    format!("{} {unit}", signed(v))
}

/// For every row of `table` whose verdict is not `~`, the telemetry that changed most on
/// the CPUs involved, at most `limit` lines each. `ms_a` and `ms_b` are the records of
/// run A and run B (for a variant comparison, the same run's records twice).
pub fn changes_for_table(
    table: &ComparisonTable,
    ms_a: &[MeasurementRecord],
    ms_b: &[MeasurementRecord],
    limit: usize,
) -> Vec<RowChanges> {
    let (index_a, index_b) = (Sides::new(&table.kind, ms_a), Sides::new(&table.kind, ms_b));
    table
        .rows
        .iter()
        .filter(|r| r.cmp.verdict.moved())
        .map(|row| {
            let (a, b) = (
                index_a.of(&table.kind, row, false),
                index_b.of(&table.kind, row, true),
            );
            let both: Vec<&MeasurementRecord> = a.iter().chain(&b).copied().collect();
            let cpus = involved_cpus(&table.param_roles, &row.params, &both);
            RowChanges {
                label: row.label.clone(),
                variant: row.variant.clone(),
                verdict: row.cmp.symbol().to_string(),
                change_pct: row.cmp.change_pct,
                changes: what_changed(&a, &b, &cpus, limit),
                cpus,
            }
        })
        .collect()
}

/// The successful records of one side of a table, grouped once as the table grouped
/// them (telemetry repetitions too: what_changed reads them for what only they carry),
/// so that each row finds its own without a pass over the whole run: a run of 50,000
/// measurements with 100 rows that moved made that 5 million parameter descriptions.
struct Sides<'m>(HashMap<(u32, String, &'m str), Vec<&'m MeasurementRecord>>);

impl<'m> Sides<'m> {
    fn new(kind: &TableKind, ms: &'m [MeasurementRecord]) -> Self {
        let mut index: HashMap<_, Vec<_>> = HashMap::new();
        let mut described = match kind {
            TableKind::Runs { .. } => crate::select::describe_each(ms),
            TableKind::Variants { .. } => Vec::new(),
        };
        for (i, m) in ms.iter().enumerate() {
            if m.status != MeasurementStatus::Ok {
                continue;
            }
            // compare_runs matches measurements by (parameters, variant); a variant
            // comparison by point.
            let key = match kind {
                TableKind::Variants { .. } => (m.point, String::new(), m.variant.as_str()),
                TableKind::Runs { .. } => {
                    (0, std::mem::take(&mut described[i]), m.variant.as_str())
                }
            };
            index.entry(key).or_default().push(m);
        }
        Self(index)
    }

    /// The records behind `row` on this side (`b`: side B, else A).
    fn of(&self, kind: &TableKind, row: &Row, b: bool) -> Vec<&'m MeasurementRecord> {
        let key = match kind {
            TableKind::Variants { base, other, .. } => match b {
                false => (row.point_a, String::new(), base.as_str()),
                true => (row.point_b, String::new(), other.as_str()),
            },
            TableKind::Runs { .. } => (
                0,
                row.params.describe(),
                row.variant.as_deref().unwrap_or_default(),
            ),
        };
        self.0.get(&key).cloned().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use perflab_core::ParamRole;

    #[test]
    fn amounts_read_like_a_person_wrote_them() {
        assert_eq!(amount(Unit::Count, 1381.0, -373.0, Some(-27.01)), "-27%");
        assert_eq!(amount(Unit::Count, 100.0, 3.5, Some(3.5)), "+3.5%");
        assert_eq!(amount(Unit::Count, 0.0, 23.0, None), "+23 from 0");
        assert_eq!(amount(Unit::Microseconds, 0.0, 40_305.0, None), "+40 ms");
        assert_eq!(amount(Unit::Milliseconds, 9.0, -1500.0, None), "-1.5 s");
        assert_eq!(amount(Unit::Nanoseconds, 9.0, 2500.0, None), "+2.5 us");
        assert_eq!(amount(Unit::Percent, 2.0, 1.25, Some(62.5)), "+1.2 points");
    }

    #[test]
    fn subjects_use_the_kernel_names() {
        assert_eq!(
            subject("interrupts", "DBL", "Doorbell interrupts", Some(24)),
            "DBL interrupts on CPU 24"
        );
        assert_eq!(
            subject(
                "interrupts",
                "24",
                "IR-PCI-MSI 524288-edge nvme0q0",
                Some(3)
            ),
            "IRQ 24 (nvme0q0) on CPU 3"
        );
        assert_eq!(
            subject("softirqs", "NET_RX", "", Some(3)),
            "NET_RX softirqs on CPU 3"
        );
        assert_eq!(
            subject("cpuidle", "stop2:time", "", Some(4)),
            "stop2 residency on CPU 4"
        );
        assert_eq!(
            subject("cpuidle", "C6:usage", "", None),
            "C6 entries (all CPUs)"
        );
        assert_eq!(
            subject("cpu_time", "user", "", Some(1)),
            "user time on CPU 1"
        );
        assert_eq!(
            subject("counters", "cache-misses", "", None),
            "cache-misses"
        );
        assert_eq!(subject("mystery", "x", "", Some(2)), "mystery x on CPU 2");
        assert_eq!(
            subject("trace", "netrx.wakeup:p50", "(d) woken → running", None),
            "span netrx.wakeup p50"
        );
    }

    #[test]
    fn floors_follow_the_unit() {
        assert_eq!(floor(Unit::Count, 1.0, 3.0, Some(10.0)), 10.0);
        // 1 ms per second of a 10 s measurement, in microseconds.
        assert!((floor(Unit::Microseconds, 0.0, 1.0, Some(10.0)) - 10_000.0).abs() < 1e-6);
        assert!((floor(Unit::Milliseconds, 0.0, 1.0, None) - 1.0).abs() < 1e-12);
        assert!((floor(Unit::Ratio, 1.5, 1.2, None) - 0.015).abs() < 1e-12);
        assert!((span_floor(Unit::Nanoseconds) - 100.0).abs() < 1e-9);
        assert!((span_floor(Unit::Microseconds) - 0.1).abs() < 1e-12);
        assert!(is_bookkeeping("trace", "netrx.irq:count"));
        assert!(is_bookkeeping("trace", "netrx.irq:max"));
        assert!(!is_bookkeeping("trace", "netrx.irq:p99"));
    }

    #[test]
    fn cpu_parameters_are_recognised() {
        let mut p = Params::default();
        p.0.insert("cpu_a".into(), ParamValue::Int(4));
        p.0.insert("cpu_b".into(), ParamValue::Int(24));
        p.0.insert("client_cpu".into(), ParamValue::Int(-1));
        p.0.insert("cpus".into(), ParamValue::Str("0-1,8".into()));
        p.0.insert("size".into(), ParamValue::Int(7));
        let mut roles = ParamRoles::default();
        // Names say nothing: without roles, no parameter is a CPU.
        assert_eq!(involved_cpus(&roles, &p, &[]), Vec::<u32>::new());
        roles.insert("cpu_a", ParamRole::CpuA);
        roles.insert("cpu_b", ParamRole::CpuB);
        roles.insert("client_cpu", ParamRole::Cpu);
        roles.insert("cpus", ParamRole::Cpu);
        roles.insert("size", ParamRole::SizeAxis);
        assert_eq!(involved_cpus(&roles, &p, &[]), vec![0, 1, 4, 8, 24]);
        p.0.insert("cpus".into(), ParamValue::Str("nonsense".into()));
        assert_eq!(involved_cpus(&roles, &p, &[]), vec![4, 24]);
    }
}
