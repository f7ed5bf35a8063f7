//! End-to-end: `--until-decided` (issue 22) with the null workload's seeded noise: rows
//! left undecided by the planned repetitions get more, interleaved, up to the cap, and
//! the run's end says what was decided and what still is not.

use crate::common;

use std::collections::BTreeMap;

use common::{run_id, text, Lab};

/// Two points, a baseline and a variant 6 % higher, ±8 % pseudo-noise: four repetitions
/// leave the rows undecided, the cap of 20 decides them.
const RUN: &[&str] = &[
    "run",
    "--workload",
    "null",
    "-p",
    "noise_pct=8",
    "-p",
    "fail_every=0,1000000",
    "--variant",
    "base:value=100",
    "--variant",
    "new:value=106",
    "--monitors",
    "cpu_time",
    "--reps",
    "4",
];

fn counts(doc: &serde_json::Value) -> BTreeMap<(u64, String), usize> {
    let mut out = BTreeMap::new();
    for m in doc["measurements"].as_array().unwrap() {
        let key = (
            m["point"].as_u64().unwrap(),
            m["variant"].as_str().unwrap().to_string(),
        );
        *out.entry(key).or_default() += 1;
    }
    out
}

#[test]
fn undecided_rows_get_repetitions_until_decided() {
    let lab = Lab::new();
    let mut args: Vec<&str> = RUN.to_vec();
    args.extend(["--until-decided", "--max-reps", "20"]);
    let o = lab.run(&args);
    let (out, err) = text(&o);
    assert!(o.status.success(), "stdout: {out}\nstderr: {err}");
    assert!(err.contains("until-decided round 1"), "{err}");
    assert!(out.contains("until decided: "), "{out}");
    let doc = lab.export(&run_id(&err));
    let c = counts(&doc);
    // Balanced: the baseline and the variant got as many at each point.
    for point in [0, 1] {
        assert_eq!(
            c[&(point, "base".into())],
            c[&(point, "new".into())],
            "{c:?}"
        );
    }
    assert!(
        c.values().any(|&n| n > 4),
        "no row got more repetitions: {c:?}"
    );
    assert!(c.values().all(|&n| n <= 20), "{c:?}");

    // Without the flag the planned four stay four.
    let o = lab.run(RUN);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(!out.contains("until decided"), "{out}");
    let c = counts(&lab.export(&run_id(&err)));
    assert!(c.values().all(|&n| n == 4), "{c:?}");
}
