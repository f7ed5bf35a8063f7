//! The knobs perflab knows, by name.

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

const KNOBS: &[(&str, &str)] = &[
    (
        "cpuidle",
        "idle states of every online CPU: poll-only, all, or states:NAME[,NAME...]",
    ),
    (
        "pmqos",
        "hold a CPU latency limit through /dev/cpu_dma_latency: microseconds, an integer >= 0",
    ),
    (
        "hugepages",
        "reserve COUNT more huge pages of SIZE in the hugetlb pool: SIZE:COUNT, e.g. 2M:512, 1G:2",
    ),
    (
        "thp",
        "transparent huge pages (kernel/mm/transparent_hugepage/enabled): always, madvise, never",
    ),
    (
        "thp_defrag",
        "THP fault defrag effort: always, defer, defer+madvise, madvise, never",
    ),
    (
        "before",
        "a shell command run when the variant is applied (a module parameter, a sysfs switch)",
    ),
    (
        "after",
        "a shell command run when the variant is restored, on every exit path",
    ),
    (
        "netpath",
        "a network path perflab builds in namespaces (root): loopback, veth, bridge, macvlan, ipvlan, tap, ovs",
    ),
    (
        "irqaffinity",
        "steer a device's or queue's interrupts to CPUs: DEV:CPULIST, e.g. eth0:1, virtio2-input.0:0, 36,38:1",
    ),
    (
        "fake",
        "write VALUE to sys/kernel/perflab_fake under the root (test trees only)",
    ),
];

/// Every knob name with its one-line help.
pub fn knob_names() -> &'static [(&'static str, &'static str)] {
    KNOBS
}

/// Builds the knob `name` set to `value`.
pub fn parse_knob(name: &str, value: &str) -> Result<Box<dyn Knob>, KnobError> {
    match name.trim() {
        "cpuidle" => Ok(Box::new(CpuidleKnob::parse(value)?)),
        "pmqos" => Ok(Box::new(PmQosKnob::parse(value)?)),
        "hugepages" => Ok(Box::new(HugePagesKnob::parse(value)?)),
        "thp" => Ok(Box::new(ThpKnob::parse(ThpAttr::Enabled, value)?)),
        "thp_defrag" => Ok(Box::new(ThpKnob::parse(ThpAttr::Defrag, value)?)),
        "before" => Ok(Box::new(HookKnob::parse(When::Before, value)?)),
        "after" => Ok(Box::new(HookKnob::parse(When::After, value)?)),
        "netpath" => Ok(Box::new(NetPathKnob::parse(value)?)),
        "irqaffinity" => Ok(Box::new(IrqAffinityKnob::parse(value)?)),
        "fake" => Ok(Box::new(FakeKnob {
            value: value.to_string(),
        })),
        _ => Err(KnobError::UnknownKnob {
            name: name.to_string(),
            valid: KNOBS.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", "),
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

    proptest! {
        #[test]
        fn never_panics(name in "\\PC{0,12}", value in "\\PC{0,30}") {
            let _ = parse_knob(&name, &value);
            let _ = parse_setting(&format!("{name}={value}"));
        }
    }
}
