//! Properties the statistics must keep on any data, not just the hand-picked cases.

use perflab_core::Better;
use perflab_stats::simulate::{self, Gen, Shape};
use perflab_stats::{
    adjust_family, benjamini_hochberg, compare, compare_paired, hodges_lehmann, mann_whitney,
    Buckets, Comparison, NoSpread, Sample, StatsConfig, Summary, Verdict,
};
use proptest::prelude::*;

/// Normal noise by Box-Muller from proptest's uniform draws, so failures shrink.
fn noisy(center: f64, cv: f64, uniforms: &[(f64, f64)]) -> Vec<f64> {
    uniforms
        .iter()
        .map(|&(u1, u2)| {
            let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
            center * (1.0 + cv * z)
        })
        .collect()
}

fn uniforms(n: usize) -> impl Strategy<Value = Vec<(f64, f64)>> {
    prop::collection::vec((1e-6f64..1.0, 0.0f64..1.0), n)
}

fn values() -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(-1e6f64..1e6, 1..30)
}

fn fast() -> StatsConfig {
    StatsConfig {
        resamples: 200,
        ..Default::default()
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn identical_samples_never_read_better_or_worse(v in prop::collection::vec(1.0f64..1e6, 2..25)) {
        let s = Sample::new(v).unwrap();
        let c = compare(&s, &s, Better::Higher, &fast());
        prop_assert!(!c.verdict.moved(), "{:?}", c.verdict);
        prop_assert_eq!(c.shift.estimate, 0.0);
        // Paired with itself every ratio is 1: no spread to judge by, so no verdict (a
        // zero-width interval never carries one), and the reason is given.
        let pairs: Vec<(usize, usize)> = (0..s.len()).map(|i| (i, i)).collect();
        let c = compare_paired(&s, &s, &pairs, Better::Higher, &fast());
        prop_assert_eq!(c.verdict, Verdict::Undecided);
        prop_assert_eq!(c.decision.no_spread, Some(NoSpread::AllEqual));
    }

    #[test]
    fn five_percent_shift_on_one_percent_noise_is_detected(
        ua in uniforms(10), ub in uniforms(10), up in any::<bool>()
    ) {
        let a = noisy(100_000.0, 0.01, &ua);
        let factor = if up { 1.05 } else { 0.95 };
        let b = noisy(100_000.0 * factor, 0.01, &ub);
        let (a, b) = (Sample::new(a).unwrap(), Sample::new(b).unwrap());
        let c = compare(&a, &b, Better::Higher, &fast());
        let want = if up { Verdict::Improved } else { Verdict::Regressed };
        prop_assert_eq!(c.verdict, want, "p={} change={:?}", c.p_value, c.change_pct);
        let lower = compare(&a, &b, Better::Lower, &fast());
        let want = if up { Verdict::Regressed } else { Verdict::Improved };
        prop_assert_eq!(lower.verdict, want);
    }

    #[test]
    fn p_values_are_probabilities_and_symmetric(a in values(), b in values()) {
        let (a, b) = (Sample::new(a).unwrap(), Sample::new(b).unwrap());
        let ab = mann_whitney(&a, &b);
        let ba = mann_whitney(&b, &a);
        prop_assert!((0.0..=1.0).contains(&ab.p_value), "p = {}", ab.p_value);
        prop_assert!((ab.p_value - ba.p_value).abs() < 1e-9, "{} vs {}", ab.p_value, ba.p_value);
        prop_assert_eq!(ab.u_a, ba.u_b);
    }

    #[test]
    fn ties_keep_p_values_valid(
        a in prop::collection::vec(0u8..4, 1..15), b in prop::collection::vec(0u8..4, 1..15)
    ) {
        let a = Sample::new(a.into_iter().map(f64::from).collect()).unwrap();
        let b = Sample::new(b.into_iter().map(f64::from).collect()).unwrap();
        let p = mann_whitney(&a, &b).p_value;
        prop_assert!((0.0..=1.0).contains(&p), "p = {p}");
        prop_assert!((p - mann_whitney(&b, &a).p_value).abs() < 1e-9);
    }

    #[test]
    fn median_ci_contains_the_median(v in values(), seed in any::<u64>()) {
        let s = Sample::new(v).unwrap();
        let cfg = StatsConfig { seed, ..fast() };
        let sum = Summary::new(&s, &cfg);
        prop_assert!(sum.median_ci.0 <= sum.median && sum.median <= sum.median_ci.1,
            "{:?} vs {}", sum.median_ci, sum.median);
    }

    #[test]
    fn hodges_lehmann_recovers_a_constant_shift(
        v in prop::collection::vec(-1000i32..1000, 1..20), c in -500i32..500
    ) {
        // Integers keep b + c - b exact in floating point.
        let b: Vec<f64> = v.iter().map(|&x| f64::from(x)).collect();
        let shifted: Vec<f64> = b.iter().map(|x| x + f64::from(c)).collect();
        let r = hodges_lehmann(&Sample::new(b).unwrap(), &Sample::new(shifted).unwrap(), 0.95);
        prop_assert_eq!(r.estimate, f64::from(c));
        prop_assert!(r.ci.0 <= r.estimate && r.estimate <= r.ci.1);
    }

    #[test]
    fn bucket_parser_never_panics(text in ".{0,40}") {
        if let Ok(b) = Buckets::parse(&text) {
            prop_assert!(b.edges().windows(2).all(|w| w[0] < w[1]));
            prop_assert!(b.edges().iter().all(|e| *e > 0.0));
        }
    }

    #[test]
    fn bucket_parser_accepts_what_it_should(
        mut edges in prop::collection::btree_set(1u32..10_000, 1..10)
    ) {
        let text = edges.iter().map(|e| e.to_string()).collect::<Vec<_>>().join(",");
        let b = Buckets::parse(&text).unwrap();
        let first = edges.pop_first().unwrap();
        prop_assert_eq!(b.edges()[0], f64::from(first));
    }

    #[test]
    fn bh_adjusted_p_is_between_raw_p_and_one(p in prop::collection::vec(0.0f64..=1.0, 1..60)) {
        let q = benjamini_hochberg(&p);
        prop_assert_eq!(q.len(), p.len());
        for (raw, adj) in p.iter().zip(&q) {
            prop_assert!(adj >= raw && *adj <= 1.0, "raw {} adjusted {}", raw, adj);
        }
    }

    #[test]
    fn bh_is_monotone_in_raw_p(p in prop::collection::vec(0.0f64..=1.0, 1..60)) {
        let q = benjamini_hochberg(&p);
        for i in 0..p.len() {
            for j in 0..p.len() {
                if p[i] <= p[j] {
                    prop_assert!(q[i] <= q[j], "p {} <= {} but q {} > {}", p[i], p[j], q[i], q[j]);
                }
            }
        }
    }

    #[test]
    fn bh_of_one_row_is_the_raw_p(p in 0.0f64..=1.0) {
        prop_assert_eq!(benjamini_hochberg(&[p]), vec![p]);
    }

    #[test]
    fn bh_follows_the_rows_when_they_are_reordered(
        p in prop::collection::vec(0.0f64..=1.0, 1..30), rot in 0usize..30
    ) {
        let q = benjamini_hochberg(&p);
        let k = rot % p.len();
        let mut p2 = p.clone();
        p2.rotate_left(k);
        let mut q_rot = q.clone();
        q_rot.rotate_left(k);
        prop_assert_eq!(benjamini_hochberg(&p2), q_rot);
    }

    /// The interval shown and the verdict never disagree: `better` lies wholly above
    /// +threshold, `worse` below −threshold (its reciprocal on the log scale), `same`
    /// inside, `undecided` across; the estimate lies inside its interval; and a family
    /// decided again is decided the same (the procedure is a function of the data).
    #[test]
    fn the_interval_shown_and_the_verdict_agree(
        rows in prop::collection::vec((uniforms(5), uniforms(5), 0.9f64..1.1, any::<bool>()), 1..24),
        noise_pct in prop_oneof![Just(0.0), Just(1.0), 0.1f64..5.0],
    ) {
        let cfg = StatsConfig { noise_pct, ..fast() };
        let mut family: Vec<Comparison> = rows
            .iter()
            .map(|(ua, ub, f, paired)| {
                let a = Sample::new(noisy(1000.0, 0.01, ua)).unwrap();
                let b = Sample::new(noisy(1000.0 * f, 0.01, ub)).unwrap();
                let pairs: Vec<(usize, usize)> =
                    if *paired { (0..5).map(|i| (i, i)).collect() } else { Vec::new() };
                compare_paired(&a, &b, &pairs, Better::Higher, &cfg)
            })
            .collect();
        let adj = adjust_family(family.iter_mut(), &cfg);
        prop_assert_eq!(adj.rows, family.len());
        let up = noise_pct;
        let down = -(1.0 - 1.0 / (1.0 + noise_pct / 100.0)) * 100.0;
        let eps = 1e-9;
        for c in &family {
            let (lo, hi) = c.change_ci_pct.unwrap();
            let est = c.change_pct.unwrap();
            prop_assert!(c.p_adjusted >= c.p_value - 1e-15);
            prop_assert!(lo > -100.0 && lo <= est + eps && est <= hi + eps, "{lo} {est} {hi}");
            match c.verdict {
                Verdict::Improved => prop_assert!(lo > up - eps, "better {lo}"),
                Verdict::Regressed => prop_assert!(hi < down + eps, "worse {hi}"),
                Verdict::Same => prop_assert!(lo > down - eps && hi < up + eps, "same {lo} {hi}"),
                Verdict::Undecided => prop_assert!(
                    c.decision.widened
                        || (lo <= up + eps && hi >= up - eps)
                        || (lo <= down + eps && hi >= down - eps),
                    "undecided [{lo}, {hi}] does not straddle a threshold"
                ),
                Verdict::Changed => prop_assert!(false, "a higher-is-better metric is never just changed"),
                // Only a comparison made void by its telemetry reads void, never one of
                // compare_paired's.
                Verdict::Void => prop_assert!(false, "compare_paired made a row void"),
            }
        }
        let again: Vec<Verdict> = {
            let mut f = family.clone();
            adjust_family(f.iter_mut(), &cfg);
            f.iter().map(|c| c.verdict).collect()
        };
        prop_assert_eq!(again, family.iter().map(|c| c.verdict).collect::<Vec<_>>());
    }
}

/// With no change anywhere and no threshold, any better/worse is false: over 600 families
/// (four fixed seeds, so the test gives the same answer on every run) the share with one
/// stays under alpha = 5 % plus 2.5 binomial standard deviations of a 600-family rate
/// (7.2 %). A verdict drawn from raw p-values (the defect this guards against) gives one in
/// most families of 16 rows. The seeds are fixed because a bound of a few standard
/// deviations on a freshly drawn seed fails now and then by design: one draw read 16 of 150.
#[test]
fn null_families_rarely_hold_a_false_verdict() {
    let shape = Shape {
        rows: 16,
        reps: 4,
        cv: 0.01,
        disturbed: false,
    };
    let cfg = simulate::sim_config(0.0);
    let factors = vec![1.0; shape.rows];
    let mut bad = 0;
    for seed in [1u64, 0x5eed, 0xdead_beef, 17_802_488_743_761_642_721] {
        let mut g = Gen::new(seed);
        bad += (0..150)
            .filter(|_| {
                simulate::family(&mut g, shape, &factors, &cfg)
                    .iter()
                    .any(|c| c.verdict.moved())
            })
            .count();
    }
    assert!(
        bad as f64 / 600.0 <= 0.072,
        "{bad} of 600 null families with a false verdict"
    );
}

/// One row of a generated family: how many values per side, their centre, spread and
/// whether one value is wild, and whether the repetitions pair up.
fn row() -> impl Strategy<Value = (usize, f64, f64, bool, bool, Vec<(f64, f64)>)> {
    (
        1usize..7,
        0.9f64..1.1,
        0.0f64..0.05,
        any::<bool>(),
        any::<bool>(),
    )
        .prop_flat_map(|(n, shift, cv, wild, paired)| {
            uniforms(2 * n).prop_map(move |u| (n, shift, cv, wild, paired, u))
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Issue 32: for any family (n = 1 sides, ties, a wild value, paired or not), the shown
    /// interval, the adjusted p and the verdict agree: a decided row has a finite interval
    /// of positive width lying where its verdict says, and an adjusted p below alpha; a
    /// row with no spread has no interval and no verdict.
    #[test]
    fn interval_p_and_verdict_always_agree(rows in prop::collection::vec(row(), 1..12)) {
        let cfg = fast();
        let mut family: Vec<Comparison> = rows
            .iter()
            .map(|(n, shift, cv, wild, paired, u)| {
                let mut a = noisy(1000.0, *cv, &u[..*n]);
                let mut b = noisy(1000.0 * shift, *cv, &u[*n..]);
                if *wild && *n > 2 {
                    b[0] *= 1.5;
                }
                // Ties: a spread of 0 leaves every value equal.
                a.iter_mut().chain(b.iter_mut()).for_each(|x| *x = x.max(1.0));
                let pairs: Vec<(usize, usize)> =
                    if *paired { (0..*n).map(|i| (i, i)).collect() } else { Vec::new() };
                compare_paired(
                    &Sample::new(a).unwrap(),
                    &Sample::new(b).unwrap(),
                    &pairs,
                    Better::Higher,
                    &cfg,
                )
            })
            .collect();
        adjust_family(family.iter_mut(), &cfg);
        for c in &family {
            let theta = cfg.noise_pct;
            match (c.verdict, c.change_ci_pct) {
                (Verdict::Undecided, _) => {}
                (v, None) => prop_assert!(false, "{v:?} without an interval: {:?}", c.decision),
                (v, Some((lo, hi))) => {
                    prop_assert!(lo.is_finite() && hi.is_finite() && hi > lo, "{v:?} [{lo}, {hi}]");
                    prop_assert!(c.p_adjusted < cfg.alpha, "{v:?} with adjusted p {}", c.p_adjusted);
                    prop_assert!(c.decision.no_spread.is_none());
                    match v {
                        Verdict::Improved => prop_assert!(lo > theta * 0.99, "{v:?} [{lo}, {hi}]"),
                        Verdict::Regressed => prop_assert!(hi < -theta * 0.98, "{v:?} [{lo}, {hi}]"),
                        Verdict::Same => prop_assert!(lo > -theta && hi < theta, "{v:?} [{lo}, {hi}]"),
                        _ => {}
                    }
                }
            }
            if c.decision.no_spread.is_some() {
                prop_assert_eq!(c.verdict, Verdict::Undecided);
                prop_assert_eq!(c.change_ci_pct, None);
                prop_assert_eq!(c.decision.reps_to_decide, None);
            }
        }
    }
}
