//! The round-trip percentiles (p50, p90, p99, p99.9, max) of a real ctxsw run appear in
//! every output of `show`, `compare` and `report`, with the same figures everywhere.

use crate::common;

use common::{run_id, text, Lab};

#[test]
fn ctxsw_percentiles_in_show_compare_and_report() {
    let lab = Lab::new();
    let o = lab.run(&[
        "run",
        "quick",
        "--quick",
        "--reps",
        "2",
        "--duration",
        "0.2s",
        "--monitors",
        "interrupts",
    ]);
    let (_, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let id = run_id(&err);
    let run = |args: &[&str]| {
        let o = lab.run(args);
        let (out, err) = text(&o);
        assert!(o.status.success(), "{args:?}: {err}");
        out
    };
    let json = |args: &[&str]| -> serde_json::Value {
        serde_json::from_str(&run(args)).unwrap_or_else(|e| panic!("{args:?}: {e}"))
    };

    // show --format json: a row per point and variant, pooled over the 2 repetitions.
    let shown = json(&["show", &id, "--format", "json"]);
    let rows = shown["percentiles"]["rows"].as_array().unwrap().clone();
    let points = lab.export(&id)["run"]["spec"]["points"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(rows.len(), points * 2, "{rows:?}");
    for r in &rows {
        assert_eq!(r["reps"], 2, "{r}");
        let p: Vec<f64> = ["p50", "p90", "p99", "max"]
            .iter()
            .map(|k| r[k].as_f64().unwrap_or_else(|| panic!("{k}: {r}")))
            .collect();
        // Percentiles of one distribution never decrease.
        assert!(p.windows(2).all(|w| w[0] <= w[1]) && p[0] > 0.0, "{r}");
    }

    for out in [
        run(&["show", &id]),
        run(&["compare", &id]),
        run(&["compare", &id, "--format", "markdown"]),
        run(&["report", &id]),
        run(&["report", &id, "--format", "markdown"]),
        run(&["report", &id, "--format", "mail"]),
    ] {
        assert!(out.contains("Latency percentiles in µs"), "{out}");
        assert!(out.contains("p90") && out.contains("p99.9"), "{out}");
    }
    // The JSON of compare and report carry the same rows as show.
    let compared = json(&["compare", &id, "--format", "json"]);
    assert_eq!(compared["percentiles"]["rows"].as_array().unwrap(), &rows);
    let reported = json(&["report", &id, "--format", "json"]);
    assert_eq!(
        reported["latency"]["percentiles"]["rows"]
            .as_array()
            .unwrap(),
        &rows
    );
}
