//! The HTML report opened in a real browser (headless Chromium): every plot rendered with
//! its axes and as wide as the text column beside it, and no request left the page. Needs
//! Debian's `chromium`; skipped with that reason where it is not installed.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::more::{latency_run, threads_run};
use common::xfer::{self, V164_2M, V164_4K, VEOS_2M, VEOS_4K};
use perflab_report::doc::html::CSP;
use perflab_report::full::{build_report, ReportOptions, RunData};

fn chromium() -> Option<PathBuf> {
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find_map(|name| perflab_testkit::which(name))
}

/// Runs the browser as the issue prescribes, never reaching the network.
fn browse(bin: &Path, args: &[&str], page: &Path) -> std::process::Output {
    Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--host-resolver-rules=MAP * ~NOTFOUND",
        ])
        .args(args)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium starts")
}

/// Written into a copy of the page: for every figure, what the browser laid out, and
/// every resource the page fetched.
const CHECK: &str = r#"<script>
window.addEventListener('load', () => {
  const figures = [];
  for (const f of document.querySelectorAll('figure.plot')) {
    const svg = f.querySelector('svg');
    const texts = svg ? Array.from(svg.querySelectorAll('text')).map(t => t.textContent.trim()) : [];
    const box = svg ? svg.getBoundingClientRect() : { width: 0, height: 0 };
    const numeric = texts.filter(t => /^[-+]?[0-9.]+[A-Za-z%]*$/.test(t)).length;
    figures.push({
      kind: f.dataset.plot, x: f.dataset.xAxis, y: f.dataset.yAxis,
      has_x: texts.includes(f.dataset.xAxis), has_y: texts.includes(f.dataset.yAxis),
      axes: !!(svg && svg.querySelector('g.axes')), texts: texts.length, numeric,
      width: box.width, height: box.height,
    });
  }
  const resources = performance.getEntriesByType('resource').map(r => r.name);
  // The text column: the width the body gives its paragraphs.
  const column = document.body.clientWidth
    - parseFloat(getComputedStyle(document.body).paddingLeft)
    - parseFloat(getComputedStyle(document.body).paddingRight);
  const empty = document.querySelectorAll('p.no-plot').length;
  const pre = document.createElement('pre');
  pre.id = 'perflab-check';
  pre.textContent = JSON.stringify({ figures, resources, column, empty });
  document.body.appendChild(pre);
});
</script>"#;

fn runs() -> Vec<(&'static str, Vec<RunData>)> {
    let never = |_: &str, _: &str, _: u64, _: u32| false;
    let d = |(info, ms)| RunData { info, ms };
    vec![
        (
            "pairs",
            vec![RunData {
                info: common::run_info(1),
                ms: common::records(1.0, None),
            }],
        ),
        (
            "scans",
            vec![
                RunData {
                    info: xfer::run(11, "veos 1.2.2"),
                    ms: xfer::scan(&["pvm"], &[("4k", &VEOS_4K), ("2m", &VEOS_2M)], 0, never),
                },
                RunData {
                    info: xfer::run(12, "v1_64_96"),
                    ms: xfer::scan(&["pvm"], &[("4k", &V164_4K), ("2m", &V164_2M)], 2, never),
                },
            ],
        ),
        ("anchors", vec![two_anchors()]),
        ("latency", vec![d(latency_run(21))]),
        ("threads", vec![d(threads_run(31))]),
        (
            "spans",
            vec![RunData {
                info: common::spans::run_info(41),
                ms: common::spans::records(true),
            }],
        ),
    ]
}

/// The pair study measured from two anchor CPUs (4 and 5): a map, not bars.
fn two_anchors() -> RunData {
    let mut ms = common::records(1.0, None);
    let more: Vec<_> = ms
        .iter()
        .map(|m| {
            let mut m = m.clone();
            m.point += 100;
            m.seq += 1000;
            m.params
                .0
                .insert("cpu_a".into(), perflab_core::ParamValue::Int(5));
            m
        })
        .collect();
    ms.extend(more);
    RunData {
        info: common::run_info(2),
        ms,
    }
}

#[test]
fn html_report_renders_every_plot_with_axes_and_requests_nothing_needs_chromium() {
    let Some(bin) = chromium() else {
        perflab_testkit::skip(
            "chromium",
            "no chromium, chromium-browser or google-chrome on PATH (apt-get install chromium)",
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut kinds = std::collections::BTreeSet::new();
    for (name, runs) in runs() {
        let page = build_report(&runs, &ReportOptions::default())
            .unwrap()
            .html();
        let csp = format!("<meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">");
        assert!(page.contains(&csp), "the page forbids loading anything");
        // The copy drops that protection and adds the check, so a request the page would
        // make shows up instead of being blocked.
        let probe = page
            .replace(&csp, "")
            .replace("</body>", &format!("{CHECK}</body>"));
        let file = dir.path().join(format!("{name}.html"));
        std::fs::write(&file, probe).unwrap();

        let out = browse(
            &bin,
            &[
                "--virtual-time-budget=5000",
                "--window-size=1280,2400",
                "--dump-dom",
            ],
            &file,
        );
        assert!(out.status.success(), "{name}: {out:?}");
        let dom = String::from_utf8_lossy(&out.stdout);
        let start = dom
            .find("<pre id=\"perflab-check\">")
            .expect("the check ran")
            + 24;
        let end = start + dom[start..].find("</pre>").unwrap();
        let json = dom[start..end]
            .replace("&quot;", "\"")
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&amp;", "&");
        let check: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(
            check["resources"],
            serde_json::json!([]),
            "{name}: requests"
        );
        let figures = check["figures"].as_array().unwrap();
        assert_eq!(
            figures.len(),
            page.matches("<figure class=\"plot\"").count()
        );
        // Issue 34: plots were capped at 720 px, 62 % of the text column beside them.
        let column = check["column"].as_f64().unwrap();
        assert!(
            column > 900.0,
            "{name}: a text column of {column} px at 1280 px"
        );
        for f in figures {
            let width = f["width"].as_f64().unwrap();
            assert!(
                width >= 0.9 * column.min(1100.0),
                "{name}: a plot {width} px wide beside a text column of {column} px: {f}"
            );
            let ok = f["has_x"] == true
                && f["has_y"] == true
                && f["axes"] == true
                && f["texts"].as_u64().unwrap() >= 6
                && f["numeric"].as_u64().unwrap() >= 2
                && f["width"].as_f64().unwrap() > 200.0
                && f["height"].as_f64().unwrap() > 100.0;
            assert!(ok, "{name}: a plot without its axes: {f}");
            kinds.insert(f["kind"].as_str().unwrap().to_string());
        }

        let shot = dir.path().join(format!("{name}.png"));
        let out = browse(
            &bin,
            &[
                &format!("--screenshot={}", shot.display()),
                "--window-size=1280,2400",
                "--hide-scrollbars",
            ],
            &dir.path().join(format!("{name}.html")),
        );
        assert!(out.status.success(), "{name}: {out:?}");
        let png = std::fs::read(&shot).unwrap();
        assert_eq!(&png[1..4], b"PNG", "{name}");
        // A blank page compresses to a few KiB; plots and tables make it much larger.
        assert!(png.len() > 30_000, "{name}: {} bytes", png.len());
    }
    let all: Vec<&str> = kinds.iter().map(String::as_str).collect();
    assert_eq!(
        all,
        [
            "bar",
            "heatmap",
            "line",
            "percentile",
            "stacked",
            "timeline"
        ],
        "plot kinds seen"
    );
}
