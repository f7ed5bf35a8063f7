//! End-to-end: a run whose perflab was SIGKILLed never marked itself interrupted, and was
//! listed as running forever. Its claim went with its process, so it is shown interrupted,
//! with the resume hint, and resuming it finishes it.

use crate::common;

use std::io::{BufRead, BufReader};
use std::time::{Duration, Instant};

use common::{run_id, text, Lab};

/// The `ls` row of run `id`.
fn ls_row(lab: &Lab, id: &str) -> (String, String) {
    let o = lab.run(&["ls"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let row = out
        .lines()
        .find(|l| l.split_whitespace().next() == Some(id))
        .unwrap_or_else(|| panic!("run {id} is not listed: {out}"))
        .to_string();
    (row, out)
}

#[test]
fn a_killed_run_is_listed_interrupted_with_the_resume_hint_and_resumes() {
    let lab = Lab::new();
    let mut child = lab
        .cmd()
        .args([
            "run",
            "--workload",
            "null",
            "-p",
            "sleep=100ms",
            "--reps",
            "40",
        ])
        .args(["--telemetry-reps", "0"])
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let line = lines
        .by_ref()
        .map(|l| l.unwrap())
        .find(|l| l.contains("measurements to go"))
        .expect("the run says how many measurements it has to go");
    let id = run_id(&line);
    let deadline = Instant::now() + Duration::from_secs(60);
    while lab.export(&id)["measurements"]
        .as_array()
        .unwrap()
        .is_empty()
    {
        assert!(
            Instant::now() < deadline,
            "run {id} stored nothing in a minute"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // While its perflab measures it, the run is running.
    let (row, _) = ls_row(&lab, &id);
    assert!(row.contains(" running "), "{row}");

    child.kill().expect("SIGKILL");
    child.wait().unwrap();

    let (row, out) = ls_row(&lab, &id);
    assert!(row.contains(" interrupted "), "{out}");
    assert!(
        out.contains(&format!(
            "run {id} interrupted: resume with: perflab run --resume {id}\n"
        )),
        "{out}"
    );
    let o = lab.run(&["show", &id]);
    let (shown, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        shown.lines().next().unwrap_or("").contains(" interrupted "),
        "{shown}"
    );
    assert!(
        shown.contains(&format!(
            "\ninterrupted: resume with: perflab run --resume {id}\n"
        )),
        "{shown}"
    );
    assert_eq!(lab.export(&id)["run"]["status"], "interrupted");

    let o = lab.run(&["run", "--resume", &id]);
    assert!(o.status.success(), "{:?}", text(&o));
    let (row, out) = ls_row(&lab, &id);
    assert!(row.contains(" complete "), "{row}");
    assert!(!out.contains("resume with"), "{out}");
}
