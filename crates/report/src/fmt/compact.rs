//! Many rows that share one note, named in one line rather than one line each: the rows
//! grouped by the parameters other than the table's axis (the one with the most values,
//! a scan's size), each group with its axis values as ranges of neighbours:
//! `engine=pvm state=pinned [4k, 2m]: all 11 sizes; engine=memcpy: size 32K–128K, 1M`.
//! CPU pairs are named as the tables name them, `0-0, 0-1`.

use std::collections::BTreeMap;

use perflab_core::record::{MeasurementRecord, MeasurementStatus};
use perflab_core::{ParamRoles, ParamValue, Params};

/// The axis values a group holds (indices into the sorted values), with the variants that
/// hold exactly these.
type Held<'a> = (Vec<usize>, Vec<&'a str>);

/// A row a note is said of: its point's parameters and, where rows of several variants
/// share the note, its variant.
#[derive(Clone, Copy, Debug)]
pub struct RowRef<'a> {
    pub params: &'a Params,
    pub variant: Option<&'a str>,
}

/// [`rows_text`], or `every row but …` naming the other rows where that is shorter
/// (83 of 88 rows are best named by the 5 that are not); `variants` names the variants
/// the rows carry (empty for rows without one).
pub fn rows_or_rest(
    roles: &ParamRoles,
    chosen: &[RowRef],
    all: &[&Params],
    variants: &[&str],
) -> String {
    let direct = rows_text(roles, chosen, all, variants.len().max(1));
    let mut rest: Vec<RowRef> = Vec::new();
    let names: Vec<Option<&str>> = if variants.is_empty() {
        vec![None]
    } else {
        variants.iter().map(|v| Some(*v)).collect()
    };
    for p in all {
        for v in &names {
            let taken = chosen.iter().any(|c| c.params == *p && c.variant == *v);
            let listed = rest.iter().any(|r| r.params == *p && r.variant == *v);
            if !taken && !listed {
                rest.push(RowRef {
                    params: p,
                    variant: *v,
                });
            }
        }
    }
    if rest.is_empty() {
        return direct;
    }
    let other = format!(
        "every row but {}",
        rows_text(roles, &rest, all, variants.len().max(1))
    );
    if other.len() < direct.len() {
        other
    } else {
        direct
    }
}

/// Names `chosen`, rows of a table whose points are `all` measured with `variants`
/// variants: `every row` when they are all of them, else as the module says; `roles`
/// say which parameters are a CPU pair and the unit of each value.
pub fn rows_text(
    roles: &ParamRoles,
    chosen: &[RowRef],
    all: &[&Params],
    variants: usize,
) -> String {
    let mut distinct: Vec<&Params> = Vec::new();
    for p in all.iter().copied().chain(chosen.iter().map(|c| c.params)) {
        if !distinct.contains(&p) {
            distinct.push(p);
        }
    }
    let seen = distinct_rows(chosen);
    if seen >= distinct.len() * variants.max(1) && distinct.len() > 1 {
        return format!("every row ({seen})");
    }
    if distinct.iter().all(|p| roles.cpu_pair(p).is_some()) {
        return pairs_text(roles, chosen);
    }
    let varying = varying(&distinct);
    let axis = varying
        .iter()
        .max_by_key(|n| sorted_values(&distinct, n).len())
        .cloned();
    let axis_values = axis
        .as_deref()
        .map_or_else(Vec::new, |a| sorted_values(&distinct, a));
    let (order, held) = held_by_group(roles, chosen, &varying, axis.as_deref(), &axis_values);
    // Variants of a group that hold the same values are named together.
    let mut groups: BTreeMap<&str, Vec<Held>> = BTreeMap::new();
    for ((rest, variant), mut idx) in held.iter().map(|(k, v)| (k, v.clone())) {
        idx.sort_unstable();
        let list = groups.entry(rest.as_str()).or_default();
        match list.iter_mut().find(|(i, _)| *i == idx) {
            Some((_, vs)) => vs.push(variant),
            None => list.push((idx, vec![variant])),
        }
    }
    let mut parts = Vec::new();
    for rest in &order {
        for (idx, vs) in groups.get(rest.as_str()).into_iter().flatten() {
            let named: Vec<&str> = vs.iter().copied().filter(|v| !v.is_empty()).collect();
            let mut head = rest.clone();
            if !named.is_empty() && named.len() < variants {
                head = format!("{head} [{}]", named.join(", ")).trim().to_string();
            }
            let values = axis
                .as_deref()
                .map_or_else(String::new, |a| axis_text(roles, a, idx, &axis_values));
            parts.push(match (head.is_empty(), values.is_empty()) {
                (true, _) => values,
                (false, true) => head,
                (false, false) => format!("{head}: {values}"),
            });
        }
    }
    parts.join("; ")
}

/// Per group of `chosen` (its values of the `varying` parameters other than `axis`, in
/// first-seen order) and variant, the indexes into `axis_values` it holds.
#[allow(clippy::type_complexity)]
fn held_by_group<'a>(
    roles: &ParamRoles,
    chosen: &[RowRef<'a>],
    varying: &[String],
    axis: Option<&str>,
    axis_values: &[&ParamValue],
) -> (Vec<String>, BTreeMap<(String, &'a str), Vec<usize>>) {
    let mut order: Vec<String> = Vec::new();
    let mut held: BTreeMap<(String, &str), Vec<usize>> = BTreeMap::new();
    for c in chosen {
        let rest: Vec<String> = varying
            .iter()
            .filter(|n| Some(n.as_str()) != axis)
            .map(|n| match c.params.get(n) {
                Some(v) => roles.named_value(n, v),
                None => format!("{n}=-"),
            })
            .collect();
        let rest = rest.join(" ");
        if !order.contains(&rest) {
            order.push(rest.clone());
        }
        let slot = held.entry((rest, c.variant.unwrap_or(""))).or_default();
        let at = axis
            .and_then(|a| c.params.get(a))
            .and_then(|v| axis_values.iter().position(|x| *x == v));
        if let Some(i) = at.filter(|i| !slot.contains(i)) {
            slot.push(i);
        }
    }
    (order, held)
}

/// The ineffective measurements of `ms` (a knob of their variant did not hold), one line
/// per variant: how many of its measurements that ran ([`perflab_core::IneffectiveCount`],
/// the count a void comparison's reason gives), at which points (named as above), and the
/// first one's reason; `perflab show` lists every one.
pub fn ineffective_summary(roles: &ParamRoles, ms: &[MeasurementRecord]) -> Vec<String> {
    let all: Vec<&Params> = ms.iter().map(|m| &m.params).collect();
    let mut variants: Vec<&str> = Vec::new();
    for m in ms {
        if !variants.contains(&m.variant.as_str()) {
            variants.push(&m.variant);
        }
    }
    variants
        .into_iter()
        .filter_map(|v| {
            let of: Vec<&MeasurementRecord> = ms.iter().filter(|m| m.variant == v).collect();
            let bad: Vec<(&MeasurementRecord, &String)> = of
                .iter()
                .filter_map(|m| match &m.status {
                    MeasurementStatus::Ineffective(why) => Some((*m, why)),
                    _ => None,
                })
                .collect();
            let (first, why) = bad.first()?;
            // The count a void comparison's reason gives for the same variant (one type,
            // so the two lines cannot give two fractions for one fact).
            let count = perflab_core::IneffectiveCount::of(of.iter().copied());
            let at: Vec<RowRef> = bad
                .iter()
                .map(|(m, _)| RowRef {
                    params: &m.params,
                    variant: None,
                })
                .collect();
            Some(format!(
                "{v}: {count}, at {}; the first (seq {}): {why}",
                rows_text(roles, &at, &all, 1),
                first.seq
            ))
        })
        .collect()
}

/// Which monitors the repetitions of `ms` carried, in one line where every repetition
/// carried a common set and the telemetry ones (perflab's, that disturb the workload)
/// carried more: `interrupts, cpuidle in all 24 repetitions; counters only in the 4
/// telemetry ones, never results`. Otherwise one line per set, as
/// [`crate::tables::coverage::monitor_lines`] writes them.
pub fn monitors_summary(ms: &[MeasurementRecord]) -> Vec<String> {
    use perflab_core::record::Role;
    if ms.iter().all(|m| m.monitors.is_empty()) {
        return Vec::new();
    }
    let sets = |role: Role| -> Vec<&Vec<String>> {
        let mut out: Vec<&Vec<String>> = Vec::new();
        for m in ms.iter().filter(|m| m.role == role) {
            if !out.contains(&&m.monitors) {
                out.push(&m.monitors);
            }
        }
        out
    };
    let (headline, telemetry) = (sets(Role::Headline), sets(Role::Telemetry));
    let common = match headline.as_slice() {
        [one] => *one,
        _ => return crate::tables::coverage::monitor_lines(ms),
    };
    let n_tele = ms.iter().filter(|m| m.role == Role::Telemetry).count();
    let mut line = format!("{} in all {} repetitions", common.join(", "), ms.len());
    match telemetry.as_slice() {
        [] => {}
        [extra] if common.iter().all(|c| extra.contains(c)) => {
            let more: Vec<&str> = extra
                .iter()
                .filter(|m| !common.contains(m))
                .map(String::as_str)
                .collect();
            if !more.is_empty() {
                line.push_str(&format!(
                    "; {} only in the {n_tele} telemetry ones, never results",
                    more.join(", ")
                ));
            }
        }
        _ => return crate::tables::coverage::monitor_lines(ms),
    }
    vec![line]
}

/// How many different rows (point and variant) `chosen` holds.
fn distinct_rows(chosen: &[RowRef]) -> usize {
    let mut seen: Vec<(&Params, Option<&str>)> = Vec::new();
    for c in chosen {
        if !seen.contains(&(c.params, c.variant)) {
            seen.push((c.params, c.variant));
        }
    }
    seen.len()
}

/// CPU pairs as the tables write them, `0-0, 0-1 [all]`.
fn pairs_text(roles: &ParamRoles, chosen: &[RowRef]) -> String {
    let mut order: Vec<&str> = Vec::new();
    let mut by_variant: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for c in chosen {
        let Some((a, b)) = roles.cpu_pair(c.params) else {
            continue;
        };
        let v = c.variant.unwrap_or("");
        if !order.contains(&v) {
            order.push(v);
        }
        let list = by_variant.entry(v).or_default();
        let name = format!("{a}-{b}");
        if !list.contains(&name) {
            list.push(name);
        }
    }
    let parts: Vec<String> = order
        .into_iter()
        .map(|v| {
            let pairs = by_variant[v].join(", ");
            match v {
                "" => pairs,
                v => format!("{pairs} [{v}]"),
            }
        })
        .collect();
    parts.join("; ")
}

/// The parameters whose value differs between points.
fn varying(distinct: &[&Params]) -> Vec<String> {
    let Some(first) = distinct.first() else {
        return Vec::new();
    };
    let mut names: Vec<&String> = distinct.iter().flat_map(|p| p.0.keys()).collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .filter(|n| distinct.iter().any(|p| p.get(n) != first.get(n)))
        .cloned()
        .collect()
}

/// The values `name` takes, numbers in order of value, text in order of appearance.
fn sorted_values<'a>(distinct: &[&'a Params], name: &str) -> Vec<&'a ParamValue> {
    let mut out: Vec<&ParamValue> = Vec::new();
    for v in distinct.iter().filter_map(|p| p.get(name)) {
        if !out.contains(&v) {
            out.push(v);
        }
    }
    let number = |v: &ParamValue| match v {
        ParamValue::Int(i) => Some(*i as f64),
        ParamValue::Float(x) => Some(*x),
        _ => None,
    };
    out.sort_by(|a, b| match (number(a), number(b)) {
        (Some(x), Some(y)) => x.total_cmp(&y),
        _ => std::cmp::Ordering::Equal,
    });
    out
}

/// `all 11 sizes`, or `size 32 KiB–1 MiB, 8 MiB`: the values held, three or more neighbours as a
/// range.
fn axis_text(roles: &ParamRoles, axis: &str, idx: &[usize], values: &[&ParamValue]) -> String {
    if idx.len() == values.len() && values.len() > 1 {
        let plural = if axis.ends_with('s') { "" } else { "s" };
        return format!("all {} {axis}{plural}", values.len());
    }
    let text = |i: usize| roles.value_text(axis, values[i]);
    let mut out = Vec::new();
    let mut start = 0;
    while start < idx.len() {
        let mut end = start;
        while end + 1 < idx.len() && idx[end + 1] == idx[end] + 1 {
            end += 1;
        }
        if end - start >= 2 {
            out.push(format!("{}–{}", text(idx[start]), text(idx[end])));
        } else {
            out.extend((start..=end).map(|k| text(idx[k])));
        }
        start = end + 1;
    }
    format!("{axis} {}", out.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(engine: &str, size: i64) -> Params {
        Params(
            [
                ("engine".to_string(), ParamValue::Str(engine.into())),
                ("size".to_string(), ParamValue::Int(size)),
            ]
            .into_iter()
            .collect(),
        )
    }

    fn grid() -> Vec<Params> {
        let mut out = Vec::new();
        for e in ["pvm", "memcpy"] {
            for k in 0..6 {
                out.push(p(e, 32768 << k));
            }
        }
        out
    }

    #[test]
    fn rows_are_named_by_group_with_their_sizes_as_ranges() {
        let all = grid();
        let refs: Vec<&Params> = all.iter().collect();
        let row = |i: usize, v: &'static str| RowRef {
            params: &all[i],
            variant: Some(v),
        };
        // Every size of pvm in both variants, and three sizes of memcpy in one.
        let mut chosen: Vec<RowRef> = (0..6).flat_map(|i| [row(i, "4k"), row(i, "2m")]).collect();
        chosen.extend([row(6, "2m"), row(7, "2m"), row(8, "2m"), row(10, "2m")]);
        // Sizes are read in their unit only where their role says they are sizes.
        let mut roles = ParamRoles::default();
        assert_eq!(
            rows_text(&roles, &chosen, &refs, 2),
            "engine=pvm: all 6 sizes; engine=memcpy [2m]: size 32768–131072, 524288"
        );
        roles.insert("size", perflab_core::ParamRole::SizeAxis);
        assert_eq!(
            rows_text(&roles, &chosen, &refs, 2),
            "engine=pvm: all 6 sizes; engine=memcpy [2m]: size 32 KiB–128 KiB, 512 KiB"
        );
        let every: Vec<RowRef> = (0..12).flat_map(|i| [row(i, "4k"), row(i, "2m")]).collect();
        assert_eq!(rows_text(&roles, &every, &refs, 2), "every row (24)");
    }

    #[test]
    fn cpu_pairs_are_named_as_the_tables_name_them() {
        let pair = |b: i64| {
            Params(
                [
                    ("cpu_a".to_string(), ParamValue::Int(0)),
                    ("cpu_b".to_string(), ParamValue::Int(b)),
                ]
                .into_iter()
                .collect(),
            )
        };
        let all = [pair(0), pair(1), pair(2)];
        let refs: Vec<&Params> = all.iter().collect();
        let chosen = [
            RowRef {
                params: &all[0],
                variant: Some("all"),
            },
            RowRef {
                params: &all[2],
                variant: Some("all"),
            },
        ];
        let mut roles = ParamRoles::default();
        roles.insert("cpu_a", perflab_core::ParamRole::CpuA);
        roles.insert("cpu_b", perflab_core::ParamRole::CpuB);
        assert_eq!(rows_text(&roles, &chosen, &refs, 1), "0-0, 0-2 [all]");
    }
}
