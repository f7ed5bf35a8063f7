//! The knob and guard traits, and [`Settings`]: the knobs of one variant, applied in order
//! and restored in reverse.

use perflab_core::{Unavailable, WorkloadOutput};
use perflab_sys::SysRoot;

use crate::error::KnobError;
use crate::journal::{Journal, JOURNAL_FACT};

/// A system setting a variant needs.
pub trait Knob: Send + Sync {
    /// The setting as a person writes it: `cpuidle=poll-only`.
    fn name(&self) -> String;

    /// Whether this machine can take the setting, and exactly why not. Changes nothing.
    fn check(&self, sys: &SysRoot) -> Result<(), Unavailable>;

    /// What is known before measuring that would keep the setting from taking effect on
    /// this machine although `check` passes (a driver that accepts the write and ignores
    /// it), said in the plan so that no one learns it from the results. The variant still
    /// runs; each measurement's effect probe decides. Changes nothing.
    fn forecast(&self, _sys: &SysRoot) -> Option<String> {
        None
    }

    /// The files (relative to `sys`) that `apply` will claim system wide (see
    /// [`crate::target_lock`]), so that a run can claim them all before it starts and be
    /// refused, or wait, before anything is stored or changed. Changes nothing. Empty for a
    /// knob that claims nothing (what it creates carries its pid in its name).
    fn targets(&self, _sys: &SysRoot) -> Vec<String> {
        Vec::new()
    }

    /// The telemetry this setting is meant to move (`cpuidle`: which idle states are
    /// entered), so that a comparison against a variant without it, in which that
    /// telemetry did not move, reads `void` rather than a verdict (issue 32). `None`: the
    /// run records nothing that could tell (hooks, a fake knob).
    fn intent(&self) -> Option<perflab_core::Intent> {
        None
    }

    /// Journals the originals, then changes the machine. On error nothing stays changed.
    /// Does not repeat every test of `check` (writability): [`Settings::apply`] calls both.
    fn apply(&self, sys: &SysRoot, journal: &Journal) -> Result<Box<dyn KnobGuard>, KnobError>;
}

/// Undoes one applied knob. Dropping a guard restores too, so an early return or a panic
/// unwinding through its scope leaves nothing changed; `restore` is for seeing the error.
pub trait KnobGuard: Send {
    fn restore(self: Box<Self>) -> Result<(), KnobError>;

    /// What this knob built that the workload must use (`net.server_ns` = a namespace
    /// name), handed to every measurement of the variant as `MeasureCtx::facts`.
    fn facts(&self) -> Vec<(String, String)> {
        Vec::new()
    }

    /// Takes what the kernel exposes of this setting's effect just before a measurement
    /// (a disabled idle state's usage counter), to be checked after it by
    /// [`EffectProbe::verify`]. `None` when nothing the kernel shows can tell.
    fn probe(&self, _sys: &SysRoot) -> Option<Box<dyn EffectProbe>> {
        None
    }
}

/// What a knob's effect looked like before a measurement.
pub trait EffectProbe: Send {
    /// `Err(reason)` when the setting did not hold during the measurement: the reason
    /// names what was seen (a disabled state entered 1,416 times, THP read back `never`).
    /// `output` is what the workload reported (`huge_fraction` of its buffers).
    fn verify(&self, sys: &SysRoot, output: &WorkloadOutput) -> Result<(), String>;
}

/// The knobs of one variant, in the order they are applied.
#[derive(Default)]
pub struct Settings {
    knobs: Vec<Box<dyn Knob>>,
}

impl Settings {
    pub fn new(knobs: Vec<Box<dyn Knob>>) -> Self {
        Self { knobs }
    }

    // `Settings::parse` (from `name=value` settings) is in `registry`, which knows every
    // knob: the trait's file does not reach back to the registry that lists its impls.

    pub fn is_empty(&self) -> bool {
        self.knobs.is_empty()
    }

    pub fn names(&self) -> Vec<String> {
        self.knobs.iter().map(|k| k.name()).collect()
    }

    /// The first knob this machine cannot take, with the knob named in the reason.
    pub fn check(&self, sys: &SysRoot) -> Result<(), Unavailable> {
        for knob in &self.knobs {
            knob.check(sys).map_err(|u| Unavailable {
                reason: format!("{}: {}", knob.name(), u.reason),
                hint: u.hint,
            })?;
        }
        Ok(())
    }

    /// Checks and applies every knob in order; see [`AppliedVariant::apply`].
    pub fn apply(&self, sys: &SysRoot, journal: &Journal) -> Result<AppliedVariant, KnobError> {
        AppliedVariant::apply(&self.knobs, sys, journal)
    }
}

impl std::fmt::Debug for Settings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

/// The guards of an applied variant. Restores in reverse order on `restore` or drop.
#[must_use = "dropping an AppliedVariant restores the settings at once"]
pub struct AppliedVariant {
    guards: Vec<(String, Box<dyn KnobGuard>)>,
    journal: std::path::PathBuf,
}

impl AppliedVariant {
    /// Checks and applies every knob in order. When one fails, those already applied are
    /// restored (newest first) before the error returns.
    pub fn apply(
        knobs: &[Box<dyn Knob>],
        sys: &SysRoot,
        journal: &Journal,
    ) -> Result<AppliedVariant, KnobError> {
        let mut applied = AppliedVariant {
            guards: Vec::with_capacity(knobs.len()),
            journal: journal.path().to_path_buf(),
        };
        for knob in knobs {
            let result = knob
                .check(sys)
                .map_err(|u| KnobError::unavailable(knob.name(), u))
                .and_then(|()| knob.apply(sys, journal));
            match result {
                Ok(guard) => applied.guards.push((knob.name(), guard)),
                Err(apply) => {
                    return Err(match applied.restore() {
                        Ok(()) => apply,
                        Err(restore) => KnobError::ApplyAndRestore {
                            apply: Box::new(apply),
                            restore: Box::new(restore),
                        },
                    });
                }
            }
        }
        Ok(applied)
    }

    pub fn names(&self) -> Vec<String> {
        self.guards.iter().map(|(n, _)| n.clone()).collect()
    }

    /// The facts every applied knob published; a later knob's value wins on a shared key.
    /// Also [`JOURNAL_FACT`], the journal, for a workload that must change a setting itself.
    pub fn facts(&self) -> std::collections::BTreeMap<String, String> {
        let mut facts: std::collections::BTreeMap<String, String> =
            self.guards.iter().flat_map(|(_, g)| g.facts()).collect();
        facts.insert(
            JOURNAL_FACT.to_string(),
            self.journal.to_string_lossy().into_owned(),
        );
        facts
    }

    /// Probes of every applied knob that can tell whether it holds, taken now (just
    /// before a measurement), each with the knob's name.
    pub fn probes(&self, sys: &SysRoot) -> Vec<(String, Box<dyn EffectProbe>)> {
        self.guards
            .iter()
            .filter_map(|(name, g)| g.probe(sys).map(|p| (name.clone(), p)))
            .collect()
    }

    /// Restores every knob, newest first, going on past failures; the error lists them all.
    pub fn restore(mut self) -> Result<(), KnobError> {
        self.restore_all()
    }

    fn restore_all(&mut self) -> Result<(), KnobError> {
        let mut failures = Vec::new();
        while let Some((name, guard)) = self.guards.pop() {
            match guard.restore() {
                Ok(()) => {}
                Err(KnobError::Restore { failures: f }) => {
                    failures.extend(f.into_iter().map(|m| format!("{name}: {m}")))
                }
                Err(e) => failures.push(format!("{name}: {e}")),
            }
        }
        if failures.is_empty() {
            Ok(())
        } else {
            Err(KnobError::Restore { failures })
        }
    }
}

impl Drop for AppliedVariant {
    fn drop(&mut self) {
        if let Err(e) = self.restore_all() {
            eprintln!("perflab: {e}");
        }
    }
}

/// Checks `probes` after a measurement: `None` when every knob held, else one line that
/// names each knob that did not and why (`cpuidle=poll-only: ...; thp=never: ...`).
pub fn verify_effects(
    probes: &[(String, Box<dyn EffectProbe>)],
    sys: &SysRoot,
    output: &WorkloadOutput,
) -> Option<String> {
    let failures: Vec<String> = probes
        .iter()
        .filter_map(|(name, p)| {
            p.verify(sys, output)
                .err()
                .map(|why| format!("{name}: {why}"))
        })
        .collect();
    (!failures.is_empty()).then(|| failures.join("; "))
}
