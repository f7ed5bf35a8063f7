//! The host fingerprint stored with every run: what a reader of the numbers needs to know
//! about the machine, and what a comparison of two runs checks first. `perflab_lab` fills
//! it; the store keeps it as JSON; reports and `compare` read it through this one type and
//! its one [`Fingerprint::diff`].
//!
//! Every field is optional because stored runs differ: imported runs carry a hostname and
//! a version only, runs from before the timing probe carry none, and readers say
//! "unknown" for a field that is missing but "none" for one the machine left empty.
//! Keys this type does not know are kept in [`Fingerprint::extra`], so a run copied from
//! one store to another keeps every key it had.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::timing_probe::TimingProbe;

/// The machine a run ran on. The JSON shape is the one stored since the first schema:
/// one object, these keys, absent keys left out.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Fingerprint {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hostname: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub machine: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cmdline: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub online_cpus: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cores: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub threads_per_core: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idle_driver: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idle_governor: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpufreq_governor: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub isolated_cpus: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thp: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub perflab_version: Option<String>,
    /// Set when the measurements read a fixture tree instead of the live machine.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sysroot: Option<String>,
    /// The timing probe taken when the run was created; `None` in runs from before it
    /// (or one that does not read as a probe, which then stays in `extra`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub probe: Option<TimingProbe>,
    /// Keys this type does not know (`imported_from`), and known keys whose stored value
    /// has another type, kept as they were.
    #[serde(flatten)]
    pub extra: BTreeMap<String, Value>,
}

/// One field two fingerprints differ in; `None` where a fingerprint lacks the field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldDiff {
    pub field: &'static str,
    pub a: Option<String>,
    pub b: Option<String>,
}

impl Fingerprint {
    /// Reads a stored fingerprint leniently: whatever is not an object (old runs may hold
    /// `null`) is an empty fingerprint, and a value of the wrong type is kept in `extra`
    /// rather than failing the run's load.
    pub fn from_json(value: Value) -> Self {
        let Value::Object(map) = value else {
            return Self::default();
        };
        let mut extra: BTreeMap<String, Value> = map.into_iter().collect();
        let mut text = |k: &str| take(&mut extra, k, |v| v.as_str().map(str::to_string));
        let mut fp = Fingerprint {
            hostname: text("hostname"),
            kernel: text("kernel"),
            machine: text("machine"),
            cmdline: text("cmdline"),
            cpu_model: text("cpu_model"),
            online_cpus: text("online_cpus"),
            cores: None,
            threads_per_core: None,
            idle_driver: text("idle_driver"),
            idle_governor: text("idle_governor"),
            cpufreq_governor: text("cpufreq_governor"),
            isolated_cpus: text("isolated_cpus"),
            thp: text("thp"),
            perflab_version: text("perflab_version"),
            sysroot: text("sysroot"),
            probe: None,
            extra: BTreeMap::new(),
        };
        fp.cores = take(&mut extra, "cores", Value::as_u64);
        fp.threads_per_core = take(&mut extra, "threads_per_core", Value::as_u64);
        fp.probe = take(&mut extra, "probe", |v| {
            serde_json::from_value(v.clone()).ok()
        });
        fp.extra = extra;
        fp
    }

    /// The fields a comparison looks at, in the stored order, as text (numbers written
    /// out). The timing probe is not among them: it differs a little every time, and the
    /// drift guard judges it.
    pub fn fields(&self) -> [(&'static str, Option<String>); 15] {
        let s = |v: &Option<String>| v.clone();
        let n = |v: &Option<u64>| v.map(|x| x.to_string());
        [
            ("hostname", s(&self.hostname)),
            ("kernel", s(&self.kernel)),
            ("machine", s(&self.machine)),
            ("cmdline", s(&self.cmdline)),
            ("cpu_model", s(&self.cpu_model)),
            ("online_cpus", s(&self.online_cpus)),
            ("cores", n(&self.cores)),
            ("threads_per_core", n(&self.threads_per_core)),
            ("idle_driver", s(&self.idle_driver)),
            ("idle_governor", s(&self.idle_governor)),
            ("cpufreq_governor", s(&self.cpufreq_governor)),
            ("isolated_cpus", s(&self.isolated_cpus)),
            ("thp", s(&self.thp)),
            ("perflab_version", s(&self.perflab_version)),
            ("sysroot", s(&self.sysroot)),
        ]
    }

    /// The fields of [`Fingerprint::fields`] whose values differ, in that order: the one
    /// comparison of two fingerprints, which `compare` and the full report both show.
    pub fn diff(&self, other: &Fingerprint) -> Vec<FieldDiff> {
        self.fields()
            .into_iter()
            .zip(other.fields())
            .filter(|((_, a), (_, b))| a != b)
            .map(|((field, a), (_, b))| FieldDiff { field, a, b })
            .collect()
    }
}

/// Removes `key` from `map` when `read` understands its value; leaves it there otherwise.
fn take<T>(
    map: &mut BTreeMap<String, Value>,
    key: &str,
    read: impl Fn(&Value) -> Option<T>,
) -> Option<T> {
    let v = read(map.get(key)?)?;
    map.remove(key);
    Some(v)
}

impl<'de> Deserialize<'de> for Fingerprint {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Value::deserialize(d).map(Fingerprint::from_json)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn probe() -> Value {
        json!({"readings": [{"name": "integer loop", "unit": "ns/op", "value": 2.0,
               "better": "lower"}], "tries": 7, "build": "release", "at": 1.0})
    }

    /// A fingerprint as `perflab run` has stored it reads back into every field and
    /// writes out to the same JSON.
    #[test]
    fn a_stored_fingerprint_round_trips() {
        let stored = json!({
            "hostname": "lab1", "kernel": "6.18.0", "machine": "x86_64", "cmdline": "ro",
            "cpu_model": "EPYC", "online_cpus": "0-1", "cores": 2, "threads_per_core": 1,
            "idle_driver": "haltpoll", "idle_governor": "haltpoll",
            "cpufreq_governor": "none", "isolated_cpus": "none", "thp": "madvise",
            "perflab_version": "0.1.0", "probe": probe(),
        });
        let fp = Fingerprint::from_json(stored.clone());
        assert_eq!(fp.cores, Some(2));
        assert_eq!(fp.probe.as_ref().unwrap().tries, 7);
        assert!(fp.extra.is_empty(), "{:?}", fp.extra);
        assert_eq!(serde_json::to_value(&fp).unwrap(), stored);
        let back: Fingerprint = serde_json::from_value(stored).unwrap();
        assert_eq!(back, fp);
    }

    /// Imported runs, hand-made runs and `null` all load; unknown keys and values of
    /// another type are kept, not dropped.
    #[test]
    fn partial_and_odd_fingerprints_load_and_keep_their_keys() {
        let fp: Fingerprint = serde_json::from_str("null").unwrap();
        assert_eq!(fp, Fingerprint::default());
        let odd = json!({"hostname": "imported", "imported_from": "a.csv", "cores": "four",
                         "probe": {"no": "probe"}});
        let fp = Fingerprint::from_json(odd.clone());
        assert_eq!(fp.hostname.as_deref(), Some("imported"));
        assert_eq!((fp.cores, fp.probe.is_none()), (None, true));
        assert_eq!(
            fp.extra.keys().collect::<Vec<_>>(),
            ["cores", "imported_from", "probe"]
        );
        assert_eq!(serde_json::to_value(&fp).unwrap(), odd);
    }

    #[test]
    fn diff_lists_changed_fields_and_leaves_the_probe_out() {
        let a = Fingerprint::from_json(json!({"kernel": "6.1", "cores": 2}));
        let b = Fingerprint::from_json(json!({"kernel": "6.6", "cores": 2, "probe": probe()}));
        assert_eq!(
            a.diff(&b),
            vec![FieldDiff {
                field: "kernel",
                a: Some("6.1".into()),
                b: Some("6.6".into())
            }]
        );
        assert!(a.diff(&a).is_empty());
        // Missing and empty are different answers: "unknown" and "none" to a reader.
        let empty = Fingerprint::from_json(json!({"kernel": "6.1", "cores": 2, "thp": ""}));
        assert_eq!(a.diff(&empty)[0].field, "thp");
        assert_eq!(a.diff(&empty)[0].a, None);
    }
}
