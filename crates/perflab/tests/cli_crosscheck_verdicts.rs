//! `perflab crosscheck verdicts`: the seeded simulation of issue 22 runs without root,
//! prints the targets and exits 0 when no false-verdict rate exceeds its bound.

use crate::common;

use common::{text, Lab};

#[test]
fn crosscheck_verdicts_prints_the_targets_and_exits_0() {
    let lab = Lab::new();
    let o = lab.run(&["crosscheck", "verdicts", "--families", "100"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "stdout: {out}\nstderr: {err}");
    for want in [
        "verdicts: seeded simulation (seed 2026, 100 families per line",
        "false better/worse, no change, 40 rows x 5 reps, 1% noise, threshold 1%",
        "power, one row +5% among 40 rows x 5 reps, 1% noise: flagged better",
        "same, all rows equal, 40 rows x 5 reps, 0.5% noise, threshold 1%: rows",
        "until-decided, 16 rows each +5% in 3% noise: pairs spent / fixed design",
    ] {
        assert!(out.contains(want), "missing {want:?} in\n{out}");
    }
    assert!(!out.contains("EXCEEDED"), "{out}");
    // Seeded: the same table twice (but for the line that says how long it took).
    let again = text(&lab.run(&["crosscheck", "verdicts", "--families", "100"])).0;
    let body = |s: &str| {
        s.lines()
            .filter(|l| !l.contains(" lines in "))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(body(&out), body(&again));
    let o = lab.run(&["crosscheck", "verdicts", "--tolerance", "3"]);
    assert_eq!(o.status.code(), Some(2), "{:?}", text(&o));
}
