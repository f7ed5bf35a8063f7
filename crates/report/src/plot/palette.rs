//! Colours: a categorical palette for curves, series and CPUs, and the diverging scale of
//! heat maps.

/// Tableau 10: distinguishable, and still readable in grey print.
const CATEGORICAL: [&str; 10] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#bab0ac",
];

/// Fill of missing heat-map cells and of segments on an unknown CPU.
pub(crate) const MISSING: &str = "#d0d0d0";

/// The colour of the i-th curve or series; past ten, colours repeat and `dash` tells
/// curves apart.
pub(crate) fn series(i: usize) -> &'static str {
    CATEGORICAL[i % CATEGORICAL.len()]
}

/// A dash pattern for the i-th curve: solid for the first ten, dashed for the next ten…
pub(crate) fn dash(i: usize) -> Option<&'static str> {
    match (i / CATEGORICAL.len()) % 3 {
        0 => None,
        1 => Some("6 3"),
        _ => Some("2 2"),
    }
}

/// A colour per CPU number that does not depend on which other CPUs a chart shows, so
/// CPU 5 looks the same in every timeline of a report.
pub(crate) fn cpu(cpu: u32) -> String {
    if let Some(c) = CATEGORICAL.get(cpu as usize) {
        return (*c).to_string();
    }
    // The golden angle spreads hues of neighbouring numbers far apart.
    let hue = (f64::from(cpu) * 137.507_764).rem_euclid(360.0);
    let lightness = 40 + (cpu % 3) * 10;
    format!("hsl({hue:.0},60%,{lightness}%)")
}

/// Diverging blue–white–red: `t` in −1..1, negative blue, positive red.
pub(crate) fn diverging(t: f64) -> String {
    const BLUE: [f64; 3] = [33.0, 102.0, 172.0];
    const WHITE: [f64; 3] = [247.0, 247.0, 247.0];
    const RED: [f64; 3] = [178.0, 24.0, 43.0];
    let t = if t.is_finite() {
        t.clamp(-1.0, 1.0)
    } else {
        0.0
    };
    let (end, f) = if t < 0.0 { (BLUE, -t) } else { (RED, t) };
    let c: Vec<u8> = (0..3)
        .map(|k| (WHITE[k] + (end[k] - WHITE[k]) * f).round() as u8)
        .collect();
    format!("#{:02x}{:02x}{:02x}", c[0], c[1], c[2])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diverging_ends_and_centre() {
        assert_eq!(diverging(-1.0), "#2166ac");
        assert_eq!(diverging(0.0), "#f7f7f7");
        assert_eq!(diverging(1.0), "#b2182b");
        assert_eq!(diverging(f64::NAN), "#f7f7f7");
        assert_eq!(diverging(7.0), "#b2182b");
    }

    #[test]
    fn cpu_colours_are_stable_and_distinct_for_neighbours() {
        assert_eq!(cpu(3), cpu(3));
        assert_ne!(cpu(11), cpu(12));
        assert_eq!(series(0), cpu(0));
    }
}
