//! `before=CMD` and `after=CMD`: a variant's own set-up and tear-down commands, for settings
//! perflab has no knob for (a kernel module parameter, a driver's sysfs switch). `before`
//! runs when the variant is applied; `after` runs when it is restored, on every exit path
//! the other knobs restore on. After a SIGKILL perflab cannot know what `before` changed,
//! so the journal keeps the `after` command and `perflab restore` shows it to run by hand.

use perflab_core::{Descriptor, Kind, Needs, ParamKind, ParamSpec, ReportHints};
use std::process::Command;

use perflab_core::Unavailable;
use perflab_sys::SysRoot;

use crate::error::KnobError;
use crate::journal::{EntryId, Journal};
use crate::knob::{Knob, KnobGuard};

/// The value of both hooks: one shell command.
const COMMAND: &[ParamSpec] = &[ParamSpec {
    name: "value",
    role: perflab_core::ParamRole::Plain,
    help: "a shell command",
    kind: ParamKind::Text { max_len: 4096 },
    default: None,
}];

pub static BEFORE_DESCRIPTOR: Descriptor = Descriptor {
    kind: Kind::Knob,
    name: "before",
    help: "a shell command run when the variant is applied (a module parameter, a sysfs switch)",
    params: COMMAND,
    needs: Needs::NONE,
    report: ReportHints::None,
};

pub static AFTER_DESCRIPTOR: Descriptor = Descriptor {
    kind: Kind::Knob,
    name: "after",
    help: "a shell command run when the variant is restored, on every exit path",
    params: COMMAND,
    needs: Needs::NONE,
    report: ReportHints::None,
};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum When {
    Before,
    After,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HookKnob {
    pub when: When,
    pub cmd: String,
}

impl HookKnob {
    pub fn parse(when: When, value: &str) -> Result<Self, KnobError> {
        if value.trim().is_empty() {
            return Err(KnobError::InvalidValue {
                knob: name(when).into(),
                value: value.into(),
                reason: "give a shell command".into(),
            });
        }
        Ok(Self {
            when,
            cmd: value.to_string(),
        })
    }
}

fn name(when: When) -> &'static str {
    match when {
        When::Before => "before",
        When::After => "after",
    }
}

/// Runs `cmd` with /bin/sh; a non-zero exit is an error carrying the command's stderr.
fn run(cmd: &str) -> Result<(), KnobError> {
    let out = Command::new("/bin/sh")
        .arg("-c")
        .arg(cmd)
        .output()
        .map_err(|e| KnobError::Hook {
            cmd: cmd.into(),
            why: format!("cannot start /bin/sh: {e}"),
        })?;
    if out.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let tail: String = stderr
        .trim()
        .chars()
        .rev()
        .take(300)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    Err(KnobError::Hook {
        cmd: cmd.into(),
        why: format!("{}: {tail}", out.status),
    })
}

impl Knob for HookKnob {
    fn name(&self) -> String {
        format!("{}={}", name(self.when), self.cmd)
    }

    fn check(&self, _sys: &SysRoot) -> Result<(), Unavailable> {
        if std::path::Path::new("/bin/sh").exists() {
            Ok(())
        } else {
            Err(Unavailable::new("no /bin/sh to run hooks with"))
        }
    }

    fn apply(&self, sys: &SysRoot, journal: &Journal) -> Result<Box<dyn KnobGuard>, KnobError> {
        match self.when {
            When::Before => {
                run(&self.cmd)?;
                Ok(Box::new(AfterGuard {
                    cmd: None,
                    journal: None,
                }))
            }
            When::After => {
                let detail = format!("run by hand: {}", self.cmd);
                let id = journal.save_note(sys, "hook", &self.name(), &detail)?;
                Ok(Box::new(AfterGuard {
                    cmd: Some(self.cmd.clone()),
                    journal: Some((journal.clone(), id)),
                }))
            }
        }
    }
}

/// Runs the `after` command once, on restore or drop.
#[derive(Debug)]
pub struct AfterGuard {
    cmd: Option<String>,
    journal: Option<(Journal, EntryId)>,
}

impl AfterGuard {
    fn finish(&mut self) -> Result<(), KnobError> {
        let Some(cmd) = self.cmd.take() else {
            return Ok(());
        };
        run(&cmd)?;
        match self.journal.take() {
            Some((journal, id)) => journal.forget(id),
            None => Ok(()),
        }
    }
}

impl KnobGuard for AfterGuard {
    fn restore(mut self: Box<Self>) -> Result<(), KnobError> {
        self.finish()
    }
}

impl Drop for AfterGuard {
    fn drop(&mut self) {
        if let Err(e) = self.finish() {
            eprintln!("perflab: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn before_runs_on_apply_and_after_on_restore() {
        let dir = tempfile::tempdir().unwrap();
        let sys = SysRoot::at(dir.path());
        let journal = Journal::open(dir.path().join("j.json")).unwrap();
        let marker = dir.path().join("m");
        let m = marker.display();
        let before = HookKnob::parse(When::Before, &format!("echo on > {m}")).unwrap();
        let after = HookKnob::parse(When::After, &format!("echo off > {m}")).unwrap();
        let g1 = before.apply(&sys, &journal).unwrap();
        let g2 = after.apply(&sys, &journal).unwrap();
        assert_eq!(std::fs::read_to_string(&marker).unwrap(), "on\n");
        // The after command is journaled while the variant is applied.
        assert_eq!(journal.entries().unwrap().len(), 1);
        g2.restore().unwrap();
        g1.restore().unwrap();
        assert_eq!(std::fs::read_to_string(&marker).unwrap(), "off\n");
        assert!(journal.entries().unwrap().is_empty());
    }

    #[test]
    fn a_failing_hook_is_an_error_with_its_stderr() {
        let dir = tempfile::tempdir().unwrap();
        let sys = SysRoot::at(dir.path());
        let journal = Journal::open(dir.path().join("j.json")).unwrap();
        let k = HookKnob::parse(When::Before, "echo nope >&2; exit 3").unwrap();
        let e = k.apply(&sys, &journal).err().unwrap().to_string();
        assert!(e.contains("nope") && e.contains("exit status: 3"), "{e}");
        assert!(HookKnob::parse(When::After, " ").is_err());
    }
}
