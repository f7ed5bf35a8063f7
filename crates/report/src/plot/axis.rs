//! Axes: how values map to a linear drawing coordinate, the range shown, and where the
//! ticks go with which labels. Every chart draws in a transformed linear space (log10,
//! log2 or −log10(1−q) already applied), so plotters only ever sees plain f64 ranges with
//! explicit key points, and tick placement is ours and deterministic.

use super::numfmt;
use super::{Scale, TickFormat};

/// The map from a value to the axis' linear coordinate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Transform {
    Linear,
    Log10,
    /// Used for byte sizes so ticks fall on powers of two.
    Log2,
}

impl Transform {
    pub(crate) fn of(scale: Scale, format: TickFormat) -> Self {
        match (scale, format) {
            (Scale::Linear, _) => Transform::Linear,
            (Scale::Log, TickFormat::Plain) => Transform::Log10,
            (Scale::Log, TickFormat::Bytes) => Transform::Log2,
        }
    }

    /// The axis coordinate of `v`; `None` for what the axis cannot show (non-finite,
    /// or ≤ 0 on a log axis).
    pub(crate) fn apply(self, v: f64) -> Option<f64> {
        let t = match self {
            Transform::Linear => v,
            Transform::Log10 if v > 0.0 => v.log10(),
            Transform::Log2 if v > 0.0 => v.log2(),
            _ => return None,
        };
        t.is_finite().then_some(t)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Tick {
    pub pos: f64,
    pub label: String,
}

/// A fitted axis in transformed coordinates.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Axis {
    pub lo: f64,
    pub hi: f64,
    pub transform: Transform,
    pub ticks: Vec<Tick>,
}

/// More ticks than this crowd the axis; decades or powers of two are thinned.
const MAX_TICKS: usize = 10;

impl Axis {
    /// Fits an axis around `values` (raw, untransformed); values the transform cannot
    /// show are ignored. `include_zero` keeps 0 in a linear range (bars start there).
    pub(crate) fn fit(
        values: impl IntoIterator<Item = f64>,
        scale: Scale,
        format: TickFormat,
        include_zero: bool,
    ) -> Axis {
        let transform = Transform::of(scale, format);
        let (mut lo, mut hi) = values
            .into_iter()
            .filter_map(|v| transform.apply(v))
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), t| {
                (lo.min(t), hi.max(t))
            });
        if lo > hi {
            (lo, hi) = match transform {
                Transform::Linear => (0.0, 1.0),
                Transform::Log10 => (0.0, 1.0),
                Transform::Log2 => (10.0, 20.0),
            };
        }
        if include_zero && transform == Transform::Linear {
            lo = lo.min(0.0);
            hi = hi.max(0.0);
        }
        if hi - lo <= f64::EPSILON * lo.abs().max(hi.abs()).max(1e-300) {
            let pad = match transform {
                Transform::Linear if lo != 0.0 => lo.abs() * 0.1,
                Transform::Linear => 1.0,
                _ => 0.5,
            };
            lo -= pad;
            hi += pad;
        }
        match transform {
            Transform::Linear => linear(lo, hi, format),
            Transform::Log10 => log10(lo, hi),
            Transform::Log2 => log2(lo, hi),
        }
    }

    /// A linear axis with given ticks (the percentile axis).
    pub(crate) fn fixed(lo: f64, hi: f64, ticks: Vec<Tick>) -> Axis {
        Axis {
            lo,
            hi,
            transform: Transform::Linear,
            ticks,
        }
    }

    /// Categories on 0..n, the i-th centred on i + 0.5 (or counted from the top when
    /// `from_top`), with at most `max_labels` labels so 1000 categories stay legible.
    pub(crate) fn categories(labels: &[String], from_top: bool, max_labels: usize) -> Axis {
        let n = labels.len();
        let every = n.div_ceil(max_labels.max(1)).max(1);
        let ticks = labels
            .iter()
            .enumerate()
            .filter(|(i, _)| i % every == 0)
            .map(|(i, label)| Tick {
                pos: category_centre(i, n, from_top),
                label: truncate(label, 24),
            })
            .collect();
        Axis::fixed(0.0, n.max(1) as f64, ticks)
    }
}

/// Centre of category `i` of `n` on a categorical axis.
pub(crate) fn category_centre(i: usize, n: usize, from_top: bool) -> f64 {
    if from_top {
        n as f64 - i as f64 - 0.5
    } else {
        i as f64 + 0.5
    }
}

/// At most `max` characters, the cut marked with an ellipsis.
pub(crate) fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

fn linear(lo: f64, hi: f64, format: TickFormat) -> Axis {
    let step = nice_step((hi - lo) / 5.0);
    let (a, b) = ((lo / step).floor(), (hi / step).ceil());
    if !(step.is_finite() && a.is_finite() && b.is_finite()) || b - a > 50.0 || b <= a {
        return endpoints(lo, hi, Transform::Linear);
    }
    let positions: Vec<f64> = (0..=(b - a) as i64)
        .map(|i| (a + i as f64) * step)
        .collect();
    let labels = match format {
        TickFormat::Plain => numfmt::linear_labels(&positions, step),
        TickFormat::Bytes => positions.iter().map(|&p| numfmt::bytes(p)).collect(),
    };
    Axis {
        lo: a * step,
        hi: b * step,
        transform: Transform::Linear,
        ticks: zip_ticks(positions, labels),
    }
}

/// 1, 2 or 5 times a power of ten, near `raw`.
fn nice_step(raw: f64) -> f64 {
    if !(raw.is_finite() && raw > 0.0) {
        return f64::NAN;
    }
    let mag = 10f64.powf(raw.log10().floor());
    let n = raw / mag;
    let nice = if n < 1.5 {
        1.0
    } else if n < 3.0 {
        2.0
    } else if n < 7.0 {
        5.0
    } else {
        10.0
    };
    nice * mag
}

/// Decades when the range spans three or more; otherwise 1-2-5 steps inside them, the
/// range widened to the nearest such step on each side.
fn log10(lo: f64, hi: f64) -> Axis {
    let (k0, k1) = (lo.floor(), hi.ceil());
    if !(k0.is_finite() && k1.is_finite()) {
        return endpoints(lo, hi, Transform::Log10);
    }
    let ticks = if k1 - k0 >= 3.0 {
        let every = ((k1 - k0 + 1.0) / MAX_TICKS as f64).ceil().max(1.0);
        let positions = (0..=(k1 - k0) as i64)
            .map(|i| k0 + i as f64)
            .filter(|k| k.rem_euclid(every) == 0.0)
            .collect();
        return log_axis(k0, k1, positions, Transform::Log10);
    } else {
        let mut candidates = Vec::new();
        for k in 0..=(k1 - k0) as i64 {
            for m in [1.0f64, 2.0, 5.0] {
                candidates.push(k0 + k as f64 + m.log10());
            }
        }
        candidates
    };
    let eps = 1e-9;
    let lo2 = ticks
        .iter()
        .copied()
        .filter(|&t| t <= lo + eps)
        .fold(k0, f64::max);
    let hi2 = ticks
        .iter()
        .copied()
        .filter(|&t| t >= hi - eps)
        .fold(k1, f64::min);
    let positions = ticks
        .into_iter()
        .filter(|&t| t >= lo2 - eps && t <= hi2 + eps)
        .collect();
    log_axis(lo2, hi2, positions, Transform::Log10)
}

/// Powers of two, every n-th one when there are more than fit.
fn log2(lo: f64, hi: f64) -> Axis {
    let (e0, e1) = (lo.floor(), hi.ceil());
    if !(e0.is_finite() && e1.is_finite()) {
        return endpoints(lo, hi, Transform::Log2);
    }
    let every = ((e1 - e0 + 1.0) / MAX_TICKS as f64).ceil().max(1.0);
    let positions = (0..=(e1 - e0) as i64)
        .map(|i| e0 + i as f64)
        .filter(|e| e.rem_euclid(every) == 0.0)
        .collect();
    log_axis(e0, e1, positions, Transform::Log2)
}

fn log_axis(lo: f64, hi: f64, positions: Vec<f64>, transform: Transform) -> Axis {
    let labels = positions
        .iter()
        .map(|&p| match transform {
            Transform::Log2 => numfmt::bytes(p.exp2()),
            _ => numfmt::short(10f64.powf(p)),
        })
        .collect();
    Axis {
        lo,
        hi,
        transform,
        ticks: zip_ticks(positions, labels),
    }
}

/// Two ticks at the ends: the fallback for ranges no step fits (±1e308 and the like).
fn endpoints(lo: f64, hi: f64, transform: Transform) -> Axis {
    let label = |p: f64| match transform {
        Transform::Linear => numfmt::short(p),
        Transform::Log10 => numfmt::short(10f64.powf(p)),
        Transform::Log2 => numfmt::bytes(p.exp2()),
    };
    Axis {
        lo,
        hi,
        transform,
        ticks: vec![
            Tick {
                pos: lo,
                label: label(lo),
            },
            Tick {
                pos: hi,
                label: label(hi),
            },
        ],
    }
}

fn zip_ticks(positions: Vec<f64>, labels: Vec<String>) -> Vec<Tick> {
    positions
        .into_iter()
        .zip(labels)
        .map(|(pos, label)| Tick { pos, label })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(a: &Axis) -> Vec<&str> {
        a.ticks.iter().map(|t| t.label.as_str()).collect()
    }

    #[test]
    fn bytes_on_log_axis_tick_at_powers_of_two() {
        let a = Axis::fit([4096.0, 65536.0], Scale::Log, TickFormat::Bytes, false);
        assert_eq!(labels(&a), ["4K", "8K", "16K", "32K", "64K"]);
        assert_eq!((a.lo, a.hi), (12.0, 16.0));
    }

    #[test]
    fn wide_byte_range_is_thinned() {
        let a = Axis::fit([512.0, 1073741824.0], Scale::Log, TickFormat::Bytes, false);
        assert!(a.ticks.len() <= MAX_TICKS && a.ticks.len() >= 5, "{a:?}");
        assert!(labels(&a).contains(&"1G"), "{a:?}");
    }

    #[test]
    fn log10_uses_decades_or_one_two_five() {
        let a = Axis::fit([1.0, 1e6], Scale::Log, TickFormat::Plain, false);
        assert_eq!(labels(&a), ["1", "10", "100", "1k", "10k", "100k", "1M"]);
        let b = Axis::fit([150.0, 700.0], Scale::Log, TickFormat::Plain, false);
        assert_eq!(labels(&b), ["100", "200", "500", "1k"]);
    }

    #[test]
    fn linear_ticks_are_nice_and_cover_the_data() {
        let a = Axis::fit([3.0, 97.0], Scale::Linear, TickFormat::Plain, false);
        assert_eq!(labels(&a), ["0", "20", "40", "60", "80", "100"]);
        assert!(a.lo <= 3.0 && a.hi >= 97.0);
    }

    #[test]
    fn degenerate_ranges_still_have_two_ticks() {
        for values in [
            vec![],
            vec![5.0],
            vec![0.0, 0.0],
            vec![f64::NAN, f64::INFINITY],
            vec![-1e308, 1e308],
            vec![1e-320],
        ] {
            for scale in [Scale::Linear, Scale::Log] {
                for format in [TickFormat::Plain, TickFormat::Bytes] {
                    let a = Axis::fit(values.clone(), scale, format, false);
                    assert!(a.ticks.len() >= 2, "{values:?} {scale:?}: {a:?}");
                    assert!(a.lo < a.hi, "{values:?} {scale:?}: {a:?}");
                }
            }
        }
    }

    #[test]
    fn categories_are_thinned_and_truncated() {
        let names: Vec<String> = (0..1000).map(|i| format!("cpu{i}")).collect();
        let a = Axis::categories(&names, false, 40);
        assert!(a.ticks.len() <= 40 && a.ticks.len() >= 20);
        assert_eq!(a.ticks[0].pos, 0.5);
        let long = Axis::categories(&["x".repeat(100)], true, 10);
        assert_eq!(long.ticks[0].label.chars().count(), 24);
    }
}
