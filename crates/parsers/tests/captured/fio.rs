use super::*;

#[test]
fn one_job_read_figures() {
    let p = ok("fio", "fio/one_job_randread.json");
    assert!(p.rows.is_empty());
    assert_metric(
        &p.metrics,
        "read_bw_bytes_s",
        66_757_434.0,
        Unit::BytesPerSecond,
        Better::Higher,
    );
    assert_metric(
        &p.metrics,
        "read_iops",
        16298.201798,
        Unit::PerSecond,
        Better::Higher,
    );
    assert_metric(
        &p.metrics,
        "read_clat_mean_ns",
        60024.185663,
        Unit::Nanoseconds,
        Better::Lower,
    );
    assert_eq!(value(&p.metrics, "read_clat_p50_ns"), 35072.0);
    assert_eq!(value(&p.metrics, "read_clat_p99_ns"), 86528.0);
    assert_eq!(value(&p.metrics, "read_clat_p99_9_ns"), 5_210_112.0);
    assert_eq!(value(&p.metrics, "read_clat_p99_99_ns"), 17_956_864.0);
    // No writes were done: zeros are not reported as measurements.
    assert!(!p.metrics.iter().any(|m| m.name.starts_with("write_")));
    // Percentiles come in order.
    let pos = |n: &str| p.metrics.iter().position(|m| m.name == n).unwrap();
    assert!(pos("read_clat_p5_ns") < pos("read_clat_p10_ns"));
}

#[test]
fn mixed_job_has_both_directions() {
    let p = ok("fio", "fio/one_job_randrw.json");
    assert_eq!(value(&p.metrics, "read_bw_bytes_s"), 41_662_112.0);
    assert_eq!(value(&p.metrics, "write_bw_bytes_s"), 41_725_569.0);
    assert_eq!(value(&p.metrics, "write_clat_p99_ns"), 18048.0);
}

#[test]
fn two_jobs_are_rows() {
    let p = ok("fio", "fio/two_jobs_read_write.json");
    assert!(p.metrics.is_empty());
    assert_eq!(p.rows.len(), 2);
    let r = row(&p, "job", "seqread");
    assert_eq!(value(&r.metrics, "read_bw_bytes_s"), 1_031_315_894.0);
    assert!(!has(&r.metrics, "write_iops"));
    let w = row(&p, "job", "seqwrite");
    assert_eq!(value(&w.metrics, "write_iops"), 46012.431626);
}

#[test]
fn same_named_jobs_get_an_instance() {
    let text = data("fio/two_jobs_read_write.json").replace("\"seqwrite\"", "\"seqread\"");
    let p = (by_name("fio").unwrap().parse)(&text).unwrap();
    let inst: Vec<Option<&str>> = p.rows.iter().map(|r| r.param("instance")).collect();
    assert_eq!(inst, vec![Some("0"), Some("1")]);
}

#[test]
fn warnings_before_the_json_are_skipped_and_broken_json_is_bad() {
    let text = format!(
        "note: both iodepth >= 1 and synchronous I/O engine\n{}",
        data("fio/one_job_randread.json")
    );
    let p = (by_name("fio").unwrap().parse)(&text).unwrap();
    assert_eq!(value(&p.metrics, "read_iops"), 16298.201798);
    let cut = &text[..text.len() / 2];
    let e = (by_name("fio").unwrap().parse)(cut).unwrap_err();
    assert!(matches!(e, ParseError::Bad { .. }), "{e}");
}
