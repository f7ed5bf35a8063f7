//! What a parameter is to the report, beyond its name: the two CPUs of a pair, the size a
//! scan runs along, the unit its values print in. Workloads declare a role on each
//! [`ParamSpec`] that has one, importers on the parameters they make (a seed's scan
//! table's size), and the report and the binary find parameters by role, never by name:
//! renaming a workload's `cpu_a` or `size` then cannot silently break a table.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use crate::params::role::ParamRole;
use crate::params::{format_bytes, ParamKind, ParamSpec, ParamValue};
use crate::quantity_text::with_units::duration_text;

impl ParamRole {
    /// The role of a declared parameter: the one it declares, else the one its kind
    /// implies (a size prints as bytes, a duration with its unit).
    pub fn of_spec(spec: &ParamSpec) -> ParamRole {
        match (spec.role, spec.kind) {
            (ParamRole::Plain, ParamKind::Size { .. }) => ParamRole::Bytes,
            (ParamRole::Plain, ParamKind::Duration { .. }) => ParamRole::Seconds,
            (role, _) => role,
        }
    }

    /// `value` in the unit this role gives it: `64 KiB`, `50 µs`; as stored otherwise.
    pub fn value_text(self, value: &ParamValue) -> String {
        match (self, value) {
            (ParamRole::Bytes | ParamRole::SizeAxis, ParamValue::Int(b)) if *b >= 0 => {
                bytes_text(*b as u64)
            }
            (ParamRole::Seconds, ParamValue::Float(s)) => duration_text(*s),
            (ParamRole::Seconds, ParamValue::Int(s)) => duration_text(*s as f64),
            _ => value.to_string(),
        }
    }
}

/// Bytes in binary units as the tables head their columns: `64 KiB`, `2 MiB`, `1.5 KiB`,
/// `100 B`.
pub fn bytes_text(bytes: u64) -> String {
    let short = format_bytes(bytes);
    let unit = match short.chars().last() {
        Some('K') => "KiB",
        Some('M') => "MiB",
        Some('G') => "GiB",
        Some('T') => "TiB",
        _ => return format!("{short} B"),
    };
    format!("{} {unit}", &short[..short.len() - 1])
}

/// The roles of a run's parameters, by name; a name not held is [`ParamRole::Plain`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ParamRoles(BTreeMap<String, ParamRole>);

impl ParamRoles {
    /// The roles `specs` declare (or their kinds imply).
    pub fn from_specs(specs: &[ParamSpec]) -> Self {
        let mut out = Self::default();
        for s in specs {
            out.insert(s.name, ParamRole::of_spec(s));
        }
        out
    }

    /// Gives `name` the role `role` (a plain one is not kept).
    pub fn insert(&mut self, name: &str, role: ParamRole) {
        if role == ParamRole::Plain {
            self.0.remove(name);
        } else {
            self.0.insert(name.to_string(), role);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The role of parameter `name`.
    pub fn role(&self, name: &str) -> ParamRole {
        self.0.get(name).copied().unwrap_or_default()
    }

    /// The parameter that has `role`, where one does (the first by name if several).
    pub fn name_of(&self, role: ParamRole) -> Option<&str> {
        self.0
            .iter()
            .find(|(_, r)| **r == role)
            .map(|(n, _)| n.as_str())
    }

    /// The one parameter that has `role`; `None` where none or several do (netrr's client
    /// and server CPUs are no single pinned CPU).
    pub fn single(&self, role: ParamRole) -> Option<&str> {
        let mut with = self.0.iter().filter(|(_, r)| **r == role);
        match (with.next(), with.next()) {
            (Some((n, _)), None) => Some(n.as_str()),
            _ => None,
        }
    }

    /// Whether `name` names CPUs a point runs on: a pair's or a pinned one.
    pub fn names_cpus(&self, name: &str) -> bool {
        matches!(
            self.role(name),
            ParamRole::CpuA | ParamRole::CpuB | ParamRole::Cpu
        )
    }

    /// Whether `name` is one of the two CPUs of a pair.
    pub fn is_cpu_pair(&self, name: &str) -> bool {
        matches!(self.role(name), ParamRole::CpuA | ParamRole::CpuB)
    }

    /// The value of parameter `name` in its role's unit.
    pub fn value_text(&self, name: &str, value: &ParamValue) -> String {
        self.role(name).value_text(value)
    }

    /// `name=value` in its unit: `size=64 KiB`. Every place that shows a person a
    /// parameter's value (the report's tables, mail and HTML, `show`, the progress lines,
    /// the adaptive status, the dry run's plan) writes it through here with the run's
    /// roles ([`crate::catalog::param_roles`]), so a value reads the same everywhere.
    pub fn named_value(&self, name: &str, value: &ParamValue) -> String {
        format!("{name}={}", self.value_text(name, value))
    }

    /// `a=1 b=50 µs`: every parameter of `params` as [`ParamRoles::named_value`] writes it,
    /// in the order [`crate::Params::describe`] does.
    pub fn describe(&self, params: &crate::Params) -> String {
        params
            .0
            .iter()
            .map(|(k, v)| self.named_value(k, v))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// These roles with `other`'s added where these have none for a name (the two runs of
    /// a comparison).
    pub fn merged(&self, other: &ParamRoles) -> ParamRoles {
        let mut out = self.clone();
        for (n, r) in &other.0 {
            out.0.entry(n.clone()).or_insert(*r);
        }
        out
    }

    /// The CPU pair of a point, where these roles name both CPUs and the point holds them.
    pub fn cpu_pair(&self, params: &crate::Params) -> Option<(u32, u32)> {
        let get = |role| match params.get(self.name_of(role)?) {
            Some(ParamValue::Int(i)) => u32::try_from(*i).ok(),
            _ => None,
        };
        Some((get(ParamRole::CpuA)?, get(ParamRole::CpuB)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_print_in_binary_units_and_durations_with_theirs() {
        assert_eq!(bytes_text(65536), "64 KiB");
        assert_eq!(bytes_text(2 << 20), "2 MiB");
        assert_eq!(bytes_text(1536), "1.50 KiB");
        assert_eq!(bytes_text(100), "100 B");
        let v = ParamValue::Int(65536);
        assert_eq!(ParamRole::SizeAxis.value_text(&v), "64 KiB");
        assert_eq!(ParamRole::Plain.value_text(&v), "65536");
        assert_eq!(
            ParamRole::Seconds.value_text(&ParamValue::Float(0.00005)),
            "50 µs"
        );
    }

    #[test]
    fn kinds_imply_a_unit_and_declared_roles_win() {
        let spec = |role, kind| ParamSpec {
            name: "x",
            role,
            help: "",
            kind,
            default: None,
        };
        let size = ParamKind::Size { min: 0, max: 1 };
        assert_eq!(
            ParamRole::of_spec(&spec(ParamRole::Plain, size)),
            ParamRole::Bytes
        );
        assert_eq!(
            ParamRole::of_spec(&spec(ParamRole::SizeAxis, size)),
            ParamRole::SizeAxis
        );
        assert_eq!(
            ParamRole::of_spec(&spec(ParamRole::CpuA, ParamKind::Cpu)),
            ParamRole::CpuA
        );
    }

    #[test]
    fn a_pair_is_read_by_role_whatever_its_names() {
        let mut roles = ParamRoles::default();
        roles.insert("anchor", ParamRole::CpuA);
        roles.insert("partner", ParamRole::CpuB);
        let mut p = crate::Params::default();
        p.0.insert("anchor".into(), ParamValue::Int(4));
        p.0.insert("partner".into(), ParamValue::Int(24));
        assert_eq!(roles.cpu_pair(&p), Some((4, 24)));
        p.0.insert("partner".into(), ParamValue::Int(-1));
        assert_eq!(roles.cpu_pair(&p), None);
        assert_eq!(ParamRoles::default().cpu_pair(&p), None);
        assert_eq!(roles.name_of(ParamRole::SizeAxis), None);
    }
}
