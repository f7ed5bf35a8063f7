//! The imported tool's own summary of each command (hyperfine's mean ± stddev, median,
//! min, max, user and system time over its runs), as it wrote it: stored with the run
//! (`spec.imported.summaries`) but shown nowhere, though user and system time exist only
//! there (issue 34 item 6). `show` prints it under the run's header; the JSON has it in
//! `run`.

use perflab_core::record::{MeasurementRecord, RunInfo};
use perflab_core::Metric;

use crate::fmt::value;

/// The summary's lines under a heading naming the tool, one per point and variant; none
/// for a run that stored no summary.
pub fn lines(info: &RunInfo, ms: &[MeasurementRecord]) -> Vec<String> {
    let Some(imported) = info.spec.imported.as_ref() else {
        return Vec::new();
    };
    if imported.summaries.is_empty() {
        return Vec::new();
    }
    let roles = crate::hints::param_roles(info);
    let points: std::collections::BTreeSet<u32> =
        imported.summaries.iter().map(|s| s.point).collect();
    let mut out = vec![format!(
        "{}'s own summary over each command's runs (as it wrote it; not perflab's \
         statistics):",
        imported.parser
    )];
    for s in &imported.summaries {
        // Several points (a parameter scan): each line names its own.
        let at = match points.len() > 1 {
            true => ms
                .iter()
                .find(|m| m.point == s.point)
                .map(|m| format!(" at {}", roles.describe(&m.params)))
                .unwrap_or_else(|| format!(" at point {}", s.point)),
            false => String::new(),
        };
        out.push(format!("  {}{at}: {}", s.variant, figures(&s.metrics)));
    }
    out
}

/// `mean 10.23 ms ± 0.41 ms, median 10.20 ms, …, user 0.51 ms, system 0.33 ms (10 runs)`.
fn figures(metrics: &[Metric]) -> String {
    let shown = |m: &Metric| format!("{} {}", value(m.value), m.unit.symbol());
    let name = |m: &Metric| {
        let unit = format!("_{}", m.unit.symbol());
        m.name.strip_suffix(&unit).unwrap_or(&m.name).to_string()
    };
    let find = |n: &str| metrics.iter().find(|m| name(m) == n);
    let mut parts = Vec::new();
    let mut runs = None;
    for m in metrics {
        match name(m).as_str() {
            "stddev" => {}
            "runs" => runs = Some(m.value),
            "mean" => parts.push(match find("stddev") {
                Some(sd) => format!("mean {} ± {}", shown(m), shown(sd)),
                None => format!("mean {}", shown(m)),
            }),
            n => parts.push(format!("{n} {}", shown(m))),
        }
    }
    let runs = runs.map_or(String::new(), |n| {
        format!(" ({} runs)", crate::fmt::count(n))
    });
    format!("{}{runs}", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use perflab_core::{Better, Metric, Unit};

    #[test]
    fn hyperfine_figures_read_as_it_prints_them() {
        let ms = |n: &str, v: f64| Metric::new(n, v, Unit::Milliseconds, Better::Lower);
        let metrics = vec![
            ms("mean_ms", 10.234),
            ms("stddev_ms", 0.41),
            ms("median_ms", 10.2),
            ms("min_ms", 9.8),
            ms("max_ms", 11.02),
            ms("user_ms", 0.51),
            ms("system_ms", 0.33),
            Metric::new("runs", 10.0, Unit::Count, Better::Neither),
        ];
        assert_eq!(
            super::figures(&metrics),
            "mean 10.23 ms ± 0.4100 ms, median 10.20 ms, min 9.80 ms, max 11.02 ms, user \
             0.5100 ms, system 0.3300 ms (10 runs)"
        );
    }
}
