//! The divergence E-Divisive maximises: Matteson & James' q̂ with exponent a,
//!
//! q̂(X, Y) = n·m/(n+m) · ( 2/(n·m) Σ|x−y|ᵃ − 1/C(n,2) Σ|x−x'|ᵃ − 1/C(m,2) Σ|y−y'|ᵃ ),
//!
//! for X = the segment's first τ values and Y = the values from τ up to κ. Searching κ as
//! well as τ (rather than Y = the rest of the segment) keeps a later change from
//! muddying the statistic of an earlier one. All pair sums come from one 2-D prefix sum of
//! the distance matrix, so a whole search costs O(n²) time and memory.

/// The best split of a segment: where the new part starts, and its divergence.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Split {
    /// First index of the second part, relative to the segment's start.
    pub tau: usize,
    pub q: f64,
}

/// Sums of |v_i − v_j| over index rectangles.
struct PairSums {
    width: usize,
    prefix: Vec<f64>,
}

impl PairSums {
    fn new(v: &[f64], exponent: f64) -> Self {
        let width = v.len() + 1;
        let mut prefix = vec![0.0; width * width];
        for i in 0..v.len() {
            let mut row = 0.0;
            for j in 0..v.len() {
                row += (v[i] - v[j]).abs().powf(exponent);
                prefix[(i + 1) * width + j + 1] = prefix[i * width + j + 1] + row;
            }
        }
        Self { width, prefix }
    }

    fn at(&self, a: usize, b: usize) -> f64 {
        self.prefix[a * self.width + b]
    }

    /// Σ |v_i − v_j| for i in [a1, a2), j in [b1, b2).
    fn rect(&self, a1: usize, a2: usize, b1: usize, b2: usize) -> f64 {
        self.at(a2, b2) - self.at(a1, b2) - self.at(a2, b1) + self.at(a1, b1)
    }
}

/// The split of `v` with the largest q̂ (distances raised to `exponent`, in (0, 2)), each
/// part holding at least `min_size` values; `None` when the segment is too short to split.
pub fn best_split(v: &[f64], min_size: usize, exponent: f64) -> Option<Split> {
    let min = min_size.max(2);
    let n = v.len();
    if n < 2 * min {
        return None;
    }
    let sums = PairSums::new(v, exponent);
    let mut best: Option<Split> = None;
    for tau in min..=n - min {
        let n1 = tau as f64;
        let within_x = sums.rect(0, tau, 0, tau) / (n1 * (n1 - 1.0));
        for kappa in tau + min..=n {
            let n2 = (kappa - tau) as f64;
            let between = sums.rect(0, tau, tau, kappa) * 2.0 / (n1 * n2);
            let within_y = sums.rect(tau, kappa, tau, kappa) / (n2 * (n2 - 1.0));
            let q = n1 * n2 / (n1 + n2) * (between - within_x - within_y);
            if best.is_none_or(|b| q > b.q) {
                best = Some(Split { tau, q });
            }
        }
    }
    best
}

/// The largest q̂ over splits of `v` into a head and the whole rest (κ = the segment's
/// end), each part at least `min_size` long: the statistic the permutation test draws
/// again and again. Row sums instead of a matrix: O(n²) time, O(n) memory.
pub fn max_tail_split(v: &[f64], min_size: usize, exponent: f64) -> f64 {
    let min = min_size.max(2);
    let n = v.len();
    if n < 2 * min {
        return 0.0;
    }
    // left[k] = Σ_{i<k} d(k, i): what value k adds to the pairs of the values before it.
    let mut left = vec![0.0; n];
    for k in 0..n {
        left[k] = (0..k).map(|i| (v[k] - v[i]).abs().powf(exponent)).sum();
    }
    let total: f64 = left.iter().sum();
    // right[k] = Σ_{j>k} d(k, j), from the same sums read the other way.
    let mut right = vec![0.0; n];
    let mut head_pairs = vec![0.0; n + 1];
    for k in 0..n {
        head_pairs[k + 1] = head_pairs[k] + left[k];
    }
    let mut tail_pairs = vec![0.0; n + 1];
    for k in (0..n).rev() {
        right[k] = (k + 1..n).map(|j| (v[k] - v[j]).abs().powf(exponent)).sum();
        tail_pairs[k] = tail_pairs[k + 1] + right[k];
    }
    let mut best = f64::NEG_INFINITY;
    for tau in min..=n - min {
        let (n1, n2) = (tau as f64, (n - tau) as f64);
        let within_x = head_pairs[tau];
        let within_y = tail_pairs[tau];
        let between = total - within_x - within_y;
        let q = n1 * n2 / (n1 + n2)
            * (2.0 * between / (n1 * n2)
                - 2.0 * within_x / (n1 * (n1 - 1.0))
                - 2.0 * within_y / (n2 * (n2 - 1.0)));
        best = best.max(q);
    }
    best
}
