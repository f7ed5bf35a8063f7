//! Seed 004's wake-up in parts from the `idlewake` spans: per CPU pair and variant, each
//! part's p50 and share of the whole wake-up, and the idle exit per idle state left.
//! Records are synthetic, shaped by the monitor's output contract.

use crate::common;

use common::idlewake::{records, run_info};
use perflab_report::full::{build_report, ReportOptions, RunData};
use perflab_report::span_table;
use perflab_report::spans::wake::{wake_table, WakeCell, WakeState};
use perflab_report::{Format, Section};
use perflab_stats::StatsConfig;

fn report() -> perflab_report::full::FullReport {
    let runs = vec![RunData {
        info: run_info(7),
        ms: records(),
    }];
    build_report(&runs, &ReportOptions::default()).expect("the report builds")
}

#[test]
fn parts_per_pair_and_variant_with_shares_and_states() {
    let roles = ctxsw_roles();
    let w = wake_table(&roles, &records()).expect("idlewake traced");
    assert_eq!(w.variants, ["poll-only", "all"]);
    let labels: Vec<&str> = w.pairs.iter().map(|p| p.label.as_str()).collect();
    assert_eq!(labels, ["0-0", "0-1", "0-2"]);
    // On one CPU (1) is in 22 of 29000 wake-ups: its share of the whole says so.
    match w.pairs[0].rows[1].cells[1] {
        WakeCell::Value {
            matches,
            of_wakeups,
            ..
        } => assert_eq!((matches, of_wakeups), (22.0, Some(29_000.0))),
        c => panic!("{c:?}"),
    }
    let far = &w.pairs[2];
    let keys: Vec<&str> = far.rows.iter().map(|r| r.key.as_str()).collect();
    assert_eq!(
        keys,
        [
            "idlewake.sched",
            "idlewake.waking_ipi",
            "idlewake.ipi_idle_exit",
            "idlewake.ipi_idle_exit@C1",
            "idlewake.ipi_idle_exit@C1E",
            "idlewake.ipi_idle_exit@C6",
            "idlewake.idle_exit_run",
            "idlewake.idle_exit_run@POLL",
            "idlewake.idle_exit_run@C1",
            "idlewake.idle_exit_run@C6",
        ]
    );
    // The state as the monitor recorded it beside the rows: index and name, as values.
    assert_eq!(
        far.rows[5].state,
        Some(WakeState {
            index: Some(3),
            name: "C6".into()
        })
    );
    // C1E, left once in one repetition of three: a median of 0 events per measurement,
    // below the floor a span figure is read from, so the cell has its count and no p50
    // (issue 32: the glance table printed `(2) to idle exit 1945.60` from 1 of 83,132
    // wake-ups; this cell read `5.00`).
    assert_eq!(
        far.rows[4].cells[1],
        WakeCell::TooFew {
            matches: 0.0,
            reps: 3
        }
    );
    // Polling targets get no IPI: (1) and (2) are recorded and never match.
    assert_eq!(far.rows[1].cells[0], WakeCell::None);
    // A state never left under poll-only was not recorded there at all.
    assert_eq!(far.rows[5].cells[0], WakeCell::Missing);
    // (2) at 0-2 under `all`: p50 over reps 19000, 19010, 19020 ns → 19.01 µs, of a
    // whole wake-up of 24.01 µs; out of C6 20.01 µs, 20000 of the 29000 exits.
    let value = |r: usize| match far.rows[r].cells[1] {
        WakeCell::Value {
            us,
            share_pct,
            matches,
            ..
        } => (us, share_pct.unwrap(), matches),
        c => panic!("{c:?}"),
    };
    let (us, share, _) = value(2);
    assert!((us - 19.01).abs() < 1e-9, "{us}");
    assert!((share - 100.0 * 19.01 / 24.01).abs() < 1e-9, "{share}");
    let (us, share, n) = value(5);
    assert!((us - 20.01).abs() < 1e-9, "{us}");
    assert!(
        (share - 100.0 * 20_000.0 / 29_000.0).abs() < 1e-9,
        "{share}"
    );
    assert_eq!(n, 20_000.0);
    // The sibling pair never reached C6: no row for it.
    assert!(w.pairs[1].rows.iter().all(|r| !r.key.ends_with("@C6")));
    // Without idlewake rows (another set, or no trace) there is no table.
    let other = common::spans::records(true);
    assert!(wake_table(&roles, &other).is_none());
}

#[test]
fn wake_table_text() {
    let t = span_table(&run_info(7), &records(), &StatsConfig::default()).expect("spans");
    let text = t.render(Format::Text);
    assert!(
        text.contains("The wake-up in parts, per CPU pair"),
        "{text}"
    );
    // On one CPU (1) is in 22 of 29000 wake-ups: its share of the whole says so.
    assert!(
        text.contains("4.91 (148%; in 22 of 29000 wake-ups)"),
        "{text}"
    );
    insta::assert_snapshot!("wake_table_text", text);
}

#[test]
fn wake_table_markdown_mail_and_html() {
    let r = report();
    let md = r.markdown();
    let start = md.find("### The wake-up in parts").expect("the section");
    insta::assert_snapshot!("wake_table_markdown", &md[start..]);
    let mail = r.mail();
    let start = mail.find("The wake-up in parts").expect("in the mail");
    insta::assert_snapshot!("wake_table_mail", &mail[start..]);
    let html = r.html();
    assert!(html.contains("CPU pair 0-2"));
    assert!(html.contains("left C6"));
    assert_eq!(
        r.json()["spans"][0]["table"]["wake"]["pairs"]
            .as_array()
            .map(Vec::len),
        Some(3)
    );
}

/// The roles ctxsw declares (its CPU pair names the rows).
fn ctxsw_roles() -> perflab_core::ParamRoles {
    serde_json::from_value(crate::common::catalog::roles_json("ctxsw")).expect("roles")
}
