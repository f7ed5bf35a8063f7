//! A variant's knob settings, in the order they were written. Order matters: settings are
//! applied in it (and restored in reverse), so a `before=` hook written after `fake=7`
//! sees 7; and one knob may appear twice (two `before=` commands, IRQ affinity for two
//! devices).
//!
//! Written as a TOML table (`knobs = { cpuidle = "poll-only", pmqos = "0" }`, order kept),
//! or, to name a knob twice, as a list of pairs (`knobs = [["before", "a"], ["before",
//! "b"]]`). Stored as the list of pairs, because a JSON object read back into a
//! `serde_json::Value` comes out in alphabetical order; a stored map (runs stored before
//! this type) reads back in the order it has, which is the order it was applied in then.

use serde::de::{MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KnobSettings(Vec<(String, String)>);

impl KnobSettings {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a setting after the others (a knob already there stays: it is set twice).
    pub fn push(&mut self, name: impl Into<String>, value: impl Into<String>) {
        self.0.push((name.into(), value.into()));
    }

    /// `(name, value)` in written order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// The first value of `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.iter().find(|(k, _)| *k == name).map(|(_, v)| v)
    }

    /// Every value of `name`, mutably, in order (to resolve `hugepages = "2M:auto"`).
    pub fn values_mut<'a>(&'a mut self, name: &'a str) -> impl Iterator<Item = &'a mut String> {
        self.0
            .iter_mut()
            .filter(move |(k, _)| k == name)
            .map(|(_, v)| v)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// `name=value` settings, in order.
    pub fn settings(&self) -> Vec<String> {
        self.iter().map(|(k, v)| format!("{k}={v}")).collect()
    }
}

impl<K: Into<String>, V: Into<String>> FromIterator<(K, V)> for KnobSettings {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        Self(
            iter.into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        )
    }
}

impl Serialize for KnobSettings {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(|(k, v)| [k, v]))
    }
}

impl<'de> Deserialize<'de> for KnobSettings {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Settings;
        impl<'de> Visitor<'de> for Settings {
            type Value = KnobSettings;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(
                    "knob settings: a table of knob = \"value\", or a list of [knob, value] pairs",
                )
            }

            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<KnobSettings, A::Error> {
                let mut out = KnobSettings::new();
                while let Some((k, v)) = m.next_entry::<String, String>()? {
                    out.push(k, v);
                }
                Ok(out)
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<KnobSettings, A::Error> {
                let mut out = KnobSettings::new();
                while let Some([k, v]) = s.next_element::<[String; 2]>()? {
                    out.push(k, v);
                }
                Ok(out)
            }
        }
        d.deserialize_any(Settings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize, Serialize)]
    struct V {
        #[serde(default)]
        knobs: KnobSettings,
    }

    #[test]
    fn a_toml_table_keeps_its_written_order() {
        let v: V = toml::from_str("knobs = { zeta = \"1\", alpha = \"2\", mid = \"3\" }").unwrap();
        assert_eq!(v.knobs.settings(), ["zeta=1", "alpha=2", "mid=3"]);
        let v: V = toml::from_str("[knobs]\nfake = \"7\"\nbefore = \"true\"\n").unwrap();
        assert_eq!(v.knobs.settings(), ["fake=7", "before=true"]);
    }

    #[test]
    fn a_list_of_pairs_names_a_knob_twice() {
        let v: V =
            toml::from_str("knobs = [[\"before\", \"a\"], [\"before\", \"b\"], [\"fake\", \"1\"]]")
                .unwrap();
        assert_eq!(v.knobs.settings(), ["before=a", "before=b", "fake=1"]);
        assert_eq!(v.knobs.get("before"), Some("a"));
        let e = toml::from_str::<V>("knobs = [[\"before\"]]").unwrap_err();
        assert!(e.to_string().contains("2"), "{e}");
    }

    #[test]
    fn stored_json_keeps_the_order_through_a_value() {
        let k: KnobSettings = [("zeta", "1"), ("alpha", "2"), ("zeta", "3")]
            .into_iter()
            .collect();
        let value = serde_json::to_value(V { knobs: k.clone() }).unwrap();
        let back: V = serde_json::from_value(value).unwrap();
        assert_eq!(back.knobs, k);
        // A run stored before this type kept a map: it reads back as it is.
        let old: V =
            serde_json::from_str(r#"{"knobs": {"cpuidle": "poll-only", "pmqos": "0"}}"#).unwrap();
        assert_eq!(old.knobs.settings(), ["cpuidle=poll-only", "pmqos=0"]);
        let none: V = serde_json::from_str("{}").unwrap();
        assert!(none.knobs.is_empty());
    }

    #[test]
    fn values_can_be_resolved_in_place() {
        let mut k: KnobSettings = [("hugepages", "2M:auto"), ("thp", "never")]
            .into_iter()
            .collect();
        for v in k.values_mut("hugepages") {
            *v = "2M:64".into();
        }
        assert_eq!(k.settings(), ["hugepages=2M:64", "thp=never"]);
    }
}
