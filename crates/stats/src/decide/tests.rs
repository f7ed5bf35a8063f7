use super::*;
use perflab_core::Better;

fn s(v: &[f64]) -> Sample {
    Sample::new(v.to_vec()).unwrap()
}

/// A family of `rows` rows of 5 paired repetitions with ±1 % spread (fixed pattern),
/// the first row shifted by `shift`.
fn family(rows: usize, shift: f64) -> Vec<Comparison> {
    let cfg = StatsConfig::default();
    let wobble = [-1.0, 0.6, 0.2, -0.4, 0.9, -0.3, 0.5];
    (0..rows)
        .map(|r| {
            let a: Vec<f64> = (0..5)
                .map(|i| 1000.0 * (1.0 + 0.01 * wobble[(i + r) % 7]))
                .collect();
            let b: Vec<f64> = (0..5)
                .map(|i| {
                    let f = if r == 0 { 1.0 + shift } else { 1.0 };
                    1000.0 * f * (1.0 + 0.01 * wobble[(i + 2 * r + 3) % 7])
                })
                .collect();
            let pairs: Vec<(usize, usize)> = (0..5).map(|i| (i, i)).collect();
            crate::compare_paired(&s(&a), &s(&b), &pairs, Better::Higher, &cfg)
        })
        .collect()
}

#[test]
fn one_shifted_row_among_forty_is_flagged_with_its_interval_beyond_the_threshold() {
    let mut rows = family(40, 0.05);
    // Read alone, 5 pairs with 1 % noise leave +5 % decided too; the family must keep it.
    let mut refs: Vec<&mut Comparison> = rows.iter_mut().collect();
    let adj = decide_family(&mut refs, &StatsConfig::default());
    assert!(adj.prior.is_some());
    let first = &rows[0];
    assert_eq!(
        first.verdict,
        Verdict::Improved,
        "{:?}",
        first.change_ci_pct
    );
    assert!(first.change_ci_pct.unwrap().0 > 1.0);
    assert_eq!(first.decision.method, Method::ModeratedT);
    assert!(rows[1..].iter().all(|c| !c.verdict.moved()));
}

#[test]
fn a_disturbed_row_falls_back_to_ranks_and_stays_undecided() {
    let mut rows = family(40, 0.0);
    let cfg = StatsConfig::default();
    // One repetition of B in row 5 ran 20 % slow: a timer, a migration.
    let mut b: Vec<f64> = rows[5].b_values();
    b[2] *= 0.8;
    let a = rows[5].a_values();
    let pairs: Vec<(usize, usize)> = (0..5).map(|i| (i, i)).collect();
    rows[5] = crate::compare_paired(&s(&a), &s(&b), &pairs, Better::Higher, &cfg);
    let mut refs: Vec<&mut Comparison> = rows.iter_mut().collect();
    decide_family(&mut refs, &cfg);
    let r = &rows[5];
    assert_eq!(r.decision.method, Method::SignedRank, "{:?}", r.decision);
    assert!(r.decision.fallback.is_some());
    assert_eq!(r.verdict, Verdict::Undecided);
}

impl Comparison {
    fn a_values(&self) -> Vec<f64> {
        let e = self.decision.evidence.as_ref().unwrap();
        e.sides.0.iter().map(|x| x.exp()).collect()
    }
    fn b_values(&self) -> Vec<f64> {
        let e = self.decision.evidence.as_ref().unwrap();
        e.sides.1.iter().map(|x| x.exp()).collect()
    }
}

/// Issue 32: `run --workload null --reps 1` printed `+20.00 % [+20.00 %, +20.00 %] 1.000
/// 1.000 better`: one value per side, a zero-width interval, p = 1 and a verdict.
#[test]
fn one_value_per_side_reads_undecided_with_the_reason_and_no_interval() {
    let cfg = StatsConfig::default();
    let c = crate::compare(&s(&[100.0]), &s(&[120.0]), Better::Higher, &cfg);
    assert_eq!(c.verdict, Verdict::Undecided);
    assert_eq!(c.decision.no_spread, Some(NoSpread::OneValuePerSide));
    assert_eq!(c.change_ci_pct, None);
    assert!((c.change_pct.unwrap() - 20.0).abs() < 1e-9);
    assert_eq!(c.p_value, 1.0);
    assert_eq!(
        c.decision.reps_to_decide, None,
        "no repetition advice from no spread"
    );
    // Paired, every pair the same ratio: identical differences, no spread either.
    let a = [100.0, 200.0, 300.0];
    let b = [120.0, 240.0, 360.0];
    let pairs = [(0, 0), (1, 1), (2, 2)];
    let c = crate::compare_paired(&s(&a), &s(&b), &pairs, Better::Higher, &cfg);
    assert_eq!(c.verdict, Verdict::Undecided);
    assert_eq!(c.decision.no_spread, Some(NoSpread::AllEqual));
}

/// A single-value row among rows with repetitions borrows the family's spread, and says so.
#[test]
fn a_single_value_row_borrows_the_familys_spread_and_says_so() {
    let cfg = StatsConfig::default();
    let mut rows = family(40, 0.0);
    rows[7] = crate::compare(&s(&[1000.0]), &s(&[1200.0]), Better::Higher, &cfg);
    let mut refs: Vec<&mut Comparison> = rows.iter_mut().collect();
    decide_family(&mut refs, &cfg);
    let r = &rows[7];
    assert_eq!(r.decision.method, Method::ModeratedT, "{:?}", r.decision);
    assert!(r.decision.spread_borrowed);
    assert_eq!(r.decision.no_spread, None);
    let (lo, hi) = r.change_ci_pct.unwrap();
    assert!(
        lo < hi,
        "a borrowed spread gives a real interval: {lo} {hi}"
    );
    assert!(rows
        .iter()
        .all(|c| !c.decision.spread_borrowed || c.decision.df.unwrap() > 0.0));
}

/// Issue 32: irq-fill printed medians +9.5 % beside a change of −12.13 %. A row whose one
/// wild repetition pulls the mean log-ratio the other way from the medians carries the
/// disagreement, with its likely cause.
#[test]
fn a_change_against_the_medians_is_flagged_with_its_cause() {
    let cfg = StatsConfig::default();
    let a = [100.0, 101.0, 99.0, 100.5, 99.5];
    let b = [110.0, 111.0, 109.0, 110.5, 20.0];
    let pairs: Vec<(usize, usize)> = (0..5).map(|i| (i, i)).collect();
    let c = crate::compare_paired(&s(&a), &s(&b), &pairs, Better::Higher, &cfg);
    let d = c.decision.disagreement.expect("flagged");
    assert!(d.medians_pct > 9.0 && d.change_pct < -15.0, "{d:?}");
    assert_eq!(d.cause, crate::DisagreementCause::WildRepetition);
    assert!(
        d.reason().starts_with("! the medians' ratio (+"),
        "{}",
        d.reason()
    );
    // The same values without the wild one agree.
    let b = [110.0, 111.0, 109.0, 110.5, 109.5];
    let c = crate::compare_paired(&s(&a), &s(&b), &pairs, Better::Higher, &cfg);
    assert_eq!(c.decision.disagreement, None, "{:?}", c.decision);
}
