use super::*;

fn bw(p: &Parsed, size: &str, series: &str, table: Option<&str>) -> f64 {
    let r = p
        .rows
        .iter()
        .find(|r| {
            r.param("size") == Some(size)
                && r.series.as_deref() == Some(series)
                && r.param("table") == table
        })
        .unwrap_or_else(|| panic!("no row {size} {series} {table:?}"));
    value(&r.metrics, "bandwidth_mib_s")
}

#[test]
fn small_pages_table() {
    let p = ok("seed-scan", "seed-scan/seed002_small_pages.txt");
    assert_eq!(p.rows.len(), 16 * 2);
    assert_eq!(bw(&p, "32768", "veos 1.2.2", None), 131.0);
    assert_eq!(bw(&p, "32768", "v1_64_96", None), 106.0);
    assert_eq!(bw(&p, "1073741824", "v1_64_96", None), 5527.0);
    let m = get(&p.rows[0].metrics, "bandwidth_mib_s");
    assert_eq!((m.unit, m.better), (Unit::MibPerSecond, Better::Higher));
}

#[test]
fn huge_pages_table() {
    let p = ok("seed-scan", "seed-scan/seed002_huge_pages.txt");
    assert_eq!(p.rows.len(), 32);
    assert_eq!(bw(&p, "32768", "veos 1.2.2", None), 79.0);
    assert_eq!(bw(&p, "1073741824", "v1_64_96", None), 10872.0);
}

#[test]
fn both_tables_in_the_seed_text_are_told_apart() {
    let p = ok("seed-scan", "seed-scan/seed002_both_tables.md");
    assert_eq!(p.rows.len(), 64);
    assert_eq!(bw(&p, "32768", "veos 1.2.2", Some("1")), 131.0);
    assert_eq!(bw(&p, "32768", "veos 1.2.2", Some("2")), 79.0);
    assert!(
        p.notes[0].contains("small pages") && p.notes[1].contains("HUGE=1"),
        "{:?}",
        p.notes
    );
}

#[test]
fn malformed_rows_are_bad() {
    let text = data("seed-scan/seed002_small_pages.txt");
    let e = (by_name("seed-scan").unwrap().parse)(
        &text.replace("|      64 |      249   |", "|      64 |      2x9   |"),
    )
    .unwrap_err();
    assert!(matches!(e, ParseError::Bad { line: 5, .. }), "{e}");
    let e = (by_name("seed-scan").unwrap().parse)(&text.replace(
        "|      64 |      249   |      263 |",
        "|      64 |      249   |",
    ))
    .unwrap_err();
    assert!(matches!(e, ParseError::Bad { line: 5, .. }), "{e}");
    let e = (by_name("seed-scan").unwrap().parse)(&text.replace("BW MiB/s  |", "BW        |"))
        .unwrap_err();
    assert!(e.to_string().contains("bandwidth unit"), "{e}");
}
