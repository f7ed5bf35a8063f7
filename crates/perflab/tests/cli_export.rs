//! `perflab export` through the binary: benchstat's text format and the JSON document's
//! format header, over a real run of the `null` workload.

use crate::common;

use common::{text, two_variant_null_run, Lab};

#[test]
fn benchstat_export_has_a_line_per_result_and_nothing_else_on_stdout() {
    let lab = Lab::new();
    let id = two_variant_null_run(&lab, &["--label", "before"]);
    let doc = lab.export(&id);
    let results: Vec<&serde_json::Value> = doc["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "headline" && m["status"]["status"] == "ok")
        .collect();
    assert_eq!(results.len(), 20, "2 points x 2 variants x 5 repetitions");

    let o = lab.run(&["export", &id, "--format", "benchstat"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let lines: Vec<&str> = out.lines().filter(|l| l.starts_with("Benchmark")).collect();
    assert_eq!(lines.len(), results.len(), "{out}");
    for (line, m) in lines.iter().zip(&results) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        // The sleep differs between the points; the variant is a key of its own.
        let sleep = m["params"]["sleep"].as_f64().unwrap();
        let name = format!(
            "BenchmarkNull/sleep={sleep}/variant={}",
            m["variant"].as_str().unwrap()
        );
        assert_eq!(fields[0], name, "{line}");
        assert_eq!(fields[1], "1");
        let value = m["output"]["metrics"][0]["value"].as_f64().unwrap();
        // serde_json reads the last digit of a JSON float approximately.
        let read: f64 = fields[2].parse().unwrap();
        assert!(
            (read - value).abs() <= 1e-12 * value.abs(),
            "{read} {value}"
        );
        assert_eq!(fields[3], "value");
    }
    assert!(out.contains("\npkg: perflab/null\n"), "{out}");
    assert!(
        out.contains(&format!("# perflab run {id} of study null")),
        "{out}"
    );
    // Every line is a result, a `key: value` configuration, unit metadata or a comment.
    for l in out.lines() {
        assert!(
            l.starts_with("Benchmark")
                || l.starts_with("Unit ")
                || l.starts_with("# ")
                || ["goos: ", "goarch: ", "pkg: "]
                    .iter()
                    .any(|k| l.starts_with(k)),
            "{l}"
        );
    }
}

#[test]
fn the_json_export_says_its_format_and_version_first() {
    let lab = Lab::new();
    let id = two_variant_null_run(&lab, &[]);
    let o = lab.run(&["export", &id]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    // At the top of the text, before the run, for a reader that looks no further.
    let head: Vec<&str> = out.lines().take(3).map(str::trim).collect();
    assert_eq!(
        head,
        [
            "{",
            "\"format\": \"perflab-export\",",
            "\"format_version\": 2,"
        ]
    );
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let keys: Vec<&String> = doc.as_object().unwrap().keys().collect();
    assert_eq!(keys.len(), 7, "{keys:?}");
    let columns = ["source", "key", "label", "cpu", "value", "unit"];
    assert_eq!(doc["telemetry_columns"], serde_json::json!(columns));
    assert!(doc["plan"].is_array(), "the plan, for import");
    // The keys the documentation lists are there, with the types it gives.
    let run = &doc["run"];
    for k in [
        "id",
        "uid",
        "created_at",
        "study",
        "workload",
        "status",
        "spec",
        "fingerprint",
    ] {
        assert!(!run[k].is_null(), "run.{k}");
    }
    for k in ["planned", "done", "failed", "ineffective"] {
        assert!(run[k].is_u64(), "run.{k}");
    }
    assert!(run["unavailable"].is_array() && run.get("label").is_some());
    let m = &doc["measurements"][0];
    for k in ["seq", "point", "rep"] {
        assert!(m[k].is_u64(), "measurement.{k}");
    }
    for k in ["started_at", "elapsed_s"] {
        assert!(m[k].is_f64(), "measurement.{k}");
    }
    assert!(m["params"].is_object() && m["variant"].is_string());
    assert_eq!(m["status"]["status"], "ok");
    assert_eq!(m["role"], "headline");
    assert!(m["telemetry"].is_array() && m["monitors"].is_array());
    // Each telemetry row is the array of its fields, as `telemetry_columns` names them.
    let rows = m["telemetry"].as_array().unwrap();
    assert!(!rows.is_empty(), "the default monitors' rows");
    for row in rows {
        let row = row.as_array().unwrap();
        assert_eq!(row.len(), columns.len(), "{row:?}");
        assert!(row[0].is_string() && row[1].is_string() && row[2].is_string());
        assert!(row[3].is_null() || row[3].is_u64());
        assert!(row[4].is_number() && row[5].is_string());
    }
    for k in ["metrics", "histograms", "threads", "notes"] {
        assert!(m["output"][k].is_array(), "output.{k}");
    }
    let metric = &m["output"]["metrics"][0];
    assert_eq!(metric["name"], "value");
    assert!(metric["value"].is_f64() && metric["unit"].is_string());
    assert!(["higher", "lower", "neither"].contains(&metric["better"].as_str().unwrap()));
}

/// An export as format_version 1 wrote it (each histogram's bytes an array of numbers,
/// each telemetry row an object, the document pretty-printed) still imports, as the
/// very run a version 2 export is.
#[test]
fn a_version_1_export_imports_as_the_same_run() {
    #[derive(serde::Deserialize)]
    struct Bytes(
        #[serde(deserialize_with = "perflab_core::serde_base64::bytes_or_base64")] Vec<u8>,
    );
    let lab = Lab::new();
    let id = two_variant_null_run(&lab, &[]);
    let v2 = lab.export(&id);
    let mut v1 = v2.clone();
    v1["format_version"] = 1.into();
    let columns = v1
        .as_object_mut()
        .unwrap()
        .remove("telemetry_columns")
        .unwrap();
    let columns: Vec<String> = serde_json::from_value(columns).unwrap();
    let mut arrays = 0;
    for m in v1["measurements"].as_array_mut().unwrap() {
        for row in m["telemetry"].as_array_mut().unwrap() {
            let fields = row.as_array().unwrap().clone();
            *row = serde_json::Value::Object(columns.iter().cloned().zip(fields).collect());
        }
        for h in m["output"]["histograms"].as_array_mut().unwrap() {
            let encoded = &mut h["encoded"];
            assert!(encoded.is_string(), "version 2 writes base64: {encoded}");
            let Bytes(bytes) = serde_json::from_value(encoded.clone()).unwrap();
            *encoded = serde_json::to_value(bytes).unwrap();
            arrays += 1;
        }
    }
    assert!(arrays > 0, "the null workload's runs carry histograms");
    let file = lab.dir.path().join("v1.json");
    std::fs::write(&file, serde_json::to_vec_pretty(&v1).unwrap()).unwrap();
    let other = lab.dir.path().join("other.db");
    let other = other.to_str().unwrap();
    let (there, _) = lab.import_export_file(other, &file);
    let o = lab.run(&["--db", other, "export", &there]);
    assert!(o.status.success(), "{:?}", text(&o));
    let mut again: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    again["run"]["id"] = v2["run"]["id"].clone();
    assert_eq!(again, v2);
}

/// The CSV has one column per parameter, so a value holding spaces, a comma and quotes
/// (hyperfine's command `echo "a, b" 1`) is one cell that reads back as it was. Before,
/// the parameters were one `params` cell joined by spaces (`command=echo "a, b" 1 n=1`),
/// which no reader could split again.
#[test]
fn csv_has_one_column_per_parameter_and_a_value_with_spaces_and_commas_reads_back() {
    let lab = Lab::new();
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../parsers/tests/data/hyperfine/comma_scan.json");
    let o = lab.run(&["import", "--parser", "hyperfine", file.to_str().unwrap()]);
    let (_, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let id = common::run_id(&err);
    let o = lab.run(&["export", &id, "--format", "csv"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let mut r = csv::Reader::from_reader(out.as_bytes());
    let header: Vec<String> = r.headers().unwrap().iter().map(str::to_string).collect();
    assert_eq!(
        header,
        [
            "run",
            "seq",
            "point",
            "variant",
            "rep",
            "param_command",
            "param_n",
            "status",
            "metric",
            "value",
            "unit",
            "started_at",
            "elapsed_s",
            "error",
            "role"
        ],
        "{out}"
    );
    let rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 6, "2 commands x 3 runs, one metric each: {out}");
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    for (row, n) in rows.iter().zip([1, 1, 1, 2, 2, 2]) {
        assert_eq!(row.len(), header.len(), "{row:?}");
        assert_eq!(&row[col("param_command")], format!("echo \"a, b\" {n}"));
        assert_eq!(&row[col("param_n")], n.to_string());
        assert_eq!(&row[col("metric")], "time_ms");
        assert_eq!(&row[col("unit")], "ms");
    }
    // The same values as the JSON export, cell for cell.
    let doc = lab.export(&id);
    for (row, m) in rows.iter().zip(doc["measurements"].as_array().unwrap()) {
        let v: f64 = row[col("value")].parse().unwrap();
        let json = m["output"]["metrics"][0]["value"].as_f64().unwrap();
        // serde_json reads the last digit of a JSON float approximately.
        assert!((v - json).abs() <= 1e-12 * json.abs(), "{v} {json}");
        assert_eq!(row[col("seq")].parse::<u64>().ok(), m["seq"].as_u64());
    }
}
