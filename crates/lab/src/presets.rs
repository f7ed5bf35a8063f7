//! Built-in studies, shipped as TOML presets (the same files a user may copy and edit).

use crate::error::Result;
use crate::spec::ExperimentSpec;

/// (name, TOML text) of every built-in study.
pub const PRESETS: &[(&str, &str)] = &[
    ("quick", include_str!("../../../presets/quick.toml")),
    ("idle-ipi", include_str!("../../../presets/idle-ipi.toml")),
    ("memxfer", include_str!("../../../presets/memxfer.toml")),
    ("gpu-xfer", include_str!("../../../presets/gpu-xfer.toml")),
    ("irq-fill", include_str!("../../../presets/irq-fill.toml")),
    ("netpaths", include_str!("../../../presets/netpaths.toml")),
    ("parallel", include_str!("../../../presets/parallel.toml")),
    (
        "perf-memcpy",
        include_str!("../../../presets/perf-memcpy.toml"),
    ),
];

pub fn names() -> Vec<&'static str> {
    PRESETS.iter().map(|(n, _)| *n).collect()
}

/// The preset `name`, parsed; `None` when there is no such study.
pub fn preset(name: &str) -> Option<Result<ExperimentSpec>> {
    PRESETS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(n, text)| Ok(ExperimentSpec::from_toml(&format!("preset {n}"), text)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_parses() {
        for n in names() {
            let s = preset(n).unwrap().unwrap();
            assert_eq!(s.name, n);
        }
        assert!(preset("nope").is_none());
    }
}
