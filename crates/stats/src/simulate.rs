//! Seeded simulations of whole families of comparisons: what the verdicts of
//! [`crate::decide`] do when the truth is known. `perflab crosscheck verdicts` prints
//! [`verdict_targets`]; the tests of this crate assert the same bounds on fewer families.
//!
//! A quantity centred on 100,000 is measured in interleaved pairs (A₁B₁, A₂B₂, …), each
//! value c·(1 + cv·z) with z standard normal and independent — no drift for pairing to
//! remove, so the pairs help here less than on a real machine. The `disturbed` model makes
//! one value in ten 20 % slower. Random numbers come from xoshiro256++ with fixed seeds,
//! so every figure is the same on every machine.

use perflab_core::Better;
use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};

use crate::comparison::Comparison;
use crate::config::StatsConfig;
use crate::decide::decide_family;
use crate::decide::sequential::Schedule;
use crate::sample::Sample;
use crate::verdict::Verdict;

const CENTRE: f64 = 100_000.0;

/// A seeded source of measurements.
pub struct Gen(Xoshiro256PlusPlus);

impl Gen {
    pub fn new(seed: u64) -> Self {
        Self(Xoshiro256PlusPlus::seed_from_u64(seed))
    }

    /// Standard normal by Box-Muller; 1 − u keeps the logarithm's argument above 0.
    pub fn z(&mut self) -> f64 {
        let u1: f64 = 1.0 - self.0.random::<f64>();
        let u2: f64 = self.0.random::<f64>();
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }

    /// One measurement centred on `c` with relative noise `cv`; with `disturbed`, one
    /// in ten is 20 % lower (a rate slowed by a timer or a migration).
    pub fn draw(&mut self, c: f64, cv: f64, disturbed: bool) -> f64 {
        let x = c * (1.0 + cv * self.z());
        if disturbed && self.0.random::<f64>() < 0.1 {
            x * 0.8
        } else {
            x.max(c * 1e-3)
        }
    }
}

/// The shape of a family: rows × repetitions, and each repetition's relative noise.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Shape {
    pub rows: usize,
    pub reps: usize,
    pub cv: f64,
    pub disturbed: bool,
}

/// The settings the simulations decide with: the defaults, one bootstrap resample (the
/// verdict does not use the bootstrap, and it is the slow part).
pub fn sim_config(noise_pct: f64) -> StatsConfig {
    StatsConfig {
        resamples: 1,
        noise_pct,
        ..Default::default()
    }
}

/// Draws `n` pairs of one row whose B is `factor` times A.
pub fn pairs(g: &mut Gen, n: usize, cv: f64, factor: f64, disturbed: bool) -> (Vec<f64>, Vec<f64>) {
    (0..n)
        .map(|_| {
            let a = g.draw(CENTRE, cv, disturbed);
            let b = g.draw(CENTRE * factor, cv, disturbed);
            (a, b)
        })
        .unzip()
}

/// A row compared from its pairs, weighted for the look it is at, and decided alone.
pub fn row(a: &[f64], b: &[f64], weight: f64, cfg: &StatsConfig) -> Comparison {
    let mut c = undecided_row(a, b, weight, cfg);
    decide_family(&mut [&mut c], cfg);
    c
}

/// A row from its pairs, not yet decided (its family decides it).
fn undecided_row(a: &[f64], b: &[f64], weight: f64, cfg: &StatsConfig) -> Comparison {
    let idx: Vec<(usize, usize)> = (0..a.len()).map(|i| (i, i)).collect();
    let sa = Sample::new(a.to_vec()).expect("finite");
    let sb = Sample::new(b.to_vec()).expect("finite");
    let mut c = crate::compare::undescribed(&sa, &sb, &idx, Better::Higher, cfg);
    c.decision.weight = weight;
    c
}

/// One family decided together; `factors[i]` is row i's true ratio B/A.
pub fn family(g: &mut Gen, shape: Shape, factors: &[f64], cfg: &StatsConfig) -> Vec<Comparison> {
    let mut rows: Vec<Comparison> = factors
        .iter()
        .map(|&f| {
            let (a, b) = pairs(g, shape.reps, shape.cv, f, shape.disturbed);
            undecided_row(&a, &b, 1.0, cfg)
        })
        .collect();
    let mut refs: Vec<&mut Comparison> = rows.iter_mut().collect();
    decide_family(&mut refs, cfg);
    rows
}

/// A verdict the truth `factor` (B/A) makes wrong at threshold `noise_pct`: better or
/// worse when the change is within the threshold or the other way; same when it is not
/// within.
pub fn is_false(v: Verdict, factor: f64, noise_pct: f64) -> bool {
    let tau = (noise_pct / 100.0).ln_1p();
    let d = factor.ln();
    match v {
        Verdict::Improved => d <= tau,
        Verdict::Regressed => d >= -tau,
        Verdict::Same => d.abs() >= tau,
        Verdict::Undecided | Verdict::Changed | Verdict::Void => false,
    }
}

/// A family of `rows` rows, every one's B `factor` times A, measured until decided: after
/// each look every undecided row gets pairs up to the schedule's next look, and the whole
/// family is decided again. Returns each row's final verdict and pairs.
pub fn until_decided(
    g: &mut Gen,
    schedule: Schedule,
    rows: usize,
    cv: f64,
    factor: f64,
    cfg: &StatsConfig,
) -> Vec<(Verdict, usize)> {
    let mut data: Vec<(Vec<f64>, Vec<f64>)> = (0..rows)
        .map(|_| pairs(g, schedule.planned, cv, factor, false))
        .collect();
    loop {
        let mut family: Vec<Comparison> = data
            .iter()
            .map(|(a, b)| undecided_row(a, b, schedule.weight(a.len()), cfg))
            .collect();
        let mut refs: Vec<&mut Comparison> = family.iter_mut().collect();
        decide_family(&mut refs, cfg);
        let mut grew = false;
        for (c, (a, b)) in family.iter().zip(data.iter_mut()) {
            if c.verdict != Verdict::Undecided {
                continue;
            }
            if let Some(next) = schedule.next(a.len()) {
                let (ma, mb) = pairs(g, next - a.len(), cv, factor, false);
                a.extend(ma);
                b.extend(mb);
                grew = true;
            }
        }
        if !grew {
            return family
                .iter()
                .zip(&data)
                .map(|(c, (a, _))| (c.verdict, a.len()))
                .collect();
        }
    }
}

/// Whether a simulated figure must stay below or above its bound, or is only shown.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Bound {
    AtMost(f64),
    AtLeast(f64),
    Shown,
}

/// One line of the target table.
#[derive(Clone, Debug, PartialEq)]
pub struct Target {
    pub what: String,
    pub value: f64,
    pub bound: Bound,
    /// How many families (or rows) the figure is over.
    pub trials: u32,
    /// Extra figures for the reader (measurements spent, the fixed design matched).
    pub detail: String,
}

impl Target {
    /// True unless the figure is beyond its bound by more than its sampling error: a
    /// one-sided binomial test at 1 % against the bound (z = 2.33, over `trials`
    /// families). A rate whose truth sits exactly on its bound (the false-verdict rate
    /// of a procedure that spends all its alpha) lands above it half the time by chance;
    /// that is no failure, and a rate clearly above it is.
    pub fn holds(&self) -> bool {
        let margin = |b: f64| {
            if self.is_share() {
                2.33 * (b * (1.0 - b) / f64::from(self.trials.max(1))).sqrt()
            } else {
                0.0
            }
        };
        match self.bound {
            Bound::AtMost(b) => self.value <= b + margin(b),
            Bound::AtLeast(b) => self.value >= b - margin(b),
            Bound::Shown => true,
        }
    }

    /// The binomial standard error of the figure, as a share of `trials` families;
    /// `None` for a figure that is not such a share (a ratio of measurements spent).
    pub fn std_error(&self) -> Option<f64> {
        let p = self.value.clamp(0.0, 1.0);
        self.is_share()
            .then(|| (p * (1.0 - p) / f64::from(self.trials.max(1))).sqrt())
    }

    /// A share of families (or of rows) with some outcome, rather than a ratio.
    fn is_share(&self) -> bool {
        !self.what.contains(" / ")
    }

    /// A false-verdict rate (an error bound), as opposed to a power or a cost target.
    pub fn is_error_rate(&self) -> bool {
        matches!(self.bound, Bound::AtMost(_)) && self.what.starts_with("false")
    }
}

/// One line (or group of lines) of the table, computed from its own seed.
type Job = Box<dyn Fn() -> Vec<Target> + Send + Sync>;

/// Every figure of the target table, over `families` families per line (1000 for
/// the table in docs/METHODOLOGY.md; fewer in tests). Deterministic for a given `seed`:
/// each line draws from its own generator, so the lines may run on several threads.
pub fn verdict_targets(families: u32, seed: u64) -> Vec<Target> {
    let mut jobs: Vec<Job> = Vec::new();
    let mut seed = seed;
    // Seeds are handed out in the order the lines are listed, so a line's figures do not
    // depend on how many threads compute them.
    let mut next_seed = || {
        seed += 1;
        seed
    };
    null_jobs(families, &mut next_seed, &mut jobs);
    power_jobs(families, &mut next_seed, &mut jobs);
    same_jobs(families, &mut next_seed, &mut jobs);
    let s = next_seed();
    jobs.push(Box::new(move || {
        sequential_targets(&mut Gen::new(s), (families / 2).max(1))
    }));
    run_jobs(jobs)
}

/// Rows × repetitions of the table's lines.
const SHAPES: [(usize, usize); 2] = [(40, 5), (16, 4)];
/// Coefficients of variation of the table's lines.
const NOISES: [f64; 3] = [0.005, 0.01, 0.03];

fn plain(rows: usize, reps: usize, cv: f64) -> Shape {
    Shape {
        rows,
        reps,
        cv,
        disturbed: false,
    }
}

/// No change anywhere: families with any false better/worse.
fn null_jobs(families: u32, next_seed: &mut dyn FnMut() -> u64, jobs: &mut Vec<Job>) {
    for &(rows, reps) in &SHAPES {
        for &cv in &NOISES {
            for noise_pct in [1.0, 0.0] {
                let shape = plain(rows, reps, cv);
                let s = next_seed();
                jobs.push(Box::new(move || {
                    vec![null_rate(&mut Gen::new(s), shape, noise_pct, families)]
                }));
            }
        }
    }
    let shape = Shape {
        disturbed: true,
        ..plain(40, 5, 0.01)
    };
    let s = next_seed();
    jobs.push(Box::new(move || {
        vec![null_rate(&mut Gen::new(s), shape, 1.0, families)]
    }));
}

/// Power to flag one shifted row, in the right direction.
fn power_jobs(families: u32, next_seed: &mut dyn FnMut() -> u64, jobs: &mut Vec<Job>) {
    for &(rows, reps) in &SHAPES {
        for &cv in &NOISES {
            for shift in [0.02, 0.05, 0.10] {
                let shape = plain(rows, reps, cv);
                let bound = if (rows, reps, cv, shift) == (40, 5, 0.01, 0.05) {
                    Bound::AtLeast(0.90)
                } else {
                    Bound::Shown
                };
                let s = next_seed();
                jobs.push(Box::new(move || {
                    vec![power(&mut Gen::new(s), shape, shift, bound, families)]
                }));
            }
        }
    }
}

/// Truly equal rows read `same` at the 1 % threshold.
fn same_jobs(families: u32, next_seed: &mut dyn FnMut() -> u64, jobs: &mut Vec<Job>) {
    for &(rows, reps) in &SHAPES {
        for &cv in &NOISES {
            let shape = plain(rows, reps, cv);
            let bound = if (rows, reps, cv) == (40, 5, 0.005) {
                Bound::AtLeast(0.80)
            } else {
                Bound::Shown
            };
            let s = next_seed();
            jobs.push(Box::new(move || {
                vec![same_rate(&mut Gen::new(s), shape, bound, families)]
            }));
        }
    }
}

/// Runs the jobs on the machine's CPUs, keeping their order.
fn run_jobs(jobs: Vec<Job>) -> Vec<Target> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: Vec<std::sync::Mutex<Vec<Target>>> =
        jobs.iter().map(|_| Default::default()).collect();
    std::thread::scope(|scope| {
        for _ in 0..threads.min(jobs.len()) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(job) = jobs.get(i) else { break };
                *results[i].lock().expect("no job panics while holding it") = job();
            });
        }
    });
    results
        .into_iter()
        .flat_map(|m| m.into_inner().expect("no job panicked"))
        .collect()
}

fn null_rate(g: &mut Gen, shape: Shape, noise_pct: f64, families: u32) -> Target {
    let cfg = sim_config(noise_pct);
    let factors = vec![1.0; shape.rows];
    let bad = (0..families)
        .filter(|_| {
            family(g, shape, &factors, &cfg)
                .iter()
                .any(|c| is_false(c.verdict, 1.0, noise_pct) && c.verdict != Verdict::Same)
        })
        .count();
    Target {
        what: format!(
            "false better/worse, no change, {}, threshold {}%: families with any",
            describe(shape),
            noise_pct
        ),
        value: bad as f64 / f64::from(families),
        bound: Bound::AtMost(0.05),
        trials: families,
        detail: String::new(),
    }
}

fn power(g: &mut Gen, shape: Shape, shift: f64, bound: Bound, families: u32) -> Target {
    let cfg = sim_config(1.0);
    let mut factors = vec![1.0; shape.rows];
    factors[0] = 1.0 + shift;
    let hit = (0..families)
        .filter(|_| family(g, shape, &factors, &cfg)[0].verdict == Verdict::Improved)
        .count();
    Target {
        what: format!(
            "power, one row +{}% among {}: flagged better",
            shift * 100.0,
            describe(shape)
        ),
        value: hit as f64 / f64::from(families),
        bound,
        trials: families,
        detail: String::new(),
    }
}

fn same_rate(g: &mut Gen, shape: Shape, bound: Bound, families: u32) -> Target {
    let cfg = sim_config(1.0);
    let factors = vec![1.0; shape.rows];
    let same: usize = (0..families)
        .map(|_| {
            family(g, shape, &factors, &cfg)
                .iter()
                .filter(|c| c.verdict == Verdict::Same)
                .count()
        })
        .sum();
    Target {
        what: format!(
            "same, all rows equal, {}, threshold 1%: rows",
            describe(shape)
        ),
        value: same as f64 / (families as f64 * shape.rows as f64),
        bound,
        trials: families,
        detail: String::new(),
    }
}

/// `--until-decided` against fixed designs: families of 16 rows (a size scan), every row
/// +5 % in 3 % noise, planned 4 pairs, cap 30.
fn sequential_targets(g: &mut Gen, trials: u32) -> Vec<Target> {
    let cfg = sim_config(1.0);
    let (cv, factor) = (0.03, 1.05);
    let schedule = Schedule::new(4, 30);
    let mut spent = 0usize;
    let mut hits = 0usize;
    for _ in 0..trials {
        for (v, n) in until_decided(g, schedule, ROWS, cv, factor, &cfg) {
            spent += n;
            hits += usize::from(v == Verdict::Improved);
        }
    }
    let all = trials as f64 * ROWS as f64;
    let seq_power = hits as f64 / all;
    let seq_mean = spent as f64 / all;
    let fixed = smallest_fixed_design(g, trials, (cv, factor), seq_power, &cfg);
    let (false_at_edge, false_null) = sequential_errors(g, trials, schedule, cv, &cfg);
    let (undecided_fixed, undecided_seq) = undecided(g, trials, schedule, (cv, factor), &cfg);
    let t = f64::from(trials);
    vec![
        Target {
            what: "until-decided, 16 rows each +5% in 3% noise: pairs spent / fixed design of \
                   equal power"
                .into(),
            value: seq_mean / fixed.0 as f64,
            bound: Bound::AtMost(0.60),
            trials,
            detail: format!(
                "{seq_mean:.1} pairs per row on average (power {:.1}%) vs fixed {} pairs \
                 (power {:.1}%)",
                seq_power * 100.0,
                fixed.0,
                fixed.1 * 100.0
            ),
        },
        Target {
            what: "false better, until-decided, 16 rows each exactly +1% (on the threshold): \
                   rows"
                .into(),
            value: false_at_edge as f64 / all,
            bound: Bound::AtMost(0.05),
            trials,
            detail: String::new(),
        },
        Target {
            what: "false better/worse, until-decided, 16 rows, no change, threshold 0%: \
                   families with any"
                .into(),
            value: f64::from(false_null) / t,
            bound: Bound::AtMost(0.05),
            trials,
            detail: String::new(),
        },
        Target {
            what: "undecided rows, +5% in 3% noise: until-decided (cap 30) vs fixed 10 pairs"
                .into(),
            value: undecided_seq as f64 / all,
            bound: Bound::AtMost(undecided_fixed as f64 / all),
            trials,
            detail: format!(
                "fixed 10 pairs leave {:.1}% undecided",
                undecided_fixed as f64 / all * 100.0
            ),
        },
    ]
}

/// Rows of every family of the sequential lines (a size scan).
const ROWS: usize = 16;

/// The smallest fixed design (pairs per row) whose share of rows flagged better reaches
/// `seq_power`, with that share; rows +`factor` in `cv` noise.
fn smallest_fixed_design(
    g: &mut Gen,
    trials: u32,
    (cv, factor): (f64, f64),
    seq_power: f64,
    cfg: &StatsConfig,
) -> (usize, f64) {
    let all = trials as f64 * ROWS as f64;
    let shape = |reps| Shape {
        rows: ROWS,
        reps,
        cv,
        disturbed: false,
    };
    // Share of rows flagged better by a fixed design of n pairs per row.
    let fixed_power = |g: &mut Gen, n: usize, cfg: &StatsConfig| {
        let factors = vec![factor; ROWS];
        let ok: usize = (0..trials)
            .map(|_| {
                family(g, shape(n), &factors, cfg)
                    .iter()
                    .filter(|c| c.verdict == Verdict::Improved)
                    .count()
            })
            .sum();
        ok as f64 / all
    };
    // The smallest fixed design with at least the same power.
    // (power rises with n, so a bisection finds it in a few tries)
    let (mut lo, mut hi) = (4usize, 60usize);
    let mut fixed = (hi, fixed_power(g, hi, cfg));
    while lo < hi {
        let mid = (lo + hi) / 2;
        let p = fixed_power(g, mid, cfg);
        if p >= seq_power {
            fixed = (mid, p);
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    fixed
}

/// Error rates under optional stopping: rows flagged better when every row is exactly on
/// the threshold (+1 %), and families with any better/worse under no change at all.
fn sequential_errors(
    g: &mut Gen,
    trials: u32,
    schedule: Schedule,
    cv: f64,
    cfg: &StatsConfig,
) -> (usize, u32) {
    let mut false_at_edge = 0usize;
    let mut false_null = 0u32;
    let cfg0 = sim_config(0.0);
    for _ in 0..trials {
        let edge = until_decided(g, schedule, ROWS, cv, 1.01, cfg);
        false_at_edge += edge.iter().filter(|(v, _)| is_false(*v, 1.01, 1.0)).count();
        let null = until_decided(g, schedule, ROWS, cv, 1.0, &cfg0);
        false_null += u32::from(null.iter().any(|(v, _)| v.moved()));
    }
    (false_at_edge, false_null)
}

/// Rows left undecided by a fixed 10-pair run and by --until-decided with its cap.
fn undecided(
    g: &mut Gen,
    trials: u32,
    schedule: Schedule,
    (cv, factor): (f64, f64),
    cfg: &StatsConfig,
) -> (usize, usize) {
    let shape = |reps| Shape {
        rows: ROWS,
        reps,
        cv,
        disturbed: false,
    };
    let mut undecided_fixed = 0usize;
    let mut undecided_seq = 0usize;
    let factors = vec![factor; ROWS];
    for _ in 0..trials {
        let f = family(g, shape(10), &factors, cfg);
        undecided_fixed += f.iter().filter(|c| c.verdict == Verdict::Undecided).count();
        let s = until_decided(g, schedule, ROWS, cv, factor, cfg);
        undecided_seq += s.iter().filter(|(v, _)| *v == Verdict::Undecided).count();
    }
    (undecided_fixed, undecided_seq)
}

fn describe(s: Shape) -> String {
    format!(
        "{} rows x {} reps, {}% noise{}",
        s.rows,
        s.reps,
        s.cv * 100.0,
        if s.disturbed {
            ", 1 in 10 disturbed"
        } else {
            ""
        }
    )
}
