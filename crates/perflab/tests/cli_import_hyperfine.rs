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

#[test]
fn two_commands_are_two_points_of_ten_repetitions() {
    let lab = Lab::new();
    let file = fixture("two_commands.json");
    let o = lab.run(&["import", "--parser", "hyperfine", file.to_str().unwrap()]);
    let (_, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let doc = lab.export(&run_id(&err));
    let ms = doc["measurements"].as_array().unwrap();
    assert_eq!(ms.len(), 20);
    for (point, command) in [(0, "ls /"), (1, "true")] {
        let reps: Vec<u64> = ms
            .iter()
            .filter(|m| m["point"] == point)
            .inspect(|m| assert_eq!(m["params"]["command"], command))
            .map(|m| m["rep"].as_u64().unwrap())
            .collect();
        assert_eq!(reps, (0..10).collect::<Vec<u64>>());
    }
}
