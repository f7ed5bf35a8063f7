//! The knobs perflab knows: one line per knob, its descriptor (declared in the knob's own
//! file) and how to build it from a value; names, help and `parse_knob` derive from it.

use std::sync::LazyLock;

use perflab_core::{Descriptor, Registered, Registry};

use crate::cpuidle::CpuidleKnob;
use crate::error::KnobError;
use crate::fake::FakeKnob;
use crate::hooks::{HookKnob, When};
use crate::hugepages::HugePagesKnob;
use crate::irq_affinity::IrqAffinityKnob;
use crate::knob::{Knob, Settings};
use crate::netpath::NetPathKnob;
use crate::pmqos::PmQosKnob;
use crate::thp::{ThpAttr, ThpKnob};
use crate::{cpuidle, fake, hooks, hugepages, irq_affinity, netpath, pmqos, thp};

/// One knob in the registry: its descriptor (declared in its own file) and how to build
/// it from the value a user wrote.
pub struct Entry {
    pub descriptor: &'static Descriptor,
    pub parse: fn(&str) -> Result<Box<dyn Knob>, KnobError>,
}

impl Registered for Entry {
    fn descriptor(&self) -> &'static Descriptor {
        self.descriptor
    }
}

// One line per knob.
#[rustfmt::skip]
static REGISTRY: Registry<Entry> = Registry::new(&[
    Entry { descriptor: &cpuidle::DESCRIPTOR, parse: |v| Ok(Box::new(CpuidleKnob::parse(v)?)) },
    Entry { descriptor: &pmqos::DESCRIPTOR, parse: |v| Ok(Box::new(PmQosKnob::parse(v)?)) },
    Entry { descriptor: &hugepages::DESCRIPTOR, parse: |v| Ok(Box::new(HugePagesKnob::parse(v)?)) },
    Entry { descriptor: &thp::DESCRIPTOR, parse: |v| Ok(Box::new(ThpKnob::parse(ThpAttr::Enabled, v)?)) },
    Entry { descriptor: &thp::DEFRAG_DESCRIPTOR, parse: |v| Ok(Box::new(ThpKnob::parse(ThpAttr::Defrag, v)?)) },
    Entry { descriptor: &hooks::BEFORE_DESCRIPTOR, parse: |v| Ok(Box::new(HookKnob::parse(When::Before, v)?)) },
    Entry { descriptor: &hooks::AFTER_DESCRIPTOR, parse: |v| Ok(Box::new(HookKnob::parse(When::After, v)?)) },
    Entry { descriptor: &netpath::DESCRIPTOR, parse: |v| Ok(Box::new(NetPathKnob::parse(v)?)) },
    Entry { descriptor: &irq_affinity::DESCRIPTOR, parse: |v| Ok(Box::new(IrqAffinityKnob::parse(v)?)) },
    Entry { descriptor: &fake::DESCRIPTOR, parse: |v| Ok(Box::new(FakeKnob { value: v.to_string() })) },
]);

/// Every knob, in the order `perflab list` shows them.
pub fn registry() -> &'static [Entry] {
    REGISTRY.entries()
}

static NAMES: LazyLock<Vec<(&'static str, &'static str)>> =
    LazyLock::new(|| REGISTRY.descriptors().map(|d| (d.name, d.help)).collect());

/// Every knob name with its one-line help.
pub fn knob_names() -> &'static [(&'static str, &'static str)] {
    &NAMES
}

/// Builds the knob `name` set to `value`.
pub fn parse_knob(name: &str, value: &str) -> Result<Box<dyn Knob>, KnobError> {
    let name = name.trim();
    match REGISTRY.get(name) {
        Some(e) => (e.parse)(value),
        None => Err(KnobError::UnknownKnob {
            name: name.to_string(),
            valid: REGISTRY.known(),
        }),
    }
}

impl Settings {
    /// Builds the knobs from `name=value` settings, e.g. `["cpuidle=poll-only", "pmqos=0"]`.
    pub fn parse<S: AsRef<str>>(settings: &[S]) -> Result<Self, KnobError> {
        let knobs = settings
            .iter()
            .map(|s| parse_setting(s.as_ref()))
            .collect::<Result<_, _>>()?;
        Ok(Self::new(knobs))
    }
}

/// Builds a knob from `name=value`, the form used on the command line and in names.
pub fn parse_setting(setting: &str) -> Result<Box<dyn Knob>, KnobError> {
    match setting.split_once('=') {
        Some((name, value)) => parse_knob(name, value),
        None => Err(KnobError::InvalidValue {
            knob: setting.trim().to_string(),
            value: String::new(),
            reason: "expected NAME=VALUE, e.g. cpuidle=poll-only".into(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn names_round_trip_through_parse() {
        for setting in [
            "cpuidle=poll-only",
            "cpuidle=all",
            "cpuidle=states:C1,C1E",
            "pmqos=0",
            "hugepages=2M:512",
            "hugepages=1G:0",
            "thp=never",
            "thp_defrag=defer+madvise",
            "fake=7",
            "netpath=veth",
            "netpath=ovs",
            "irqaffinity=virtio2-input.0:1",
            "irqaffinity=36,38:0-1",
        ] {
            assert_eq!(parse_setting(setting).unwrap().name(), setting);
        }
    }

    #[test]
    fn bad_input_gives_one_line_errors_listing_the_valid_forms() {
        let cases = [
            (
                "nosuch",
                "x",
                "cpuidle, pmqos, hugepages, thp, thp_defrag, before, after, netpath, irqaffinity, fake",
            ),
            ("cpuidle", "deep", "poll-only, all, or states:"),
            ("cpuidle", "states:", "at least one state"),
            ("pmqos", "-1", "integer from 0"),
            ("pmqos", "fast", "integer from 0"),
            ("hugepages", "2M", "SIZE:COUNT, e.g. 2M:512"),
            ("hugepages", "2X:4", "(SIZE such as 2M, 2048K, 1G"),
            ("hugepages", "0:4", "whole number of kilobytes above 0"),
            ("hugepages", "100:4", "whole number of kilobytes above 0"),
            ("hugepages", "2M:-1", "COUNT an integer >= 0"),
            (
                "hugepages",
                "2M:auto",
                "`auto` must be resolved to a page count",
            ),
            ("hugepages", "1G:99999999999999", "overflow"),
            ("thp", "sometimes", "expected one of always, madvise, never"),
            (
                "netpath",
                "vxlan",
                "expected one of loopback, veth, bridge, macvlan, ipvlan, tap, ovs",
            ),
            ("irqaffinity", "eth0", "DEV:CPULIST"),
            ("irqaffinity", "eth0:9-1", "DEV:CPULIST"),
            (
                "thp_defrag",
                "[madvise]",
                "expected one of always, defer, defer+madvise, madvise, never",
            ),
        ];
        for (name, value, expect) in cases {
            let msg = parse_knob(name, value).err().unwrap().to_string();
            assert!(msg.contains(expect), "{name}={value}: {msg}");
            assert!(!msg.contains('\n'), "{msg}");
        }
        assert!(parse_setting("cpuidle").is_err());
    }

    #[test]
    fn descriptors_are_knobs_with_a_described_value() {
        for e in registry() {
            let d = e.descriptor;
            assert_eq!(d.kind, perflab_core::Kind::Knob, "{}", d.name);
            assert_eq!(d.params.len(), 1, "{}", d.name);
            assert!(!d.help.is_empty(), "{}", d.name);
        }
        let thp = registry()
            .iter()
            .find(|e| e.descriptor.name == "thp")
            .unwrap();
        assert!(matches!(
            thp.descriptor.params[0].kind,
            perflab_core::ParamKind::Choice(c) if c == ["always", "madvise", "never"]
        ));
    }

    proptest! {
        #[test]
        fn never_panics(name in "\\PC{0,12}", value in "\\PC{0,30}") {
            let _ = parse_knob(&name, &value);
            let _ = parse_setting(&format!("{name}={value}"));
        }
    }
}
