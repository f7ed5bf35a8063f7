//! The kinds of network path `netpath=` builds, by name. A file of its own because the
//! knob (`netpath`) and the builders of each kind (`vm`) both read it.

use crate::error::KnobError;

/// The kinds of path perflab builds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PathKind {
    Loopback,
    Veth,
    Bridge,
    Macvlan,
    Ipvlan,
    Tap,
    Ovs,
    VmTap,
    VmTapNovhost,
    VmMacvtap,
    VmOvs,
    VmVfio,
}

impl PathKind {
    pub const ALL: [PathKind; 12] = [
        PathKind::Loopback,
        PathKind::Veth,
        PathKind::Bridge,
        PathKind::Macvlan,
        PathKind::Ipvlan,
        PathKind::Tap,
        PathKind::Ovs,
        PathKind::VmTap,
        PathKind::VmTapNovhost,
        PathKind::VmMacvtap,
        PathKind::VmOvs,
        PathKind::VmVfio,
    ];

    /// True for the paths that end in a guest perflab boots.
    pub fn is_vm(self) -> bool {
        matches!(
            self,
            PathKind::VmTap
                | PathKind::VmTapNovhost
                | PathKind::VmMacvtap
                | PathKind::VmOvs
                | PathKind::VmVfio
        )
    }

    pub fn name(self) -> &'static str {
        match self {
            PathKind::Loopback => "loopback",
            PathKind::Veth => "veth",
            PathKind::Bridge => "bridge",
            PathKind::Macvlan => "macvlan",
            PathKind::Ipvlan => "ipvlan",
            PathKind::Tap => "tap",
            PathKind::Ovs => "ovs",
            PathKind::VmTap => "vm-tap",
            PathKind::VmTapNovhost => "vm-tap-novhost",
            PathKind::VmMacvtap => "vm-macvtap",
            PathKind::VmOvs => "vm-ovs",
            PathKind::VmVfio => "vm-vfio",
        }
    }

    /// The names `netpath=` takes, comma-separated.
    pub fn valid_names() -> String {
        Self::ALL.map(Self::name).join(", ")
    }

    pub fn parse(name: &str) -> Result<Self, KnobError> {
        let name = name.trim();
        Self::ALL
            .into_iter()
            .find(|k| k.name() == name)
            .ok_or_else(|| KnobError::InvalidValue {
                knob: "netpath".into(),
                value: name.into(),
                reason: format!("unknown path; expected one of {}", Self::valid_names()),
            })
    }

    /// The kernel link types the path is made of.
    pub(crate) fn link_types(self) -> &'static [&'static str] {
        match self {
            PathKind::Loopback | PathKind::Tap => &[],
            PathKind::VmTap | PathKind::VmTapNovhost | PathKind::VmVfio => &[],
            PathKind::Veth | PathKind::Ovs | PathKind::VmOvs | PathKind::VmMacvtap => &["veth"],
            PathKind::Bridge => &["bridge"],
            PathKind::Macvlan => &["macvlan"],
            PathKind::Ipvlan => &["ipvlan"],
        }
    }
}
