//! Verdicts that decide: better, worse, same or undecided for every row of a family,
//! with false verdicts controlled across the family and the power to flag one row.
//!
//! 1. **Each row** ([`Evidence`]): the paired log-ratios dᵢ = ln Bᵢ − ln Aᵢ of the
//!    interleaved design (two runs: the difference of the mean logs), their mean and
//!    variance.
//! 2. **Variance borrowed across the family** ([`moderate`]): limma's moderated t (Smyth
//!    2004). Five repetitions give a variance on 4 degrees of freedom; forty rows of them
//!    give the family's on ~160, and each row's t uses the two combined.
//! 3. **Assumptions checked**: a row whose variance is far above the family's (an F test,
//!    Bonferroni over the rows), one of whose residuals lies far outside the family's
//!    spread (normal quantile, Bonferroni over every residual), or, read alone, one with a
//!    far-out value (3 IQR) is not a bell: it falls back to a rank test — Wilcoxon's
//!    signed rank on the pairs ([`signed_rank`]), Mann-Whitney on the logs unpaired — with
//!    its distribution-free interval.
//! 4. **The decision p-value** of a row tests "the change sits exactly on the nearer
//!    threshold" (±θ, on the log scale ±ln(1 + θ)); it is small both when the change is
//!    clearly beyond θ and when it is clearly within. The family's p-values are adjusted
//!    together with Benjamini-Hochberg; the R rows with adjusted p < α are decided.
//! 5. **The interval shown** is the false-coverage-rate interval of Benjamini & Yekutieli
//!    (2005, "False discovery rate-adjusted multiple confidence intervals for selected
//!    parameters", JASA 100(469)): every row's interval at level 1 − R·α/m (1 − α/m when
//!    R = 0). A decided row's interval lies wholly beyond +θ (`better`/`worse`), below −θ,
//!    or inside ±θ (`same`); an undecided row's contains a threshold. A wrong verdict
//!    needs an interval that misses the true change, and the expected share of such
//!    intervals among the decided rows is at most α (their Theorem 1, independent rows).
//!
//! The verdict is read from the interval itself, and a decided row's adjusted p is below α,
//! so the three can never disagree. A row with no spread (one value per side and nothing to
//! borrow, or identical differences) has no interval: it is undecided, with the reason
//! ([`NoSpread`]), whatever its change.

pub mod decision;
pub mod evidence;
pub mod moderate;
pub mod sequential;
pub mod signed_rank;

use statrs::distribution::{ContinuousCDF, FisherSnedecor, Normal, StudentsT};

pub use decision::{Decision, Disagreement, DisagreementCause, Method, NoSpread};
pub use evidence::{Evidence, Scale};
pub use moderate::Prior;

use crate::comparison::Comparison;
use crate::config::StatsConfig;
use crate::fdr::{benjamini_hochberg, FamilyAdjustment};
use crate::hodges_lehmann::hodges_lehmann;
use crate::mann_whitney::mann_whitney;
use crate::precision::reps_for_half_width;
use crate::sample::Sample;
use crate::verdict::Verdict;

/// Tail probability of the assumption checks, over the whole family: a bell-shaped row
/// falls back to ranks by mistake in about 1 % of families.
const CHECK_ALPHA: f64 = 0.01;

/// A row's test before the family's level is known.
struct Plan {
    method: Method,
    se: f64,
    df: f64,
    p: f64,
    /// The estimate lies inside ±θ: the row can end `same` or undecided, and its test is
    /// the two one-sided tests of equivalence (TOST; Schuirmann 1987), each at the full
    /// level — both must reject, so neither needs a share. Outside, the direction is read
    /// from the data and each side gets half.
    within: bool,
    fallback: Option<String>,
    /// No spread to judge by: the row stays undecided.
    no_spread: Option<NoSpread>,
}

/// Decides the rows of `family` (one comparison) together: see the module documentation.
pub fn adjust_family<'a>(
    family: impl IntoIterator<Item = &'a mut Comparison>,
    cfg: &StatsConfig,
) -> FamilyAdjustment {
    let mut rows: Vec<&mut Comparison> = family.into_iter().collect();
    decide_family(&mut rows, cfg)
}

/// Decides every row of `family` together (see the module documentation).
pub fn decide_family(family: &mut [&mut Comparison], cfg: &StatsConfig) -> FamilyAdjustment {
    decide_family_borrowing(family, cfg, &[])
}

/// [`decide_family`], with the variances `borrowed` ((s², d) of log-ratio rows measured
/// alike but decided before, e.g. the earlier steps of a bisection) joining the family's
/// in the moderated prior only: they are not rows of this family, so they take no part in
/// Benjamini-Hochberg and their number does not widen its intervals.
pub fn decide_family_borrowing(
    family: &mut [&mut Comparison],
    cfg: &StatsConfig,
    borrowed: &[(f64, f64)],
) -> FamilyAdjustment {
    let m = family.len();
    let log_rows: Vec<(f64, f64)> = family
        .iter()
        .filter_map(|c| c.decision.evidence.as_ref())
        .filter(|e| e.scale == Scale::Log)
        .map(|e| (e.var, e.df))
        .chain(borrowed.iter().copied())
        .collect();
    let prior = moderate::estimate_robust(&log_rows);
    let plans: Vec<Plan> = family
        .iter()
        .map(|c| {
            let mut p = plan(c.decision.evidence.as_ref(), prior.as_ref(), m, cfg);
            // A look's p over its share of alpha is valid whatever the stopping rule
            // (a union bound over the looks; see `sequential`).
            p.p = (p.p / c.decision.weight).min(1.0);
            p
        })
        .collect();
    let raw: Vec<f64> = plans.iter().map(|p| p.p).collect();
    let adjusted = benjamini_hochberg(&raw);
    let decided = adjusted.iter().filter(|&&q| q < cfg.alpha).count();
    let level = 1.0 - cfg.alpha * decided.max(1) as f64 / m.max(1) as f64;
    let mut lost = 0;
    for ((c, p), q) in family.iter_mut().zip(plans).zip(adjusted) {
        c.p_value = p.p;
        c.p_adjusted = q;
        // The row's share of the family's error, 1 − level = R·alpha/m (times its look's
        // weight); a row read for equivalence spends it on each of its two one-sided
        // tests, so its two-sided interval is at 1 − 2·share.
        let share = (1.0 - level) * c.decision.weight;
        let row_level = if p.within {
            1.0 - 2.0 * share
        } else {
            1.0 - share
        };
        apply(c, p, row_level, cfg);
        // A rank row's interval can avoid the thresholds while its test, discrete, misses
        // the family's cut: what is shown must agree, so such a row stays undecided.
        if q >= cfg.alpha && c.verdict != Verdict::Undecided {
            c.verdict = Verdict::Undecided;
        }
        lost += usize::from(c.p_value < cfg.alpha && q >= cfg.alpha);
    }
    FamilyAdjustment {
        method: "benjamini_hochberg",
        rows: m,
        lost,
        prior,
        level,
    }
}

fn plan(e: Option<&Evidence>, prior: Option<&Prior>, m: usize, cfg: &StatsConfig) -> Plan {
    let Some(e) = e else {
        return Plan {
            method: Method::None,
            se: f64::NAN,
            df: 0.0,
            p: 1.0,
            within: false,
            fallback: None,
            no_spread: None,
        };
    };
    let tau = e.threshold(cfg.noise_pct);
    let borrow = prior.filter(|_| e.scale == Scale::Log);
    let mut own = None;
    match check(e, borrow, m) {
        Check::Fine => {}
        Check::Own(why) => own = Some(why),
        Check::Rank(why) => {
            let centre = e.rank_centre();
            let boundary = if centre >= 0.0 { tau } else { -tau };
            let within = centre.abs() < tau;
            let (method, p) = if e.paired {
                (Method::SignedRank, signed_rank::p_value(&e.diffs, boundary))
            } else {
                (Method::RankSum, rank_sum_p(e, boundary))
            };
            return Plan {
                method,
                se: f64::NAN,
                df: 0.0,
                p: if within { p / 2.0 } else { p },
                within,
                fallback: Some(why),
                no_spread: None,
            };
        }
    }
    let (var, df, method) = match borrow.filter(|_| own.is_none()) {
        Some(pr) => {
            let (v, d) = pr.moderate(e.var, e.df);
            (v, d, Method::ModeratedT)
        }
        None => (e.var, e.df, Method::T),
    };
    let se = (var * e.factor).sqrt();
    let distance = (e.estimate.abs() - tau).abs();
    let within = e.estimate.abs() < tau;
    let sides = if within { 1.0 } else { 2.0 };
    // No spread, no interval: a change read from one value per side, or from identical
    // differences, would be "known exactly" with a zero-width interval and p = 0, a verdict
    // from no evidence of the noise at all.
    let no_spread = if df <= 0.0 || (var * e.factor).is_nan() {
        Some(NoSpread::OneValuePerSide)
    } else if se <= 1e-12 * (e.estimate.abs() + tau) {
        // Zero up to rounding: ln 120 − ln 100 and ln 240 − ln 200 differ in the last bit.
        Some(NoSpread::AllEqual)
    } else {
        None
    };
    let p = if no_spread.is_some() || !se.is_finite() {
        1.0
    } else {
        (sides * t_sf(distance / se, df)).min(1.0)
    };
    Plan {
        method,
        se,
        df,
        p,
        within,
        fallback: own,
        no_spread,
    }
}

/// What the assumption check found about a row.
enum Check {
    /// Read with the t (borrowing where the family allows).
    Fine,
    /// Its spread does not fit the family's: read with its own variance only.
    Own(String),
    /// One value far from the rest: read with ranks.
    Rank(String),
}

/// Does the row's variance belong to the family's (an F test of s²/s²₀, Bonferroni over
/// the m rows)? If not, does it once its most extreme value is left out? Then that one
/// value is the trouble (a disturbed repetition) and ranks read the row; otherwise the
/// row is simply noisier than the rest and keeps its own variance (it must not borrow a
/// quieter family's). Read alone, a far-out value (3 IQR, from 8 values) sends it to ranks.
fn check(e: &Evidence, prior: Option<&Prior>, m: usize) -> Check {
    let Some(pr) = prior else {
        return if e.far_out() {
            Check::Rank("one repetition lies far outside the others (3 IQR)".into())
        } else {
            Check::Fine
        };
    };
    let misfit = |var: f64, df: f64| {
        let d0 = pr.df.min(moderate::DF_CAP);
        df > 0.0
            && pr.var > 0.0
            && FisherSnedecor::new(df, d0)
                .is_ok_and(|f| f.sf(var / pr.var) < CHECK_ALPHA / m as f64)
    };
    if !misfit(e.var, e.df) {
        return Check::Fine;
    }
    let ratio = (e.var / pr.var).sqrt();
    let r = e.residuals();
    if r.len() >= 4 {
        let worst = r
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.abs().total_cmp(&b.1.abs()))
            .map_or(0, |(i, _)| i);
        let rest: Vec<f64> = r
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != worst)
            .map(|(_, x)| *x)
            .collect();
        let mean = rest.iter().sum::<f64>() / rest.len() as f64;
        let df = e.df - 1.0;
        let var = rest.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / df.max(1.0);
        if !misfit(var, df) {
            return Check::Rank(format!(
                "one repetition lies far from the others (with it the spread is {ratio:.1}x \
                 the family's, without it as the family's)"
            ));
        }
    }
    Check::Own(format!(
        "its spread is {ratio:.1}x the family's, so it does not borrow the family's variance"
    ))
}

/// Mann-Whitney p of "B's logs are A's shifted by `boundary`".
fn rank_sum_p(e: &Evidence, boundary: f64) -> f64 {
    let a: Vec<f64> = e.sides.0.iter().map(|x| x + boundary).collect();
    match (Sample::new(a), Sample::new(e.sides.1.clone())) {
        (Ok(a), Ok(b)) => mann_whitney(&a, &b).p_value,
        _ => 1.0,
    }
}

/// Upper tail of the t law on `df` degrees of freedom (normal beyond the cap).
fn t_sf(x: f64, df: f64) -> f64 {
    if df >= moderate::DF_CAP {
        Normal::default().sf(x)
    } else {
        StudentsT::new(0.0, 1.0, df).map_or(1.0, |t| t.sf(x))
    }
}

fn t_quantile(p: f64, df: f64) -> f64 {
    if df >= moderate::DF_CAP {
        Normal::default().inverse_cdf(p)
    } else {
        StudentsT::new(0.0, 1.0, df).map_or(f64::INFINITY, |t| t.inverse_cdf(p))
    }
}

/// Sets the row's interval at `level`, its verdict and the figures shown from them.
fn apply(c: &mut Comparison, p: Plan, level: f64, cfg: &StatsConfig) {
    let d = &mut c.decision;
    d.method = p.method;
    d.level = level;
    d.fallback = p.fallback.clone();
    d.df = matches!(p.method, Method::T | Method::ModeratedT).then_some(p.df);
    d.reps_to_decide = None;
    d.widened = false;
    d.no_spread = p.no_spread;
    d.disagreement = None;
    let Some(e) = d.evidence.clone() else {
        c.verdict = Verdict::Undecided;
        return;
    };
    d.spread_borrowed = p.method == Method::ModeratedT && e.df <= 0.0;
    if p.no_spread.is_some() {
        // The change is shown, but no interval: there is none to draw.
        d.interval = (f64::NEG_INFINITY, f64::INFINITY);
        c.change_pct = Some(e.to_pct(e.estimate));
        c.change_ci_pct = None;
        c.regression_pct = c
            .change_pct
            .map(|x| crate::verdict::regression_pct(x, c.better));
        c.verdict = Verdict::Undecided;
        return;
    }
    let tau = e.threshold(cfg.noise_pct);
    let (estimate, interval, t_half) = estimate_and_interval(d, &e, &p, level);
    d.interval = interval;
    c.change_pct = Some(e.to_pct(estimate));
    c.change_ci_pct = Some((e.to_pct(interval.0), e.to_pct(interval.1)));
    c.regression_pct = c
        .change_pct
        .map(|x| crate::verdict::regression_pct(x, c.better));
    // Read from the interval alone, so the two cannot disagree. For a t row the interval
    // avoids both thresholds exactly when BH selected the row; a rank row's interval
    // inverts its own test and can differ from the selection only by the test's
    // discreteness, and then the row stays undecided (`decide_family`).
    c.verdict = if c.decision.widened {
        Verdict::Undecided
    } else {
        Verdict::from_interval(interval, tau, c.better)
    };
    if let (Verdict::Undecided, Some(half)) = (c.verdict, t_half.filter(|h| h.is_finite())) {
        let distance = (e.estimate.abs() - tau).abs();
        c.decision.reps_to_decide = reps_for_half_width(e.n, half, distance);
    }
    c.decision.disagreement = disagreement(c, cfg);
}

/// Whether the row's change and its sides' medians disagree: opposite directions (each
/// beyond a tenth of the threshold, so two near-zero figures never count), or further
/// apart than the interval is wide.
fn disagreement(c: &Comparison, cfg: &StatsConfig) -> Option<Disagreement> {
    let change = c.change_pct?;
    let (lo, hi) = c.change_ci_pct?;
    if !(c.a.median > 0.0 && c.b.median > 0.0) {
        return None;
    }
    let medians = (c.b.median / c.a.median - 1.0) * 100.0;
    let small = cfg.noise_pct / 10.0;
    let opposite =
        medians.abs() > small && change.abs() > small && medians.signum() != change.signum();
    let far = (medians - change).abs() > (hi - lo);
    if !(opposite || far) {
        return None;
    }
    let wild = !c.a.outliers.is_empty()
        || !c.b.outliers.is_empty()
        || matches!(c.decision.method, Method::SignedRank | Method::RankSum);
    Some(Disagreement {
        medians_pct: medians,
        change_pct: change,
        cause: if wild {
            DisagreementCause::WildRepetition
        } else {
            DisagreementCause::Shape
        },
    })
}

/// The row's estimate and its interval at `level` by the plan's method, and the t's
/// half-width where a t decided; marks `d` widened when a rank interval cannot reach the
/// level.
fn estimate_and_interval(
    d: &mut Decision,
    e: &Evidence,
    p: &Plan,
    level: f64,
) -> (f64, (f64, f64), Option<f64>) {
    let tail = (1.0 - level) / 2.0;
    let mut t_half = None;
    let (estimate, interval) = match p.method {
        Method::T | Method::ModeratedT => {
            let half = if p.se > 0.0 {
                t_quantile(1.0 - tail, p.df) * p.se
            } else if p.se == 0.0 {
                0.0
            } else {
                f64::INFINITY
            };
            t_half = Some(half);
            (e.estimate, (e.estimate - half, e.estimate + half))
        }
        Method::SignedRank => {
            let est = e.rank_centre();
            match signed_rank::interval(&e.diffs, level) {
                Some((ci, _)) => (est, ci),
                None => {
                    d.widened = true;
                    let lo = e.diffs.iter().copied().fold(f64::INFINITY, f64::min);
                    let hi = e.diffs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                    (est, (lo, hi))
                }
            }
        }
        Method::RankSum => {
            let (a, b) = (
                Sample::new(e.sides.0.clone()),
                Sample::new(e.sides.1.clone()),
            );
            match (a, b) {
                (Ok(a), Ok(b)) => {
                    let s = hodges_lehmann(&a, &b, level);
                    d.widened = s.widened;
                    (s.estimate, s.ci)
                }
                _ => (e.estimate, (f64::NEG_INFINITY, f64::INFINITY)),
            }
        }
        Method::None => (e.estimate, (f64::NEG_INFINITY, f64::INFINITY)),
    };
    (estimate, interval, t_half)
}

#[cfg(test)]
mod tests;
