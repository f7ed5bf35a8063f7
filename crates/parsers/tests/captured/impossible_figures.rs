//! Figures no tool can report, put into captured output: negative percentages (perf stat's
//! `cpu_migrations_running_pct = -50` and `task_clock_rel_stddev_pct = -0.88` were
//! stored), 1e308 (accepted by perf-stat, fio, iperf3, dmatest and seed-scan) and
//! -9.2e18 (found by fuzzing). Every parser refuses them with one line naming the field,
//! and none panics whatever number stands where.

use super::*;
use perflab_core::plausible::ceiling;
use perflab_parsers::ParserInfo;
use proptest::prelude::*;

/// Numbers that no figure of any tool can be, or that no share can be.
const HOSTILE: &[&str] = &[
    "-50", "-0.88", "-9.2e18", "1e308", "-1e308", "1e30", "150", "nan", "inf",
];

fn parser(tool: &str) -> &'static ParserInfo {
    by_name(tool).unwrap_or_else(|| panic!("no parser {tool}"))
}

/// `tool`'s read of the sample `rel` with `from` replaced by `to` (exactly once).
fn read_edited(tool: &str, rel: &str, from: &str, to: &str) -> Result<Parsed, ParseError> {
    let text = data(rel);
    assert_eq!(text.matches(from).count(), 1, "{rel}: {from:?}");
    parser(tool).read(&text.replacen(from, to, 1))
}

fn refused(tool: &str, rel: &str, from: &str, to: &str, field: &str) {
    let e = read_edited(tool, rel, from, to)
        .map(|p| format!("{p:?}"))
        .expect_err("an impossible figure was accepted")
        .to_string();
    assert!(e.contains(field) && !e.contains('\n'), "{tool} {to}: {e}");
}

#[test]
fn perf_stat_refuses_negative_and_over_100_shares_and_negative_deviations() {
    let rel = "perf-stat/default_repeat5.txt";
    refused(
        "perf-stat",
        rel,
        "( +-  2.50% )",
        "( +-  -0.88% )",
        "task_clock_rel_stddev_pct: -0.88 is negative",
    );
    let csv = "perf-stat/csv_ls.txt";
    refused(
        "perf-stat",
        csv,
        "0,,cpu-migrations,899799,100.00",
        "0,,cpu-migrations,899799,-50.00",
        "cpu_migrations_running_pct: -50 is negative",
    );
    refused(
        "perf-stat",
        csv,
        "0,,cpu-migrations,899799,100.00",
        "0,,cpu-migrations,899799,150.00",
        "cpu_migrations_running_pct: 150 is not a share",
    );
    refused(
        "perf-stat",
        csv,
        "99,,page-faults",
        "1e308,,page-faults",
        "page_faults: 1e308 is more than a count can be",
    );
}

#[test]
fn fio_iperf3_dmatest_and_seed_scan_refuse_1e308() {
    refused(
        "fio",
        "fio/one_job_randread.json",
        "\"io_bytes\" : 133648384",
        "\"io_bytes\" : 1e308",
        "read_io_bytes: 1e308 is more than a size can be",
    );
    let fio = data("fio/one_job_randread.json");
    let iops = fio
        .lines()
        .find(|l| l.trim_start().starts_with("\"iops\" :"))
        .expect("an iops line")
        .to_string();
    refused(
        "fio",
        "fio/one_job_randread.json",
        &format!("{iops}\n"),
        "\"iops\" : 1e308,\n",
        "read_iops: 1e308 is more than a rate can be",
    );
    refused(
        "iperf3",
        "iperf3/udp_client_100m.json",
        "99992187.2305112",
        "1e308",
        "receiver_bytes_s: 1.25e307 is more than a bandwidth can be",
    );
    refused(
        "dmatest",
        "dmatest/dmesg_four_threads.txt",
        "3410.07 iops",
        "1e308 iops",
        "1e308 is more than a rate can be",
    );
    refused(
        "seed-scan",
        "seed-scan/seed002_small_pages.txt",
        "|      131   |",
        "|      1e308   |",
        "1e308 is more than a bandwidth can be",
    );
}

/// The number-looking tokens of `text`, as byte ranges.
fn numbers(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_digit() && (i == 0 || !b[i - 1].is_ascii_alphanumeric()) {
            let start = i;
            while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.') {
                i += 1;
            }
            out.push((start, i));
        } else {
            i += 1;
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// Whatever number of a captured output is replaced by a hostile one, the parser
    /// either refuses the output or reads figures its units allow: never negative, never
    /// past the unit's ceiling, no share above 100.
    #[test]
    fn no_hostile_number_gets_through(which in 0usize..64, at in 0usize..10_000, bad in 0usize..9) {
        let samples = samples();
        let (tool, rel) = &samples[which % samples.len()];
        let Some(p) = by_name(tool) else { return Ok(()); };
        let text = data(rel);
        let spots = numbers(&text);
        prop_assume!(!spots.is_empty());
        let (a, b) = spots[at % spots.len()];
        let edited = format!("{}{}{}", &text[..a], HOSTILE[bad % HOSTILE.len()], &text[b..]);
        let Ok(parsed) = p.read(&edited) else { return Ok(()); };
        let metrics = parsed.metrics.iter().chain(parsed.rows.iter().flat_map(|r| &r.metrics));
        for m in metrics {
            prop_assert!(
                m.value >= 0.0 && m.value <= ceiling(m.unit),
                "{tool} {rel}: {} = {}", m.name, m.value
            );
            if m.name.ends_with("_running_pct") || m.name == "lost_pct" {
                prop_assert!(m.value <= 100.0, "{tool}: {} = {}", m.name, m.value);
            }
        }
    }
}
