//! `fake=VALUE`: writes VALUE to `sys/kernel/perflab_fake` under the root. No kernel has
//! that file, so the knob works only on a test tree, where end-to-end tests can see what
//! was applied and that it was restored.

use perflab_core::Unavailable;
use perflab_core::{Descriptor, Kind, Needs, ParamKind, ParamSpec, ReportHints};
use perflab_sys::SysRoot;

use crate::error::KnobError;
use crate::files::{write_files, FileGuard};
use crate::journal::Journal;
use crate::knob::{Knob, KnobGuard};

pub static DESCRIPTOR: Descriptor = Descriptor {
    kind: Kind::Knob,
    name: "fake",
    help: "write VALUE to sys/kernel/perflab_fake under the root (test trees only)",
    params: &[ParamSpec {
        name: "value",
        role: perflab_core::ParamRole::Plain,
        help: "any text",
        kind: ParamKind::Text { max_len: 4096 },
        default: None,
    }],
    needs: Needs::NONE,
    report: ReportHints::None,
};

/// The file the fake knob writes, relative to the root.
pub const FAKE_PATH: &str = "sys/kernel/perflab_fake";

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FakeKnob {
    pub value: String,
}

impl Knob for FakeKnob {
    fn name(&self) -> String {
        format!("fake={}", self.value)
    }

    fn check(&self, sys: &SysRoot) -> Result<(), Unavailable> {
        if !sys.exists(FAKE_PATH) {
            return Err(Unavailable::new(format!(
                "{} does not exist: the fake knob works only on a test tree",
                sys.path(FAKE_PATH).display()
            )));
        }
        if !sys.writable(FAKE_PATH) {
            return Err(Unavailable::new(format!(
                "{} is not writable",
                sys.path(FAKE_PATH).display()
            )));
        }
        Ok(())
    }

    fn targets(&self, _sys: &SysRoot) -> Vec<String> {
        vec![FAKE_PATH.to_string()]
    }

    fn apply(&self, sys: &SysRoot, journal: &Journal) -> Result<Box<dyn KnobGuard>, KnobError> {
        let writes = [(FAKE_PATH.to_string(), self.value.clone().into_bytes())];
        Ok(Box::new(FakeGuard {
            files: write_files(sys, journal, &self.name(), &writes)?,
            value: self.value.clone(),
        }))
    }
}

/// Publishes `fake.value`, so tests can see knob facts reach the workload.
struct FakeGuard {
    files: FileGuard,
    value: String,
}

impl KnobGuard for FakeGuard {
    fn restore(self: Box<Self>) -> Result<(), KnobError> {
        Box::new(self.files).restore()
    }

    fn facts(&self) -> Vec<(String, String)> {
        vec![("fake.value".into(), self.value.clone())]
    }
}
