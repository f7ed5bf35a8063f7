//! The JSON export written as the store hands out measurements, so exporting a run of
//! 100,000 measurements holds one at a time instead of the whole run.
//!
//! The head (format, run) is pretty-printed; the plan and the measurements are lists of
//! records, one compact record per line (docs/export.md): pretty-printing put every
//! field, and every telemetry row's, on a line of its own, which doubled the size of a
//! large export and most of the time it took to write.

use std::io::Write;

use perflab_store::{MeasurementRecord, PlannedMeasurement, RunInfo};
use serde::Serialize;

use crate::cmd::export_record::{ExportedMeasurement, TELEMETRY_COLUMNS};

/// The JSON export's head, its fields in this order; `telemetry_columns`, `plan` and
/// `measurements` follow.
#[derive(Serialize)]
pub struct Head<'a> {
    pub format: &'static str,
    pub format_version: u32,
    pub command: &'static str,
    pub run: &'a RunInfo,
}

/// Writes the document's head and plan, then one measurement per [`Self::push`], then
/// its end on [`Self::finish`].
pub struct JsonStream<W: Write> {
    out: W,
    written: usize,
    /// The record being written: serialized here and written whole, which is a third
    /// cheaper than serde_json's many small writes into the `BufWriter`.
    line: Vec<u8>,
}

/// Where each record of the two lists starts: inside `{ "plan": [`.
const INDENT: &[u8] = b"    ";

impl<W: Write> JsonStream<W> {
    /// Starts the document with `head` and `plan`: the whole plan, so `import --parser
    /// perflab-json` rebuilds an unfinished run whole (what is still to measure stays
    /// planned).
    pub fn start(mut out: W, head: &Head, plan: &[PlannedMeasurement]) -> std::io::Result<Self> {
        let mut text = serde_json::to_vec_pretty(head)?;
        // `…\n}` without its closing line: the lists go on inside the object.
        debug_assert!(text.ends_with(b"\n}"));
        text.truncate(text.len() - 2);
        out.write_all(&text)?;
        out.write_all(b",\n  \"telemetry_columns\": ")?;
        serde_json::to_writer(&mut out, &TELEMETRY_COLUMNS)?;
        out.write_all(b",\n  \"plan\": [")?;
        let mut line = Vec::new();
        for (i, row) in plan.iter().enumerate() {
            write_item(&mut out, &mut line, i, row)?;
        }
        close_list(&mut out, plan.len())?;
        out.write_all(b",\n  \"measurements\": [")?;
        Ok(Self {
            out,
            written: 0,
            line,
        })
    }

    pub fn push(&mut self, m: &MeasurementRecord) -> std::io::Result<()> {
        let m = ExportedMeasurement::new(m);
        write_item(&mut self.out, &mut self.line, self.written, &m)?;
        self.written += 1;
        Ok(())
    }

    /// Closes the list and the document, with the newline `export` ends it with.
    pub fn finish(mut self) -> std::io::Result<W> {
        close_list(&mut self.out, self.written)?;
        self.out.write_all(b"\n}\n")?;
        self.out.flush()?;
        Ok(self.out)
    }
}

/// Writes the export of `head`, `plan` and the records `read` hands to its sink, the
/// writing on a thread beside the reading (reading the store and writing JSON take about
/// as long each). The document is ended only when `read` succeeds; a failed write stops
/// the reading and is the error returned.
pub fn write<W: Write + Send>(
    out: W,
    head: &Head,
    plan: &[PlannedMeasurement],
    read: impl FnOnce(&mut dyn FnMut(MeasurementRecord) -> std::io::Result<()>) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let mut json = JsonStream::start(out, head, plan)?;
    let mut result = Ok(());
    let written = perflab_report::slim::pipeline::look_beside(
        |sink| {
            result = read(&mut |m| match sink(m) {
                true => Ok(()),
                false => Err(std::io::Error::other("the export's writer stopped")),
            })
        },
        |m| json.push(m),
    );
    written?;
    result?;
    json.finish()?;
    Ok(())
}

/// A list's item number `i` on a line of its own, compact (serialized into `line`).
fn write_item<T: Serialize>(
    out: &mut impl Write,
    line: &mut Vec<u8>,
    i: usize,
    item: &T,
) -> std::io::Result<()> {
    line.clear();
    line.extend_from_slice(if i == 0 { b"\n" } else { b",\n" });
    line.extend_from_slice(INDENT);
    serde_json::to_writer(&mut *line, item)?;
    out.write_all(line)
}

fn close_list(out: &mut impl Write, written: usize) -> std::io::Result<()> {
    out.write_all(if written == 0 { b"]" } else { b"\n  ]" })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The whole document as format_version 1 wrote it (`to_writer_pretty`, histogram
    /// bytes as arrays), which `import` still reads.
    #[derive(Serialize)]
    struct Version1<'a> {
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
            format_version: 2,
            command: "export",
            run: info,
        };
        let mut s = JsonStream::start(Vec::new(), &head, plan).unwrap();
        for m in ms {
            s.push(m).unwrap();
        }
        String::from_utf8(s.finish().unwrap()).unwrap()
    }

    fn version1(info: &RunInfo, plan: &[PlannedMeasurement], ms: &[MeasurementRecord]) -> String {
        let doc = Version1 {
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

    /// What an importer reads of a document.
    #[derive(serde::Deserialize)]
    struct Read {
        format_version: u32,
        run: RunInfo,
        plan: Vec<PlannedMeasurement>,
        measurements: Vec<MeasurementRecord>,
    }

    /// `ms` as serde_json reads back any JSON of them: without its `float_roundtrip`
    /// feature it may read the last digit of a float one off (for both versions alike).
    fn as_read(ms: &[MeasurementRecord]) -> Vec<MeasurementRecord> {
        serde_json::from_str(&serde_json::to_string(ms).unwrap()).unwrap()
    }

    #[test]
    fn both_versions_read_back_as_the_records_written() {
        let (info, plan, ms) = run_with_everything();
        let ms = as_read(&ms);
        for n in [0, 1, ms.len()] {
            for (version, text) in [
                (2, streamed(&info, &plan, &ms[..n])),
                (1, version1(&info, &plan, &ms[..n])),
            ] {
                let back: Read = serde_json::from_str(&text).unwrap();
                assert_eq!(back.format_version, version);
                assert_eq!(back.run, info, "version {version}, {n}");
                assert_eq!(back.plan, plan, "version {version}, {n}");
                assert_eq!(back.measurements, &ms[..n], "version {version}, {n}");
            }
        }
    }

    /// Version 2 holds what version 1 held, under the same names: only the histogram
    /// bytes are written otherwise, a base64 string for the array, and the telemetry
    /// rows, arrays of the fields the head's `telemetry_columns` names.
    #[test]
    fn version_2_is_version_1_with_base64_bytes() {
        let (info, plan, ms) = run_with_everything();
        let mut v2: serde_json::Value = serde_json::from_str(&streamed(&info, &plan, &ms)).unwrap();
        let v1: serde_json::Value = serde_json::from_str(&version1(&info, &plan, &ms)).unwrap();
        let h = &mut v2["measurements"][0]["output"]["histograms"][0]["encoded"];
        let text = h.as_str().expect("a base64 string").to_string();
        assert!(!text.is_empty());
        let bytes = &ms[0].output.histograms[0].encoded;
        *h = serde_json::to_value(bytes).unwrap();
        let columns = v2.as_object_mut().unwrap().remove("telemetry_columns");
        assert_eq!(columns, Some(serde_json::json!(TELEMETRY_COLUMNS)));
        let mut rows = 0;
        for m in v2["measurements"].as_array_mut().unwrap() {
            for row in m["telemetry"].as_array_mut().unwrap() {
                let fields = row.as_array().expect("a row as an array").clone();
                let named = TELEMETRY_COLUMNS.iter().map(|c| c.to_string()).zip(fields);
                *row = serde_json::Value::Object(named.collect());
                rows += 1;
            }
        }
        assert!(rows > 0);
        v2["format_version"] = 1.into();
        assert_eq!(v2, v1);
    }

    #[test]
    fn each_plan_row_and_measurement_is_a_line_of_its_own() {
        let (info, plan, ms) = run_with_everything();
        let text = streamed(&info, &plan, &ms);
        let ms = as_read(&ms);
        let lines: Vec<&str> = text.lines().collect();
        let at = |key: &str| {
            lines
                .iter()
                .position(|l| *l == format!("  \"{key}\": ["))
                .unwrap()
        };
        let (p, m) = (at("plan"), at("measurements"));
        assert_eq!(m - p, plan.len() + 2, "{text}");
        for l in &lines[p + 1..p + 1 + plan.len()] {
            let row: PlannedMeasurement =
                serde_json::from_str(l.trim().trim_end_matches(',')).unwrap();
            assert!(plan.contains(&row));
        }
        assert_eq!(lines.len(), m + ms.len() + 3, "{text}");
        for (l, want) in lines[m + 1..].iter().zip(&ms) {
            let got: MeasurementRecord =
                serde_json::from_str(l.trim().trim_end_matches(',')).unwrap();
            assert_eq!(&got, want);
        }
        assert_eq!(lines[lines.len() - 2..], ["  ]", "}"]);
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
