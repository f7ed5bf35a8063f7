//! `exec` runs in the seed's scan shape. Seed 002's scan of two versions is, through
//! `exec`, a grid of `args = "kb=32"` … (the size a placeholder of the command) and `env =
//! "HUGE=0"`, `"HUGE=1"` (the page size). Those are free text to the workload, so a
//! comparison's rows would read `args=kb=32 env=HUGE=0`; here each `K=V` of `args` and
//! `env` becomes a parameter of its own, and a size-like placeholder (`kb`, `mb`, `bytes`,
//! …) becomes the scan's `size` in bytes, with the role of the scan's size axis. The comparison itself
//! is not touched: only the parameters the scan groups and orders by.

use perflab_core::{parse_size, ParamRole, ParamValue, Params};

use crate::tables::compare::ComparisonTable;

/// The name of the parameter a size placeholder becomes: the scan's tables head their
/// size column with it (`size`, in KiB), whatever the command called it (`kb`).
const AXIS: &str = "size";

/// `exec`'s parameters of `K=V;K=V` pairs.
const PAIRS: [&str; 2] = ["args", "env"];

/// Placeholder names read as a size, with the bytes of one unit; `None`: the value
/// carries its unit (`64MB`).
const SIZE_NAMES: [(&str, Option<u64>); 8] = [
    ("kb", Some(1 << 10)),
    ("kib", Some(1 << 10)),
    ("mb", Some(1 << 20)),
    ("mib", Some(1 << 20)),
    ("bytes", Some(1)),
    ("size", None),
    ("buf", None),
    ("buffer", None),
];

/// `table` with its rows' `args`/`env` spread into parameters, a size placeholder
/// (`kb=32`) becoming [`AXIS`] in bytes with the role of the scan's size axis, and that
/// name; `None` where no row has one, or a row has a parameter of that name already.
pub fn spread(table: &ComparisonTable) -> Option<(ComparisonTable, String)> {
    let params = || {
        table
            .rows
            .iter()
            .map(|r| &r.params)
            .chain(table.unmatched.iter().map(|u| &u.params))
    };
    if params().any(|p| p.get(AXIS).is_some()) {
        return None;
    }
    let mut out = table.clone();
    let mut found = false;
    for p in out
        .rows
        .iter_mut()
        .map(|r| &mut r.params)
        .chain(out.unmatched.iter_mut().map(|u| &mut u.params))
    {
        found |= spread_params(p);
    }
    if !found {
        return None;
    }
    out.param_roles.insert(AXIS, ParamRole::SizeAxis);
    Some((out, AXIS.to_string()))
}

/// Spreads `p`'s pairs in place; true when a size placeholder became [`AXIS`].
fn spread_params(p: &mut Params) -> bool {
    let mut axis: Option<String> = None;
    for name in PAIRS {
        let Some(ParamValue::Str(text)) = p.get(name).cloned() else {
            continue;
        };
        let pairs: Vec<(&str, &str)> = text
            .split(';')
            .filter_map(|kv| kv.split_once('='))
            .map(|(k, v)| (k.trim(), v.trim()))
            .collect();
        if pairs.is_empty() {
            continue;
        }
        p.0.remove(name);
        for (k, v) in pairs {
            match size_of(k, v) {
                Some(bytes) if axis.is_none() => {
                    p.0.insert(AXIS.to_string(), ParamValue::Int(bytes as i64));
                    axis = Some(k.to_string());
                }
                _ => {
                    p.0.insert(k.to_string(), ParamValue::Str(v.to_string()));
                }
            }
        }
    }
    axis.is_some()
}

/// The bytes `k=v` stands for, when `k` names a size.
fn size_of(k: &str, v: &str) -> Option<u64> {
    let (_, unit) = SIZE_NAMES.iter().find(|(n, _)| n.eq_ignore_ascii_case(k))?;
    match unit {
        Some(unit) => v.parse::<u64>().ok()?.checked_mul(*unit),
        None => parse_size(v).ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(args: &str, env: &str) -> Params {
        let mut p = Params::default();
        p.0.insert("args".into(), ParamValue::Str(args.into()));
        p.0.insert("env".into(), ParamValue::Str(env.into()));
        p
    }

    #[test]
    fn a_size_placeholder_becomes_the_axis_and_the_rest_named_parameters() {
        let mut p = params("kb=32", "HUGE=1");
        assert!(spread_params(&mut p));
        assert_eq!(p.get(AXIS), Some(&ParamValue::Int(32 << 10)));
        assert_eq!(p.get("kb"), None);
        assert_eq!(p.get("HUGE"), Some(&ParamValue::Str("1".into())));
        assert_eq!(p.get("args"), None);

        let mut p = params("buf=64MB;loops=20", "");
        assert!(spread_params(&mut p));
        assert_eq!(p.get(AXIS), Some(&ParamValue::Int(64 << 20)));
        assert_eq!(p.get("loops"), Some(&ParamValue::Str("20".into())));

        let mut p = params("n=3", "");
        assert!(!spread_params(&mut p));
    }
}
