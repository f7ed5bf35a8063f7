//! What `run --dry-run` tells a person before anything is measured.

use crate::common;
use common::{text, Lab};

/// Two points, two variants, five repetitions and one telemetry repetition per point and
/// variant: 20 headline measurements and 4 telemetry ones.
fn plan_with_telemetry(lab: &Lab) -> String {
    let path = lab.dir.path().join("tele.toml");
    std::fs::write(
        &path,
        r#"
name = "tele"
workload = "null"
repetitions = 5
telemetry_reps = 1
monitors = ["cpu_time", "counters"]
[params]
noise_pct = [1, 2]
[[variants]]
name = "a"
[[variants]]
name = "b"
params = { value = 110 }
"#,
    )
    .unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn the_plan_header_counts_telemetry_repetitions_aloud_and_labels_them() {
    let lab = Lab::new();
    let file = plan_with_telemetry(&lab);
    let o = lab.run(&["run", &file, "--dry-run"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}\n{err}");
    // The JSON spec comes first; the header and the first and last lines of the plan
    // are what a person reads.
    // The parameters of each planned line are left out: only the header and the labels.
    let lines: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.contains(" points x "))
        .map(|l| l.rsplit_once("  ").map_or(l, |(head, _)| head))
        .collect();
    let shown: Vec<&str> = lines
        .iter()
        .take(3)
        .chain(lines.iter().filter(|l| l.ends_with(" telemetry")))
        .copied()
        .collect();
    insta::assert_snapshot!(shown.join("\n"));
}

#[test]
fn a_json_dry_run_counts_the_telemetry_measurements() {
    let lab = Lab::new();
    let file = plan_with_telemetry(&lab);
    let o = lab.run(&["run", &file, "--dry-run", "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["measurements"], 24);
    assert_eq!(doc["telemetry_measurements"], 4);
}

/// A parameter every variant sets would never run with its grid value (`-p backing=2m`
/// on gpu-xfer, whose variants are the backings): one line naming it and the variants,
/// exit 2, before anything is planned or stored. Where a variant leaves it alone, it runs.
#[test]
fn a_parameter_every_variant_overrides_is_refused() {
    let lab = Lab::new();
    // `-p value=5` with variant a setting value and variant b setting `second`.
    let run = |second: &str| {
        let b = format!("b:{second}");
        lab.run(&[
            "run",
            "--workload",
            "null",
            "-p",
            "value=5",
            "--variant",
            "a:value=1",
            "--variant",
            &b,
            "--dry-run",
        ])
    };
    let o = run("value=2");
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}\n{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("parameter value = 5 is set by every variant (a, b)"),
        "{err}"
    );
    // One variant that leaves it alone, and the value is used there.
    let o = run("noise_pct=0");
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}\n{err}");
}
