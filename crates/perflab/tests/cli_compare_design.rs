//! End-to-end: `perflab compare` and `perflab report` say what each comparison rests on.
//! A run stores a timing probe in its fingerprint; comparing two runs names the design
//! "separate runs" and carries the drift guard, comparing two variants of one run names
//! "interleaved within one run". The probe's figures are never checked against expected
//! values (this machine's speed is not known): only that they exist and are usable.

use crate::common;

use common::{text, two_variant_null_run, Lab};

fn null_run(lab: &Lab) -> String {
    two_variant_null_run(lab, &[])
}

/// The drift guard found either agreement or a warning, naming both runs' probes.
fn assert_guarded(out: &str, a: &str, b: &str) {
    let agreed = out.contains(&format!(
        "drift guard: the timing probes of run {a} and run {b} agree"
    ));
    let warned = out.contains("WARNING: timing probe \"");
    assert!(agreed || warned, "no drift guard verdict in:\n{out}");
}

#[test]
fn compare_and_report_name_the_design_and_the_drift_guard() {
    let lab = Lab::new();
    let a = null_run(&lab);
    let b = null_run(&lab);

    let probe = &lab.export(&a)["run"]["fingerprint"]["probe"];
    let readings = probe["readings"].as_array().expect("the run has a probe");
    assert_eq!(readings.len(), 2, "{probe}");
    for r in readings {
        let v = r["value"].as_f64().unwrap();
        assert!(v.is_finite() && v > 0.0, "{r}");
    }

    let o = lab.run(&["compare", &a, &b]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        out.contains("design: separate runs, not interleaved"),
        "{out}"
    );
    assert!(out.contains("p adj  verdict"), "{out}");
    assert_guarded(&out, &a, &b);

    let o = lab.run(&["compare", &a, &b, "--format", "markdown"]);
    let (md, _) = text(&o);
    assert!(md.contains("design: separate runs"), "{md}");
    assert_guarded(&md, &a, &b);

    let o = lab.run(&["compare", &a, &b, "--format", "json"]);
    assert!(o.status.success());
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).expect("only JSON");
    let c = &doc["comparison"];
    assert_eq!(c["design"], "separate_runs");
    assert_eq!(c["p_adjustment"]["method"], "benjamini_hochberg");
    let probes = c["drift"]["probes"].as_array().expect("probes compared");
    assert_eq!(probes.len(), 2, "{}", c["drift"]);
    for p in probes {
        let ratio = p["ratio"].as_f64().unwrap();
        assert!(ratio.is_finite() && ratio > 0.0, "{p}");
        assert!(p["moved"].is_boolean());
    }
    for row in c["rows"].as_array().unwrap() {
        let (raw, adj) = (
            row["cmp"]["p_value"].as_f64().unwrap(),
            row["cmp"]["p_adjusted"].as_f64().unwrap(),
        );
        assert!(raw <= adj && adj <= 1.0, "{row}");
    }

    let o = lab.run(&["compare", &a, "--format", "json"]);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["comparison"]["design"], "interleaved_within_one_run");
    assert!(doc["comparison"]["drift"].is_null());
    let o = lab.run(&["compare", &a]);
    assert!(text(&o).0.contains("design: interleaved within one run"));

    let o = lab.run(&["report", &a, &b]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("(separate runs)"), "{out}");
    assert!(
        !out.contains("Measurements ran in interleaved order"),
        "{out}"
    );
    assert_guarded(&out, &a, &b);
    let o = lab.run(&["report", &a, &b, "--format", "json"]);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let c = &doc["comparison"][0]["comparison"];
    assert_eq!(c["design"], "separate_runs");
    assert_eq!(c["drift"]["probes"].as_array().unwrap().len(), 2);
}

/// A run of `null` whose variant b reads 20 % above a (noise `noise_pct` %, `reps`
/// repetitions); its run number.
fn a_against_b_plus_20_pct(lab: &Lab, noise_pct: &str, reps: &str) -> String {
    let noise = format!("noise_pct={noise_pct}");
    let o = lab.run(&[
        "run",
        "--workload",
        "null",
        "-p",
        &noise,
        "--variant",
        "a:value=100",
        "--variant",
        "b:value=120",
        "--reps",
        reps,
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "stdout: {out}\nstderr: {err}");
    common::run_id(&err)
}

/// Issue 32: `run --workload null --reps 1` gave `+20.00 % [+20.00 %, +20.00 %] 1.000 1.000
/// better`: a verdict from one value per side. Now the row is undecided with its reason, in
/// the text and in the JSON, and no interval is printed.
#[test]
fn one_value_per_side_gives_no_verdict_and_says_why() {
    let lab = Lab::new();
    let id = a_against_b_plus_20_pct(&lab, "0", "1");
    let o = lab.run(&["report", &id, "--format", "text"]);
    let (out, _) = text(&o);
    let row = out
        .lines()
        .find(|l| l.starts_with("all ") && l.contains("+20.00%"))
        .unwrap_or_else(|| panic!("no row of the change in:\n{out}"));
    assert!(row.ends_with("undecided"), "{row}");
    assert!(!row.contains("better"), "{row}");
    assert!(
        out.contains("undecided, one value per side: no spread to judge a change by"),
        "{out}"
    );
    let o = lab.run(&["report", &id, "--format", "json"]);
    let (json, _) = text(&o);
    assert!(json.contains("one_value_per_side"), "{json}");
}

/// Issue 32: `compare` with WORSE rows exited 0 and had no way to fail a CI job. With
/// `--fail-on` it exits 7 when a row reads one of the named verdicts, the rows listed last
/// on stderr, and 0 when none does; the table prints either way.
#[test]
fn compare_fail_on_is_a_ci_gate_naming_the_rows_that_tripped_it() {
    let lab = Lab::new();
    let id = a_against_b_plus_20_pct(&lab, "0.5", "5");
    // +20 % on 0.5 % noise, higher is better: `better`, never `WORSE`.
    let o = lab.run(&["compare", &id, "--fail-on", "worse,undecided"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "stdout: {out}\nstderr: {err}");
    assert!(out.contains("better"), "{out}");
    for gate in ["better", "changed"] {
        let o = lab.run(&["compare", &id, "--fail-on", gate]);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(7), "stdout: {out}\nstderr: {err}");
        assert!(out.contains("better"), "the table still prints: {out}");
        let last = err.lines().last().unwrap_or_default();
        assert!(
            last.starts_with(&format!(
                "perflab: --fail-on {gate}: 1 of 1 rows: all (+20."
            )) && last.ends_with("better)"),
            "{err}"
        );
    }
    let o = lab.run(&["compare", &id, "--fail-on", "sideways"]);
    assert_eq!(o.status.code(), Some(2), "{:?}", text(&o));
}
