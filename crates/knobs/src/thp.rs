//! `thp=always|madvise|never` and `thp_defrag=always|defer|defer+madvise|madvise|never`:
//! the transparent huge page mode (`kernel/mm/transparent_hugepage/{enabled,defrag}`).
//!
//! These files show a choice list (`always [madvise] never`) but take only the bare word,
//! so what is journaled and written back is the selected word, not the bytes shown.

use perflab_core::{Descriptor, Kind, Need, Needs, ParamKind, ParamSpec, ReportHints};
use perflab_core::{Unavailable, WorkloadOutput};
use perflab_sys::hugepages::thp_path;
use perflab_sys::SysRoot;

use crate::effect::{ReadBack, Verified};
use crate::error::KnobError;
use crate::files::{read_choice, write_attrs, AttrWrite, Form};
use crate::journal::Journal;
use crate::knob::EffectProbe;
use crate::knob::{Knob, KnobGuard};

pub static DESCRIPTOR: Descriptor = Descriptor {
    kind: Kind::Knob,
    name: "thp",
    help: "transparent huge pages (kernel/mm/transparent_hugepage/enabled): always, madvise, never",
    params: &[ParamSpec {
        name: "value",
        role: perflab_core::ParamRole::Plain,
        help: "the THP mode",
        kind: ParamKind::Choice(&["always", "madvise", "never"]),
        default: None,
    }],
    needs: Needs::all(&[Need::Privileges, Need::HugePages]),
    report: ReportHints::None,
};

pub static DEFRAG_DESCRIPTOR: Descriptor = Descriptor {
    kind: Kind::Knob,
    name: "thp_defrag",
    help: "THP fault defrag effort: always, defer, defer+madvise, madvise, never",
    params: &[ParamSpec {
        name: "value",
        role: perflab_core::ParamRole::Plain,
        help: "the defrag mode",
        kind: ParamKind::Choice(&["always", "defer", "defer+madvise", "madvise", "never"]),
        default: None,
    }],
    needs: Needs::all(&[Need::Privileges, Need::HugePages]),
    report: ReportHints::None,
};

/// Which THP attribute a knob sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThpAttr {
    /// `enabled`: when page faults may get a huge page.
    Enabled,
    /// `defrag`: how hard a fault tries (compaction, reclaim) to find one.
    Defrag,
}

impl ThpAttr {
    /// The knob's name: `thp` or `thp_defrag`.
    pub fn knob(self) -> &'static str {
        match self {
            ThpAttr::Enabled => "thp",
            ThpAttr::Defrag => "thp_defrag",
        }
    }

    /// The words a kernel takes (6.x; an older kernel may offer fewer, which `check` sees).
    pub fn words(self) -> &'static [&'static str] {
        match self {
            ThpAttr::Enabled => &["always", "madvise", "never"],
            ThpAttr::Defrag => &["always", "defer", "defer+madvise", "madvise", "never"],
        }
    }

    /// The attribute file, relative to the root.
    pub fn path(self) -> String {
        thp_path(match self {
            ThpAttr::Enabled => "enabled",
            ThpAttr::Defrag => "defrag",
        })
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThpKnob {
    pub attr: ThpAttr,
    pub word: String,
}

impl ThpKnob {
    pub fn parse(attr: ThpAttr, value: &str) -> Result<Self, KnobError> {
        let word = value.trim();
        if attr.words().contains(&word) {
            Ok(Self {
                attr,
                word: word.to_string(),
            })
        } else {
            Err(KnobError::InvalidValue {
                knob: attr.knob().into(),
                value: value.into(),
                reason: format!("expected one of {}", attr.words().join(", ")),
            })
        }
    }
}

impl Knob for ThpKnob {
    fn name(&self) -> String {
        format!("{}={}", self.attr.knob(), self.word)
    }

    fn check(&self, sys: &SysRoot) -> Result<(), Unavailable> {
        let rel = self.attr.path();
        let path = sys.path(&rel);
        if !sys.exists(&rel) {
            return Err(Unavailable::new(format!(
                "{} is missing: the kernel has no transparent huge pages",
                path.display()
            ))
            .with_hint("it needs a kernel built with CONFIG_TRANSPARENT_HUGEPAGE"));
        }
        if !sys.writable(&rel) {
            return Err(Unavailable::new(format!(
                "{} is not writable: needs root",
                path.display()
            ))
            .with_hint("run perflab as root"));
        }
        let choice = read_choice(sys, &rel).map_err(|e| Unavailable::new(e.to_string()))?;
        if !choice.options.contains(&self.word) {
            return Err(Unavailable::new(format!(
                "{} offers {}, not {}",
                path.display(),
                choice.options.join(", "),
                self.word
            )));
        }
        Ok(())
    }

    fn targets(&self, _sys: &SysRoot) -> Vec<String> {
        vec![self.attr.path()]
    }

    fn apply(&self, sys: &SysRoot, journal: &Journal) -> Result<Box<dyn KnobGuard>, KnobError> {
        let write = AttrWrite {
            path: self.attr.path(),
            value: self.word.clone().into_bytes(),
            form: Form::Choice,
        };
        let guard = Box::new(write_attrs(sys, journal, &self.name(), &[write])?);
        let (rel, word) = (self.attr.path(), self.word.clone());
        Ok(Box::new(Verified::new(guard, move |_| {
            let (rel, word) = (rel.clone(), word.clone());
            // Another process (a second perflab, tuned, a script) may switch the mode
            // while the measurement runs: read back what the kernel uses at its end.
            Some(Box::new(ReadBack(
                move |sys: &SysRoot, _: &WorkloadOutput| match read_choice(sys, &rel) {
                    Ok(c) if c.selected == word => Ok(()),
                    Ok(c) => Err(format!(
                        "{} reads back [{}], not {word}: it was changed during the measurement",
                        sys.path(&rel).display(),
                        c.selected
                    )),
                    Err(e) => Err(format!("cannot read the mode back: {e}")),
                },
            )) as Box<dyn EffectProbe>)
        })))
    }
}
