//! Parameter kinds as the installed workloads declare them, for printing a value with
//! its unit ([`super::with_units::value_text`]). Apart from `with_units` because it reads
//! the catalog, whose parameter roles print through `with_units`: one module each way would be
//! a cycle.

use super::with_units::value_text;
use crate::catalog;
use crate::params::{ParamKind, ParamValue};

/// The declared kind of parameter `name` of `workload`, from the installed catalog;
/// `None` for a workload this program does not know (an imported run) or a name it does
/// not declare (a parameter a variant added).
pub fn kind_of(workload: &str, name: &str) -> Option<ParamKind> {
    catalog::workload(workload)?
        .params
        .iter()
        .find(|p| p.name == name)
        .map(|p| p.kind)
}

/// The kind every installed workload that declares a parameter `name` gives it, for a
/// value whose workload is not at hand (a table's fixed parameters): `None` where none
/// declares it or two declare different kinds, so no unit is guessed.
pub fn kind_by_name(name: &str) -> Option<ParamKind> {
    let mut kinds = catalog::workloads()
        .iter()
        .flat_map(|w| w.params.iter())
        .filter(|p| p.name == name)
        .map(|p| p.kind);
    let first = kinds.next()?;
    let same = |k: &ParamKind| std::mem::discriminant(k) == std::mem::discriminant(&first);
    kinds.all(|k| same(&k)).then_some(first)
}

/// [`value_text`] of parameter `name` of `workload`.
pub fn param_value_text(workload: &str, name: &str, value: &ParamValue) -> String {
    value_text(kind_of(workload, name), value)
}
