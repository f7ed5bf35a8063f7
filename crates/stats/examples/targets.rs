//! Prints the verdict targets (the same table as `perflab crosscheck verdicts`).
fn main() {
    let n: u32 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(200);
    let t0 = std::time::Instant::now();
    for t in perflab_stats::simulate::verdict_targets(n, 2026) {
        println!(
            "{:6.1}% {:?} {} {} {}",
            t.value * 100.0,
            t.bound,
            t.holds(),
            t.what,
            t.detail
        );
    }
    eprintln!("{:?}", t0.elapsed());
}
