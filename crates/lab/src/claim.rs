//! Claiming every setting a run's variants change, system wide, before the run is created
//! or resumed: a run that another perflab would refuse a setting to is refused before
//! anything is stored or changed (it used to be stored, then left `interrupted 0/N` by a
//! refusal at its first variant), and a run told to wait (`run --wait-lock`) waits here,
//! before it measures anything.
//!
//! A wait holds nothing: each try claims with a fresh journal handle and drops it, and so
//! every target it took, when one is refused. Two runs waiting for each other's targets
//! therefore never deadlock, and a run never waits while it holds what another needs.

use std::path::Path;
use std::time::{Duration, Instant};

use perflab_knobs::{Journal, KnobError};
use perflab_sys::SysRoot;

use crate::error::Result;
use crate::prepare::Variant;

/// How often a waiting run tries again.
const POLL: Duration = Duration::from_millis(200);
/// How often a waiting run says it still waits.
const SAY_EVERY: Duration = Duration::from_secs(10);

/// Claims every target of every knob of `variants` through `journal`. On refusal what
/// was claimed stays held by `journal` until it is dropped.
pub fn claim_settings(journal: &Journal, sys: &SysRoot, variants: &[Variant]) -> Result<()> {
    for v in variants {
        for knob in &v.knobs {
            let targets = knob.targets(sys);
            let rels: Vec<&str> = targets.iter().map(String::as_str).collect();
            if !rels.is_empty() {
                journal.claim(sys, &rels, &knob.name())?;
            }
        }
    }
    Ok(())
}

/// Opens the journal at `path` and claims every setting of `variants` through it (see
/// [`claim_settings`]). While another live perflab holds one, it tries again every
/// [`POLL`] for at most `wait`, holding nothing in between, and tells `say` what it waits
/// for (at once, then every [`SAY_EVERY`]); past `wait` (or at once without one) the
/// refusal ([`KnobError::InUse`]) is returned. The journal handle returned holds every
/// target until it is dropped.
pub fn claim_waiting(
    path: &Path,
    sys: &SysRoot,
    variants: &[Variant],
    wait: Option<Duration>,
    say: &mut dyn FnMut(&str),
) -> Result<Journal> {
    let start = Instant::now();
    let mut said: Option<Instant> = None;
    loop {
        let journal = Journal::open(path)?;
        let err = match claim_settings(&journal, sys, variants) {
            Ok(()) => return Ok(journal),
            Err(crate::LabError::Knob(e)) if e.is_in_use() => e,
            Err(e) => return Err(e),
        };
        // Dropped before waiting: a waiting run holds nothing another may need.
        drop(journal);
        let limit = match wait {
            Some(limit) if start.elapsed() < limit => limit,
            _ => return Err(err.into()),
        };
        if said.is_none_or(|t| t.elapsed() >= SAY_EVERY) {
            say(&waiting_line(&err, start.elapsed(), limit));
            said = Some(Instant::now());
        }
        std::thread::sleep(POLL.min(limit.saturating_sub(start.elapsed())));
    }
}

/// `waiting for /sys/…: in use by perflab pid 7 (…) (12 s of at most 60 s)`.
fn waiting_line(err: &KnobError, waited: Duration, limit: Duration) -> String {
    let what = match err {
        KnobError::InUse { target, why } => {
            let who = why.split("; refused").next().unwrap_or(why);
            format!("{}: {who}", target.display())
        }
        other => other.to_string(),
    };
    format!(
        "waiting for {what} ({} s of at most {} s)",
        waited.as_secs(),
        limit.as_secs()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_waiting_line_names_the_target_and_holder_and_the_time() {
        let err = KnobError::InUse {
            target: "/sys/kernel/mm/transparent_hugepage/enabled".into(),
            why: "in use by perflab pid 7 (`perflab run x`) for thp=never, 0 s ago; \
                  refused rather than journal its temporary value as the original"
                .into(),
        };
        assert_eq!(
            waiting_line(&err, Duration::from_secs(12), Duration::from_secs(60)),
            "waiting for /sys/kernel/mm/transparent_hugepage/enabled: in use by perflab pid 7 \
             (`perflab run x`) for thp=never, 0 s ago (12 s of at most 60 s)"
        );
    }

    /// A fake knob on a test tree held by one journal: a second claim is refused at
    /// once without a wait, and waits (saying so) until the first lets go with one.
    #[test]
    fn a_claim_waits_for_the_holder_and_holds_nothing_meanwhile() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("sys/kernel")).unwrap();
        std::fs::write(dir.path().join("sys/kernel/perflab_fake"), "0\n").unwrap();
        let sys = SysRoot::at(dir.path());
        let spec: crate::spec::VariantSpec =
            serde_json::from_value(serde_json::json!({"name": "on", "knobs": {"fake": "1"}}))
                .unwrap();
        let variants = vec![crate::prepare::parse_variant(&spec).unwrap()];
        let first = Journal::open(dir.path().join("first.json")).unwrap();
        claim_settings(&first, &sys, &variants).unwrap();

        let second = dir.path().join("second.json");
        let mut lines = Vec::new();
        let err = claim_waiting(&second, &sys, &variants, None, &mut |l| {
            lines.push(l.to_string())
        })
        .err()
        .unwrap();
        assert!(
            matches!(&err, crate::LabError::Knob(k) if k.is_in_use()),
            "{err}"
        );
        assert!(lines.is_empty(), "{lines:?}");

        let release = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            drop(first);
        });
        let held = claim_waiting(
            &second,
            &sys,
            &variants,
            Some(Duration::from_secs(60)),
            &mut |l| lines.push(l.to_string()),
        );
        release.join().unwrap();
        assert!(held.is_ok(), "{:?}", held.err());
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(
            lines[0].starts_with("waiting for ") && lines[0].contains("perflab_fake: in use by"),
            "{lines:?}"
        );
    }
}
