//! What a comparison rests on: its design, and for two runs compared with each other the
//! drift guard.
//!
//! Variants of one run are measured in interleaved order (A B A B at every point), so slow
//! drift of the machine falls on both sides alike. Two runs are measured minutes or days
//! apart: whatever changed on the machine in between is confounded with the change under
//! test, and a table of them must say so. Their timing probes (stored in each run's
//! fingerprint) are the guard: one that moved beyond the noise threshold is a warning.

use perflab_core::record::{MeasurementRecord, RunId, RunInfo};
use perflab_stats::{probe_drift, ProbeDrift, TimingProbe};
use serde::Serialize;

use crate::fmt;

/// How the two sides of a comparison were measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Design {
    /// Variant against variant of one run, measured A B A B at every point.
    InterleavedWithinOneRun,
    /// Run against run: measured one after the other, never interleaved.
    SeparateRuns,
    /// Variant against variant of one imported run: measured in the order the importing
    /// tool chose (hyperfine times every run of one command before the next), so its
    /// repetitions do not pair and drift between the variants is confounded with them.
    Imported,
}

impl Design {
    /// The words every table and heading uses.
    pub fn name(self) -> &'static str {
        match self {
            Design::InterleavedWithinOneRun => "interleaved within one run",
            Design::SeparateRuns => "separate runs",
            Design::Imported => "variants of one import",
        }
    }

    /// The design and what it means for the verdicts, in one sentence.
    pub fn description(self) -> String {
        match self {
            Design::InterleavedWithinOneRun => format!(
                "{} (A B A B at every point): slow drift of the machine falls on A and B \
                 alike",
                self.name()
            ),
            Design::SeparateRuns => format!(
                "{}, not interleaved: any drift of the machine between the runs is \
                 confounded with the change",
                self.name()
            ),
            Design::Imported => format!(
                "{}, measured in the order the tool chose, not interleaved: any drift of \
                 the machine between the variants is confounded with the change",
                self.name()
            ),
        }
    }

    /// The header line of a table: `design: …`.
    pub fn line(self) -> String {
        format!("design: {}", self.description())
    }
}

/// When two runs measured, and whether their timing probes moved.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DriftGuard {
    pub run_a: RunId,
    pub run_b: RunId,
    /// The noise threshold the probes are held to, in percent.
    pub threshold_pct: f64,
    /// First start and last end of each run's measurements, seconds since the Unix epoch.
    pub measured_a: Option<(f64, f64)>,
    pub measured_b: Option<(f64, f64)>,
    /// The readings both probes have; empty when `unguarded` says why.
    pub probes: Vec<ProbeDrift>,
    /// Why no probes could be compared: a run without a probe (older than it), an
    /// unreadable one, or probes from different builds of perflab.
    pub unguarded: Option<String>,
}

impl DriftGuard {
    pub fn new(
        a: (&RunInfo, &[MeasurementRecord]),
        b: (&RunInfo, &[MeasurementRecord]),
        threshold_pct: f64,
    ) -> Self {
        let mut guard = DriftGuard {
            run_a: a.0.id,
            run_b: b.0.id,
            threshold_pct,
            measured_a: span(a.1),
            measured_b: span(b.1),
            probes: Vec::new(),
            unguarded: None,
        };
        match (probe_of(a.0), probe_of(b.0)) {
            (Ok(pa), Ok(pb)) if pa.build != pb.build => {
                guard.unguarded = Some(format!(
                    "the timing probes come from a {} build of perflab (run {}) and a {} \
                     build (run {}), which time the probe differently",
                    pa.build, a.0.id, pb.build, b.0.id
                ));
            }
            (Ok(pa), Ok(pb)) => {
                guard.probes = probe_drift(&pa, &pb, threshold_pct);
                if guard.probes.is_empty() {
                    guard.unguarded = Some("the timing probes share no usable reading".into());
                }
            }
            (Err(why), _) | (_, Err(why)) => guard.unguarded = Some(why),
        }
        guard
    }

    /// The readings that moved beyond the threshold.
    pub fn moved(&self) -> impl Iterator<Item = &ProbeDrift> {
        self.probes.iter().filter(|p| p.moved)
    }

    /// The lines a reader sees under the design: when each run measured, then a WARNING
    /// per probe that moved, or what the guard found (or why there is none).
    pub fn lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let (Some(a), Some(b)) = (self.measured_a, self.measured_b) {
            out.push(format!(
                "measured: run {} {}, run {} {}",
                self.run_a,
                when(a),
                self.run_b,
                when(b)
            ));
        }
        if let Some(why) = &self.unguarded {
            out.push(format!("no drift guard: {why}"));
            return out;
        }
        let threshold = format!("{}% noise threshold", self.threshold_pct);
        let moved: Vec<&ProbeDrift> = self.moved().collect();
        for p in &moved {
            out.push(format!(
                "WARNING: timing probe \"{}\" moved between the runs: {} {} in run {}, {} {} \
                 in run {} (ratio {:.3}, {} in run {}), beyond the {threshold}: the machine \
                 itself ran at another speed, which alone can make rows differ",
                p.name,
                fmt::value(p.a),
                p.unit,
                self.run_a,
                fmt::value(p.b),
                p.unit,
                self.run_b,
                p.ratio,
                if p.b_slower { "slower" } else { "faster" },
                self.run_b
            ));
        }
        if moved.is_empty() {
            let all: Vec<String> = self
                .probes
                .iter()
                .map(|p| {
                    format!(
                        "{} {} vs {} {} (ratio {:.3})",
                        p.name,
                        fmt::value(p.a),
                        fmt::value(p.b),
                        p.unit,
                        p.ratio
                    )
                })
                .collect();
            out.push(format!(
                "drift guard: the timing probes of run {} and run {} agree within the \
                 {threshold}: {}",
                self.run_a,
                self.run_b,
                all.join(", ")
            ));
        }
        out
    }
}

/// The probe stored in a run's fingerprint, or why there is none to use.
fn probe_of(run: &RunInfo) -> Result<TimingProbe, String> {
    let fp = &run.fingerprint;
    if let Some(p) = &fp.probe {
        return Ok(p.clone());
    }
    // A stored probe of another shape stays in `extra`: read it again for the reason.
    match fp.extra.get("probe") {
        None | Some(serde_json::Value::Null) => Err(format!("run {} has no timing probe", run.id)),
        Some(v) => serde_json::from_value(v.clone())
            .map_err(|e| format!("run {}'s timing probe cannot be read ({e})", run.id)),
    }
}

/// First start and last end of the measurements, when any has a time.
fn span(ms: &[MeasurementRecord]) -> Option<(f64, f64)> {
    let starts = ms.iter().map(|m| m.started_at).filter(|t| *t > 0.0);
    let first = starts.clone().min_by(f64::total_cmp)?;
    let last = ms
        .iter()
        .filter(|m| m.started_at > 0.0)
        .map(|m| m.started_at + m.elapsed_s.max(0.0))
        .max_by(f64::total_cmp)?;
    Some((first, last))
}

/// `2026-11-18 11:06 to 11:20 UTC`, with the end's date when it is another day.
fn when((start, end): (f64, f64)) -> String {
    let (s, e) = (fmt::utc(start), fmt::utc(end));
    let end = if s[..10] == e[..10] {
        &e[11..16]
    } else {
        &e[..16]
    };
    format!("{} to {end} UTC", &s[..16])
}

#[cfg(test)]
mod tests {
    use super::*;
    use perflab_core::record::RunStatus;

    fn run(id: RunId, fingerprint: serde_json::Value) -> RunInfo {
        RunInfo {
            id,
            created_at: 1_700_000_000.0,
            study: "s".into(),
            workload: "w".into(),
            label: None,
            status: RunStatus::Complete,
            spec: serde_json::from_value(serde_json::json!({})).expect("a valid run spec"),
            fingerprint: perflab_core::Fingerprint::from_json(fingerprint),
            unavailable: Vec::new(),
            planned: 0,
            done: 0,
            failed: 0,
            ineffective: 0,
            uid: String::new(),
        }
    }

    fn probe(ns: f64, build: &str) -> serde_json::Value {
        serde_json::json!({ "probe": {
            "readings": [
                {"name": "integer loop", "unit": "ns/op", "value": ns, "better": "lower"},
                {"name": "memcpy 4 MiB", "unit": "MiB/s", "value": 40000.0, "better": "higher"},
            ],
            "tries": 7, "build": build, "at": 1_700_000_000.0,
        }})
    }

    #[test]
    fn a_moved_probe_is_a_warning_naming_it() {
        let g = DriftGuard::new(
            (&run(3, probe(1.0, "release")), &[]),
            (&run(4, probe(1.1, "release")), &[]),
            1.0,
        );
        let lines = g.lines().join("\n");
        assert!(
            lines.contains("WARNING: timing probe \"integer loop\" moved between the runs: 1.00 ns/op in run 3, 1.10 ns/op in run 4 (ratio 1.100, slower in run 4)"),
            "{lines}"
        );
        assert_eq!(g.moved().count(), 1);
        assert!(!lines.contains("memcpy"), "{lines}");
    }

    #[test]
    fn agreeing_probes_say_so_with_their_figures() {
        let g = DriftGuard::new(
            (&run(3, probe(1.0, "release")), &[]),
            (&run(4, probe(1.005, "release")), &[]),
            1.0,
        );
        let lines = g.lines().join("\n");
        assert!(lines.starts_with("drift guard: the timing probes of run 3 and run 4 agree within the 1% noise threshold: integer loop 1.00 vs 1.00 ns/op (ratio 1.005)"), "{lines}");
    }

    #[test]
    fn without_a_probe_there_is_no_guard_and_it_says_so() {
        let g = DriftGuard::new(
            (&run(3, serde_json::json!({})), &[]),
            (&run(4, probe(1.0, "release")), &[]),
            1.0,
        );
        assert_eq!(g.lines(), vec!["no drift guard: run 3 has no timing probe"]);
        let g = DriftGuard::new(
            (&run(3, probe(1.0, "debug")), &[]),
            (&run(4, probe(1.0, "release")), &[]),
            1.0,
        );
        assert!(
            g.lines()[0].contains("a debug build of perflab (run 3)"),
            "{:?}",
            g.lines()
        );
        let g = DriftGuard::new(
            (&run(3, serde_json::json!({"probe": {"readings": 1}})), &[]),
            (&run(4, probe(1.0, "release")), &[]),
            1.0,
        );
        assert!(g.lines()[0].starts_with("no drift guard: run 3's timing probe cannot be read"));
    }

    #[test]
    fn measurement_times_read_as_a_span() {
        assert_eq!(
            when((1_700_000_000.0, 1_700_000_900.0)),
            "2023-11-14 22:13 to 22:28 UTC"
        );
        assert_eq!(
            when((1_700_000_000.0, 1_700_100_000.0)),
            "2023-11-14 22:13 to 2023-11-16 02:00 UTC"
        );
    }
}
