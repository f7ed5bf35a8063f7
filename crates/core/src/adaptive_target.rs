//! The precision an adaptive run (`--target-ci`) aims for, and the checks of its
//! settings: part of the stored run spec, so it lives with the rest of the vocabulary.

use serde::{Deserialize, Serialize};

use crate::limits::TARGET_CI_MAX_PCT;

/// The precision an adaptive run aims for, as its stored spec keeps it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct AdaptiveTarget {
    /// Half-width of the median's 95% interval, percent of the median.
    pub target_ci_pct: f64,
    /// The most measurements (successful or failed) per point and variant.
    pub max_reps: u32,
}

/// The cap when a target is given without one: enough for a median interval about a
/// third as wide as with 3 repetitions (widths shrink about as 1/√n), few enough that a
/// point that never settles costs a bounded time.
pub const DEFAULT_MAX_REPS: u32 = 30;

/// The most repetitions a cap may allow, as for `repetitions`.
pub const MAX_REPS_LIMIT: u32 = *crate::limits::REPETITIONS.end();

/// What is wrong with adaptive settings; worded for a TOML file or for flags.
#[derive(Clone, Debug, PartialEq)]
pub enum SettingError {
    Target(f64),
    CapWithoutTarget(u32),
    CapOutOfRange { cap: u32, reps: u32 },
}

impl SettingError {
    /// In the words of an experiment file's keys.
    pub fn for_file(&self) -> String {
        self.say("target_ci", "max_reps", "repetitions")
    }

    /// In the words of `perflab run`'s flags.
    pub fn for_flags(&self) -> String {
        self.say("--target-ci", "--max-reps", "repetitions")
    }

    fn say(&self, target: &str, cap: &str, reps: &str) -> String {
        match self {
            SettingError::Target(t) => format!(
                "{target} = {}: must be a percentage above 0 and at most {TARGET_CI_MAX_PCT}, \
                 e.g. 1 for ±1% of the median",
                crate::limits::number(*t)
            ),
            SettingError::CapWithoutTarget(c) => {
                format!("{cap} = {c}: {cap} needs {target} (the cap of adaptive repetitions)")
            }
            SettingError::CapOutOfRange { cap: c, reps: r } => format!(
                "{cap} = {c}: must be at least the {r} planned {reps} and at most \
                 {MAX_REPS_LIMIT}"
            ),
        }
    }
}

/// Checks the adaptive settings of a spec with `reps` planned repetitions.
pub fn check_settings(
    target: Option<f64>,
    cap: Option<u32>,
    reps: u32,
) -> Result<(), SettingError> {
    match (target, cap) {
        (None, None) => Ok(()),
        (None, Some(c)) => Err(SettingError::CapWithoutTarget(c)),
        (Some(t), _) if !(t > 0.0 && t <= TARGET_CI_MAX_PCT) => Err(SettingError::Target(t)),
        (Some(_), c) => {
            let c = c.unwrap_or(DEFAULT_MAX_REPS.max(reps));
            if c < reps || c > MAX_REPS_LIMIT {
                return Err(SettingError::CapOutOfRange { cap: c, reps });
            }
            Ok(())
        }
    }
}

/// The target a spec asks for, with the cap filled in (never below the planned
/// repetitions, so a study of 50 repetitions with a target is not capped at 30).
pub fn target_of(target: Option<f64>, cap: Option<u32>, reps: u32) -> Option<AdaptiveTarget> {
    target.map(|t| AdaptiveTarget {
        target_ci_pct: t,
        max_reps: cap.unwrap_or(DEFAULT_MAX_REPS.max(reps)),
    })
}

/// Repetitions until decided (`--until-decided`): after the planned repetitions, the
/// comparison rows still undecided get more, in the looks of an alpha-spending schedule
/// (perflab-stats `decide::sequential`), up to the cap. Stored with the run so a resume
/// continues and a report decides with the same schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UntilDecided {
    /// The planned repetitions: the schedule's first look.
    pub planned: u32,
    /// The most repetitions per point and variant, failed ones included.
    pub cap: u32,
}

/// The until-decided settings of a spec, the cap filled in as for `--target-ci`.
pub fn until_decided_of(on: bool, cap: Option<u32>, reps: u32) -> Option<UntilDecided> {
    on.then(|| UntilDecided {
        planned: reps,
        cap: cap.unwrap_or(DEFAULT_MAX_REPS.max(reps)),
    })
}
