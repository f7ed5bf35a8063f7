//! The JSON export written as the store hands out measurements, so exporting a run of
//! 100,000 measurements holds one at a time instead of the whole run.
//!
//! The bytes are those `serde_json::to_writer_pretty` writes for the whole document: the
//! head (format, run, plan) is serialized as one pretty object whose closing brace is
//! taken off, and each measurement is serialized pretty on its own and indented to its
//! depth in the `measurements` array. Re-indenting line by line is exact because pretty
//! JSON never breaks a line inside a string (a newline in a string is written `\n`).

use std::io::Write;

use perflab_store::{MeasurementRecord, PlannedMeasurement, RunInfo};
use serde::Serialize;

/// The JSON export's head, its fields in this order; `measurements` follows it.
#[derive(Serialize)]
pub struct Head<'a> {
    pub format: &'static str,
    pub format_version: u32,
    pub command: &'static str,
    pub run: &'a RunInfo,
    /// The whole plan, so `import --parser perflab-json` rebuilds an unfinished run whole
    /// (what is still to measure stays planned).
    pub plan: &'a [PlannedMeasurement],
}

/// Writes the document's head, then one measurement per [`Self::push`], then its end
/// on [`Self::finish`].
pub struct JsonStream<W: Write> {
    out: W,
    written: usize,
    buf: Vec<u8>,
}

/// The depth of a measurement object in the document: inside `{ "measurements": [`.
const INDENT: &[u8] = b"    ";

impl<W: Write> JsonStream<W> {
    pub fn start(mut out: W, head: &Head) -> std::io::Result<Self> {
        let mut text = serde_json::to_vec_pretty(head)?;
        // `…\n}` without its closing line: the measurements go on inside the object.
        debug_assert!(text.ends_with(b"\n}"));
        text.truncate(text.len() - 2);
        out.write_all(&text)?;
        out.write_all(b",\n  \"measurements\": [")?;
        Ok(Self {
            out,
            written: 0,
            buf: Vec::new(),
        })
    }

    pub fn push(&mut self, m: &MeasurementRecord) -> std::io::Result<()> {
        self.buf.clear();
        serde_json::to_writer_pretty(&mut self.buf, m)?;
        self.out
            .write_all(if self.written == 0 { b"\n" } else { b",\n" })?;
        for (i, line) in self.buf.split(|&b| b == b'\n').enumerate() {
            if i > 0 {
                self.out.write_all(b"\n")?;
            }
            self.out.write_all(INDENT)?;
            self.out.write_all(line)?;
        }
        self.written += 1;
        Ok(())
    }

    /// Closes the array and the document, with the newline `export` ends it with.
    pub fn finish(mut self) -> std::io::Result<W> {
        if self.written == 0 {
            self.out.write_all(b"]\n}\n")?;
        } else {
            self.out.write_all(b"\n  ]\n}\n")?;
        }
        self.out.flush()?;
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The whole document as `to_writer_pretty` wrote it before the export streamed.
    #[derive(Serialize)]
    struct Whole<'a> {
        format: &'static str,
        format_version: u32,
        command: &'static str,
        run: &'a RunInfo,
        plan: &'a [PlannedMeasurement],
        measurements: &'a [MeasurementRecord],
    }

    fn streamed(info: &RunInfo, plan: &[PlannedMeasurement], ms: &[MeasurementRecord]) -> String {
        let head = Head {
            format: "perflab-export",
            format_version: 1,
            command: "export",
            run: info,
            plan,
        };
        let mut s = JsonStream::start(Vec::new(), &head).unwrap();
        for m in ms {
            s.push(m).unwrap();
        }
        String::from_utf8(s.finish().unwrap()).unwrap()
    }

    fn whole(info: &RunInfo, plan: &[PlannedMeasurement], ms: &[MeasurementRecord]) -> String {
        let doc = Whole {
            format: "perflab-export",
            format_version: 1,
            command: "export",
            run: info,
            plan,
            measurements: ms,
        };
        let mut v = serde_json::to_vec_pretty(&doc).unwrap();
        v.push(b'\n');
        String::from_utf8(v).unwrap()
    }

    #[test]
    fn streamed_json_export_is_byte_for_byte_the_whole_document() {
        let (info, plan, ms) = run_with_everything();
        for n in [0, 1, ms.len()] {
            assert_eq!(
                streamed(&info, &plan, &ms[..n]),
                whole(&info, &plan, &ms[..n]),
                "{n}"
            );
        }
    }

    /// Two measurements with every kind of output, strings that JSON escapes (a newline,
    /// a quote, non-ASCII) and a failure.
    fn run_with_everything() -> (RunInfo, Vec<PlannedMeasurement>, Vec<MeasurementRecord>) {
        use perflab_core::{Better, HistogramData, Metric, ParamValue, Params, TelemetryRow};
        use perflab_core::{ThreadRecord, Unit, WorkloadOutput};
        use perflab_store::{MeasurementStatus, RunStatus};
        let info = RunInfo {
            id: 7,
            created_at: 1_700_000_000.5,
            study: "quick".into(),
            workload: "null".into(),
            label: Some("a \"label\"\nover two lines, µs".into()),
            status: RunStatus::Complete,
            spec: Default::default(),
            fingerprint: perflab_core::Fingerprint::from_json(
                serde_json::json!({ "kernel": "6.1", "cpus": [0, 1] }),
            ),
            unavailable: Vec::new(),
            planned: 2,
            done: 1,
            failed: 1,
            ineffective: 0,
            uid: "u-1".into(),
        };
        let params = Params(
            [
                ("size".to_string(), ParamValue::Int(4096)),
                ("mode".to_string(), ParamValue::Str("a/b %".into())),
            ]
            .into_iter()
            .collect(),
        );
        let mut hist = hdrhistogram::Histogram::<u64>::new_with_bounds(1, 1_000_000, 3).unwrap();
        for v in [10, 20, 20, 900, 40_000] {
            hist.record(v).unwrap();
        }
        let ok = MeasurementRecord {
            seq: 0,
            point: 0,
            params: params.clone(),
            variant: "base".into(),
            rep: 0,
            status: MeasurementStatus::Ok,
            started_at: 1_700_000_001.25,
            elapsed_s: 0.5,
            output: WorkloadOutput {
                metrics: vec![Metric::new(
                    "ops_per_s",
                    1.5e6,
                    Unit::PerSecond,
                    Better::Higher,
                )],
                histograms: vec![HistogramData::from_hdr("latency", Unit::Nanoseconds, &hist)],
                threads: vec![ThreadRecord {
                    role: "worker".into(),
                    tid: 42,
                    pinned_cpu: Some(1),
                    cpu_samples: vec![(1, 10)],
                    start_ns: 5,
                    end_ns: 9,
                    ..Default::default()
                }],
                notes: vec!["x\ty \"quoted\"".into()],
            },
            telemetry: vec![TelemetryRow {
                source: "interrupts".into(),
                key: "LOC".into(),
                label: "Local timer\ninterrupts".into(),
                cpu: Some(1),
                value: 12.0,
                unit: Unit::Count,
            }],
            role: Default::default(),
            monitors: vec!["interrupts".into()],
        };
        let failed = MeasurementRecord {
            seq: 1,
            rep: 1,
            status: MeasurementStatus::Failed("died: \"bad\"\n".into()),
            output: WorkloadOutput::default(),
            telemetry: Vec::new(),
            ..ok.clone()
        };
        let plan = [&ok, &failed]
            .iter()
            .map(|m| PlannedMeasurement {
                seq: m.seq,
                point: m.point,
                params: m.params.clone(),
                variant: m.variant.clone(),
                rep: m.rep,
                role: m.role,
            })
            .collect();
        (info, plan, vec![ok, failed])
    }
}
