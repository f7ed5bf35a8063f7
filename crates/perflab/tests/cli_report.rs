//! End-to-end `perflab report`: two runs of the `null` workload through the real binary
//! in every format, the HTML file written, and bad input refused with one line, exit 2,
//! and nothing written.

use crate::common;

use common::{text, two_variant_null_run, Lab};

/// A run of `null` with two variants over two points, labelled.
fn null_run(lab: &Lab, label: &str) -> String {
    two_variant_null_run(lab, &["--label", label])
}

#[test]
fn report_in_every_format_and_as_html() {
    let lab = Lab::new();
    let a = null_run(&lab, "before");
    let b = null_run(&lab, "after");

    let o = lab.run(&["report", &a]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        out.contains(&format!("perflab report: run {a} \"before\"")),
        "{out}"
    );
    assert!(out.contains("method: docs/METHODOLOGY.md"), "{out}");

    let o = lab.run(&["report", &a, &b, "--format", "mail"]);
    let (mail, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(mail.contains("The runs' fingerprints match"), "{mail}");
    let widest = mail.lines().map(|l| l.chars().count()).max().unwrap();
    assert!(widest <= 72, "{widest} columns:\n{mail}");

    let o = lab.run(&["report", &a, &b, "--format", "markdown"]);
    assert!(o.status.success());
    assert!(text(&o).0.starts_with("# perflab report:"));

    let o = lab.run(&["report", &a, &b, "--format", "json"]);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(doc["runs"].as_array().unwrap().len(), 2);
    assert_eq!(doc["comparison"].as_array().unwrap().len(), 1);

    let page = lab.dir.path().join("report.html");
    let o = lab.run(&["report", &a, "--html", page.to_str().unwrap()]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        out.is_empty(),
        "--html alone prints nothing on stdout: {out}"
    );
    assert!(
        err.contains("report written to") && err.contains("plot"),
        "{err}"
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("<figure class=\"plot\""),
        "the page has plots"
    );
    assert!(html.contains("Content-Security-Policy"));
}

#[test]
fn bad_input_is_one_line_exit_2_and_writes_nothing() {
    let lab = Lab::new();
    let a = null_run(&lab, "only");
    let page = lab.dir.path().join("never.html");
    let page = page.to_str().unwrap();
    for (args, says) in [
        (vec!["report", "999", "--html", page], "999"),
        (vec!["report", &a, &a, "--html", page], "named twice"),
        (vec!["report", &a, "--alpha", "2", "--html", page], "alpha"),
        (
            vec!["report", &a, "--buckets", "5,2", "--html", page],
            "--buckets",
        ),
        (
            vec!["report", &a, "--metric", "nope", "--html", page],
            "nope",
        ),
        (
            vec!["report", &a, "--section", "runs,nope", "--html", page],
            "--section nope: no such section (known: environment, comparison, runs",
        ),
    ] {
        let o = lab.run(&args);
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(
            !std::path::Path::new(page).exists(),
            "{args:?} wrote the page"
        );
    }
    let o = lab.run(&["report"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn html_dash_writes_the_page_and_only_the_page_to_stdout() {
    let lab = Lab::new();
    let a = null_run(&lab, "piped");
    let o = lab.run(&["report", &a, "--html", "-"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        out.starts_with("<!DOCTYPE html>"),
        "{}",
        &out[..out.len().min(200)]
    );
    assert!(
        out.trim_end().ends_with("</html>"),
        "nothing after the page"
    );
    assert_eq!(out.matches("<html").count(), 1);
    assert!(out.contains("<figure class=\"plot\""), "the page has plots");
    // No file named `-` appears; the note goes to stderr.
    assert!(!lab.dir.path().join("-").exists());
    assert!(err.contains("report written to standard output"), "{err}");

    // A format on stdout as well would mix two documents: refused, nothing printed.
    let o = lab.run(&["report", &a, "--html", "-", "--format", "json"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(out.is_empty(), "{out}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("--html -"), "{err}");
}

/// `show`, `compare` and `report` print the same sections: `--section` picks them, and
/// the table `show` prints is the one `report` prints under its heading.
#[test]
fn sections_are_picked_by_name_and_shared() {
    let lab = Lab::new();
    let a = null_run(&lab, "picked");
    let o = lab.run(&["report", &a, "--section", "runs,how-to-read"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("method: docs/METHODOLOGY.md"), "{out}");
    assert!(out.contains("Runs\n----"), "{out}");
    assert!(!out.contains("A = "), "no comparison was asked for: {out}");

    let o = lab.run(&["show", &a, "--section", "summary"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        out.contains("CI of the median by percentile bootstrap"),
        "{out}"
    );

    let o = lab.run(&["show", &a, "--section", "comparison"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}");
    assert!(out.is_empty(), "bad input prints nothing: {out}");
    // The run's tables (the report crate's registry) come after the lock waits.
    assert!(
        err.trim().starts_with(
            "perflab: --section comparison: no such section (known: summary, threads, \
             lock-wait, interrupts, counters, "
        ) && err.trim().ends_with(", latency, percentiles, spans)"),
        "{err}"
    );

    // The comparison `compare` prints is, word for word, the one in the report.
    let o = lab.run(&["compare", &a]);
    let (table, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let o = lab.run(&["report", &a, "--section", "comparison"]);
    let (report, _) = text(&o);
    let first = table.lines().nth(1).unwrap();
    assert!(report.contains(first), "{first:?} not in\n{report}");
    let o = lab.run(&["compare", &a, "--section", "comparison"]);
    let (only, _) = text(&o);
    assert!(table.starts_with(&only), "{only}");
    assert!(!only.contains("Latency percentiles"), "{only}");
    let o = lab.run(&["compare", &a, "--section", "percentiles"]);
    let (only, _) = text(&o);
    assert!(only.starts_with("Latency percentiles in µs"), "{only}");
    assert!(table.ends_with(&only), "{only}");
    let o = lab.run(&["compare", &a, "--section", "summary"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o)
        .1
        .contains("(known: comparison, scan, distribution, telemetry, percentiles)"));
}
