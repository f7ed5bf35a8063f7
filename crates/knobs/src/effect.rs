//! Proof that a knob's setting held during a measurement.
//!
//! Writing a setting is not the same as having it: the `haltpoll` cpuidle driver accepts
//! `disable` and goes on entering the state, another process may switch THP back, an IRQ
//! controller may ignore an affinity mask. A knob whose effect the kernel exposes wraps its
//! guard in [`Verified`], which takes an [`EffectProbe`] before each measurement; the
//! runner checks it after, and a violation marks the measurement ineffective.

use perflab_core::WorkloadOutput;
use perflab_sys::SysRoot;

use crate::error::KnobError;
use crate::knob::{EffectProbe, KnobGuard};

type ProbeFn = dyn Fn(&SysRoot) -> Option<Box<dyn EffectProbe>> + Send;

/// A guard and the way to probe the effect of what it applied.
pub struct Verified {
    inner: Box<dyn KnobGuard>,
    probe: Box<ProbeFn>,
    facts: Vec<(String, String)>,
}

impl Verified {
    pub fn new(
        inner: Box<dyn KnobGuard>,
        probe: impl Fn(&SysRoot) -> Option<Box<dyn EffectProbe>> + Send + 'static,
    ) -> Self {
        Self {
            inner,
            probe: Box::new(probe),
            facts: Vec::new(),
        }
    }

    /// Also publishes these facts to every measurement of the variant.
    pub fn with_facts(mut self, facts: Vec<(String, String)>) -> Self {
        self.facts = facts;
        self
    }
}

impl KnobGuard for Verified {
    fn restore(self: Box<Self>) -> Result<(), KnobError> {
        self.inner.restore()
    }

    fn facts(&self) -> Vec<(String, String)> {
        let mut f = self.inner.facts();
        f.extend(self.facts.iter().cloned());
        f
    }

    fn probe(&self, sys: &SysRoot) -> Option<Box<dyn EffectProbe>> {
        (self.probe)(sys)
    }
}

/// A probe that only reads back at the end: a value that must still be what was set.
pub struct ReadBack<F>(pub F);

impl<F> EffectProbe for ReadBack<F>
where
    F: Fn(&SysRoot, &WorkloadOutput) -> Result<(), String> + Send,
{
    fn verify(&self, sys: &SysRoot, output: &WorkloadOutput) -> Result<(), String> {
        (self.0)(sys, output)
    }
}
