//! `perflab import --parser hyperfine`: every run hyperfine timed becomes a repetition, so
//! the stored run's statistics are over the runs, and agree with hyperfine's own mean,
//! median, min and max of the same times. The file is real hyperfine output (see
//! crates/parsers/tests/data/hyperfine/README.md).

use crate::common;

use common::{run_id, text, Lab};

fn fixture(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../parsers/tests/data/hyperfine")
        .join(name)
}

#[test]
fn each_hyperfine_run_is_a_repetition_with_statistics_over_them() {
    let lab = Lab::new();
    let file = fixture("sleep_10ms.json");
    let hf: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let hf = &hf["results"][0];
    let times: Vec<f64> = hf["times"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_f64().unwrap() * 1e3)
        .collect();
    assert_eq!(times.len(), 12);

    let o = lab.run(&["import", "--parser", "hyperfine", file.to_str().unwrap()]);
    let (_, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let id = run_id(&err);
    assert!(err.contains("imported 12 measurement(s)"), "{err}");

    let doc = lab.export(&id);
    let ms = doc["measurements"].as_array().unwrap();
    assert_eq!(ms.len(), 12);
    for (i, m) in ms.iter().enumerate() {
        assert_eq!(
            (m["point"].as_u64(), m["rep"].as_u64()),
            (Some(0), Some(i as u64))
        );
        assert_eq!(m["params"]["command"], "sleep 0.01");
        let metrics = m["output"]["metrics"].as_array().unwrap();
        assert_eq!(metrics.len(), 1, "{m}");
        assert_eq!(metrics[0]["name"], "time_ms");
        assert!((metrics[0]["value"].as_f64().unwrap() - times[i]).abs() < 1e-9);
    }
    assert_eq!(doc["run"]["spec"]["primary_metric"], "time_ms");

    // `show` summarises the twelve runs: the same median, mean, min and max as hyperfine.
    let o = lab.run(&["show", &id, "--format", "json"]);
    assert!(o.status.success(), "{:?}", text(&o));
    let show: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let s = &show["summary"]["rows"][0]["summary"];
    assert_eq!(s["n"], 12, "{s}");
    for (ours, theirs) in [
        ("median", "median"),
        ("mean", "mean"),
        ("min", "min"),
        ("max", "max"),
    ] {
        let (a, b) = (
            s[ours].as_f64().unwrap(),
            hf[theirs].as_f64().unwrap() * 1e3,
        );
        assert!(
            (a - b).abs() < 1e-6 * b,
            "{ours}: {a} against hyperfine's {b}"
        );
    }
    let (out, _) = text(&lab.run(&["show", &id]));
    assert!(out.contains("median time_ms [ms]"), "{out}");
}

/// Two commands are what hyperfine compares ("1.57 ± 0.44 times faster"): they are two
/// variants of one point, and `compare` compares them (it said "nothing to compare" when
/// they were two points).
#[test]
fn two_commands_are_two_variants_that_compare_compares() {
    let lab = Lab::new();
    let file = fixture("two_sleeps.json");
    let o = lab.run(&["import", "--parser", "hyperfine", file.to_str().unwrap()]);
    let (_, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let id = run_id(&err);
    let doc = lab.export(&id);
    let ms = doc["measurements"].as_array().unwrap();
    assert_eq!(ms.len(), 20);
    for (variant, command) in [("sleep 0.01", "sleep 0.01"), ("sleep 0.02", "sleep 0.02")] {
        let reps: Vec<u64> = ms
            .iter()
            .filter(|m| m["variant"] == variant)
            .inspect(|m| {
                assert_eq!(
                    (m["point"].as_u64(), &m["params"]),
                    (Some(0), &serde_json::json!({})),
                    "{command}"
                )
            })
            .map(|m| m["rep"].as_u64().unwrap())
            .collect();
        assert_eq!(reps, (0..10).collect::<Vec<u64>>());
    }
    let spec = &doc["run"]["spec"];
    let variants: Vec<&str> = spec["variants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    assert_eq!(variants, ["sleep 0.01", "sleep 0.02"]);
    assert_eq!(spec["compare"]["baseline"], "sleep 0.01");

    let o = lab.run(&["compare", &id, "--format", "json"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(!err.contains("nothing to compare"), "{err}");
    let cmp: serde_json::Value = serde_json::from_str(&out).unwrap();
    // hyperfine timed all of A's runs before B's: the comparison claims no interleaving
    // and pairs nothing (it read "interleaved within one run" and paired run i with run i).
    assert_eq!(cmp["comparison"]["design"], "imported", "{cmp}");
    let row = &cmp["comparison"]["rows"][0];
    assert_eq!(
        (row["cmp"]["a"]["n"].as_u64(), row["cmp"]["b"]["n"].as_u64()),
        (Some(10), Some(10)),
        "{row}"
    );
    // The medians are the runs' own: hyperfine's median of each command, in ms.
    let hf: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    for (side, i) in [("a", 0), ("b", 1)] {
        let theirs = hf["results"][i]["median"].as_f64().unwrap() * 1e3;
        let ours = row["cmp"][side]["median"].as_f64().unwrap();
        assert!(
            (ours - theirs).abs() < 1e-6 * theirs,
            "{side}: {ours} against {theirs}"
        );
    }
    let (out, _) = text(&lab.run(&["compare", &id]));
    assert!(
        out.contains("sleep 0.01") && out.contains("sleep 0.02"),
        "{out}"
    );
    assert!(out.contains("design: variants of one import"), "{out}");
    assert!(!out.contains("interleaved within one run"), "{out}");
}

/// hyperfine's own summary of each command (mean, stddev, median, min, max, user and
/// system time) is stored with the run, under the command's point and variant: user and
/// system time are nowhere else. It was dropped before.
#[test]
fn hyperfine_s_summary_of_each_command_is_kept() {
    let lab = Lab::new();
    let file = fixture("two_sleeps.json");
    let o = lab.run(&["import", "--parser", "hyperfine", file.to_str().unwrap()]);
    let (_, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let doc = lab.export(&run_id(&err));
    let hf: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let summaries = doc["run"]["spec"]["imported"]["summaries"]
        .as_array()
        .unwrap();
    assert_eq!(summaries.len(), 2, "{summaries:?}");
    for (s, theirs) in summaries.iter().zip(hf["results"].as_array().unwrap()) {
        assert_eq!(s["variant"], theirs["command"]);
        assert_eq!(s["point"], 0);
        for key in ["mean", "stddev", "median", "min", "max", "user", "system"] {
            let m = s["metrics"]
                .as_array()
                .unwrap()
                .iter()
                .find(|m| m["name"] == format!("{key}_ms"))
                .unwrap_or_else(|| panic!("no {key}_ms in {s}"));
            let (ours, theirs) = (
                m["value"].as_f64().unwrap(),
                theirs[key].as_f64().unwrap() * 1e3,
            );
            assert!(
                (ours - theirs).abs() <= 1e-9 * theirs.max(1e-9),
                "{key}: {ours} against {theirs}"
            );
            assert_eq!(m["unit"], "milliseconds");
        }
    }

    // One command: its summary under the one point and the default variant.
    let file = fixture("sleep_10ms.json");
    let o = lab.run(&["import", "--parser", "hyperfine", file.to_str().unwrap()]);
    let (_, err) = text(&o);
    let doc = lab.export(&run_id(&err));
    let s = &doc["run"]["spec"]["imported"]["summaries"];
    assert_eq!(s.as_array().map(Vec::len), Some(1), "{s}");
    assert_eq!(
        (&s[0]["variant"], &s[0]["point"]),
        (&serde_json::json!("default"), &serde_json::json!(0))
    );
    assert!(
        s[0]["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["name"] == "user_ms"),
        "{s}"
    );
}

/// Issue 34 item 6: hyperfine's summary was stored but `show` printed none of it; it
/// prints each command's, user and system time included, as hyperfine wrote them.
#[test]
fn show_prints_hyperfine_s_own_summary_of_each_command() {
    let lab = Lab::new();
    let file = fixture("two_sleeps.json");
    let o = lab.run(&["import", "--parser", "hyperfine", file.to_str().unwrap()]);
    let (_, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let o = lab.run(&["show", &run_id(&err)]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        out.contains("hyperfine's own summary over each command's runs"),
        "{out}"
    );
    let hf: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    for theirs in hf["results"].as_array().unwrap() {
        let command = theirs["command"].as_str().unwrap();
        let line = out
            .lines()
            .find(|l| l.starts_with(&format!("  {command}: mean ")))
            .unwrap_or_else(|| panic!("no summary of {command}: {out}"));
        // Milliseconds, as hyperfine's seconds times 1,000 (two decimals from 1 ms up).
        let mean = theirs["mean"].as_f64().unwrap() * 1e3;
        assert!(mean >= 1.0, "{mean}");
        assert!(line.contains(&format!("mean {mean:.2} ms ± ")), "{line}");
        for key in ["median", "min", "max", "user", "system"] {
            assert!(line.contains(&format!(", {key} ")), "{key}: {line}");
        }
    }
}

/// A parameter scan stays a scan: its commands are told apart by the parameter, so each
/// is a point (with `command` and `n`), not a variant.
#[test]
fn a_parameter_scan_is_points_of_one_variant() {
    let lab = Lab::new();
    let file = fixture("param_scan.json");
    let o = lab.run(&["import", "--parser", "hyperfine", file.to_str().unwrap()]);
    let (_, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let doc = lab.export(&run_id(&err));
    let ms = doc["measurements"].as_array().unwrap();
    assert!(ms.iter().all(|m| m["variant"] == "default"));
    let points: std::collections::BTreeSet<u64> =
        ms.iter().map(|m| m["point"].as_u64().unwrap()).collect();
    assert_eq!(points.len(), 3);
    assert_eq!(ms[0]["params"]["command"], "sleep 0.01");
    assert_eq!(ms[0]["params"]["n"], 1);
}
