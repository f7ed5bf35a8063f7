//! `perflab history`: runs of the null workload stored with a known step are one series,
//! and its change point is found at the run where the step is.

use crate::common;

use common::{text, Lab};

/// Eight runs at about 100 then six at about 110, labelled v1..v14, on the database `db`
/// (the lab's own where None): each run's value moves by up to ±0.6 (a run-to-run noise
/// of its own) and its repetitions by 1 %.
fn stepped(lab: &Lab, db: Option<&str>) {
    let own = lab.db();
    let db = db.unwrap_or_else(|| own.to_str().expect("a UTF-8 lab path"));
    for i in 1..=14 {
        let level = if i <= 8 { 100.0 } else { 110.0 };
        let value = level + ((i * 37) % 7) as f64 * 0.2 - 0.6;
        let label = format!("v{i}");
        let o = lab.run_on(
            db,
            &[
                "run",
                "--workload",
                "null",
                "-p",
                &format!("value={value:.1}"),
                "-p",
                "noise_pct=1",
                "--reps",
                "3",
                "--label",
                &label,
            ],
        );
        assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    }
}

#[test]
fn history_finds_the_step_at_the_run_it_happened() {
    let lab = Lab::new();
    stepped(&lab, None);
    let listed = text(&lab.run(&["history"])).0;
    assert!(listed.contains("1 series in"), "{listed}");

    let o = lab.run(&[
        "history", "--study", "null", "--metric", "value", "--format", "json",
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["format"], "perflab-history");
    let series = &doc["history"][0];
    let changes = series["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "{series}");
    let c = &changes[0];
    assert_eq!(c["index"], 8);
    assert_eq!(c["before"]["label"], "v8");
    assert_eq!(c["after"]["label"], "v9");
    let (before, after) = (
        c["median_before"].as_f64().unwrap(),
        c["median_after"].as_f64().unwrap(),
    );
    assert!(
        (before - 100.0).abs() < 1.5 && (after - 110.0).abs() < 1.5,
        "{c}"
    );
    // The null workload's value: higher is better, so a rise is "better".
    assert_eq!(c["verdict"], "better", "{c}");
    assert_eq!(doc["events"].as_array().map(Vec::len), Some(1));

    let text_out = text(&lab.run(&["history", "--study", "null"])).0;
    assert!(text_out.contains("run 9 (v9)"), "{text_out}");
    let html = text(&lab.run(&["history", "--study", "null", "--format", "html"])).0;
    assert!(html.contains("<svg"), "the HTML page plots the series");
    let mail = text(&lab.run(&["history", "--study", "null", "--format", "mail"])).0;
    assert!(
        mail.lines()
            .all(|l| l.chars().count() <= 72 || !l.contains(' ')),
        "{mail}"
    );
}

#[test]
fn a_filter_matching_nothing_is_one_line_and_exit_2() {
    let lab = Lab::new();
    let o = lab.run(&["run", "--workload", "null", "--reps", "2"]);
    assert_eq!(o.status.code(), Some(0));
    let o = lab.run(&["history", "--study", "no-such-study"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(out.is_empty());
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("no series matches --study no-such-study"),
        "{err}"
    );
}

/// A fleet's store on PostgreSQL: host A's runs of the null study (a step after run 8)
/// and host B's runs of the same study, point and variant at twice the value and without
/// a step (host A's runs exported, given host B's name and uid and values, and imported, as
/// `fleet run` and `push` bring other hosts' runs in). `history` gives one series per host,
/// each of its own 14 runs, and finds host A's step only.
#[test]
fn history_on_postgres_gives_one_series_per_host_never_mixed() {
    let Some(pg) = perflab_testkit::pg_database() else {
        return;
    };
    let lab = Lab::new();
    let url = pg.url.as_str();
    stepped(&lab, Some(url));
    let listed: serde_json::Value =
        serde_json::from_slice(&lab.run_on(url, &["ls", "--format", "json"]).stdout).unwrap();
    let host_a = {
        let o = lab.run_on(url, &["export", "1"]);
        let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        doc["run"]["fingerprint"]["hostname"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let host_b = format!("{host_a}-b");
    for (n, r) in listed["runs"].as_array().unwrap().iter().enumerate() {
        let o = lab.run_on(url, &["export", &r["id"].to_string()]);
        let mut doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        doc["run"]["fingerprint"]["hostname"] = host_b.clone().into();
        doc["run"]["uid"] = format!("{:032x}", 0xb0b0_0000u64 + n as u64).into();
        for m in doc["measurements"].as_array_mut().unwrap() {
            for metric in m["output"]["metrics"].as_array_mut().unwrap() {
                if metric["name"] == "value" {
                    // Flat at about 200: twice host A's first level, no step.
                    let v = metric["value"].as_f64().unwrap();
                    metric["value"] = (if v > 105.0 { v - 10.0 } else { v } * 2.0).into();
                }
            }
        }
        let file = lab.dir.path().join(format!("b{n}.json"));
        std::fs::write(&file, serde_json::to_vec(&doc).unwrap()).unwrap();
        let o = lab.run_on(
            url,
            &[
                "import",
                "--parser",
                "perflab-json",
                &file.to_string_lossy(),
            ],
        );
        assert!(o.status.success(), "{:?}", text(&o));
    }
    let o = lab.run_on(
        url,
        &[
            "history", "--study", "null", "--metric", "value", "--format", "json",
        ],
    );
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let series = doc["history"].as_array().unwrap();
    assert_eq!(series.len(), 2, "one series per host: {out}");
    for s in series {
        let name = s["name"].as_str().unwrap();
        let changes = s["changes"].as_array().unwrap();
        if name.starts_with(&format!("{host_b}/")) {
            assert!(changes.is_empty(), "host B never moved: {s}");
        } else {
            assert!(name.starts_with(&format!("{host_a}/")), "{name}");
            assert_eq!(changes.len(), 1, "{s}");
            assert_eq!(changes[0]["after"]["label"], "v9", "{s}");
            // Host A's stretches, not host B's values at 200.
            assert!(changes[0]["median_after"].as_f64().unwrap() < 150.0, "{s}");
        }
    }
    // The listing: each host's series holds its own 14 runs.
    let o = lab.run_on(url, &["history", "--format", "json"]);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let value_series: Vec<&serde_json::Value> = doc["series"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["key"]["metric"] == "value")
        .collect();
    assert_eq!(value_series.len(), 2, "{doc}");
    for s in value_series {
        assert_eq!(s["runs"], 14, "{s}");
    }
}
