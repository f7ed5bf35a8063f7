//! The rows a span set leaves per measurement (the report reads exactly these):
//! source `trace`, no CPU, key `{set}.{span}:{stat}` for `count`, `p50`, `p90`, `p99`,
//! `mean`, `max` (ns) and `unmatched` (and, measured in the kernel, `lost_starts`,
//! `starts`, `ends`), label = the span's label, in the set's order. A
//! span with no match has only `count` (0) and `unmatched`, so a report can say it was
//! empty rather than show zeros as durations.

use perflab_core::{TelemetryRow, Unit};

use super::matcher::SpanResult;

pub const SOURCE: &str = "trace";

pub fn rows(set: &str, spans: &[SpanResult]) -> Vec<TelemetryRow> {
    let mut out = Vec::new();
    for s in spans {
        let row = |stat: &str, value: f64, unit| {
            TelemetryRow::new(
                SOURCE,
                format!("{set}.{}:{stat}", s.name),
                s.label.as_str(),
                None,
                value,
                unit,
            )
        };
        out.push(row("count", s.count() as f64, Unit::Count));
        if s.count() > 0 {
            for (stat, q) in [("p50", 0.50), ("p90", 0.90), ("p99", 0.99)] {
                out.push(row(
                    stat,
                    s.hist.value_at_quantile(q) as f64,
                    Unit::Nanoseconds,
                ));
            }
            out.push(row("mean", s.mean_ns(), Unit::Nanoseconds));
            out.push(row("max", s.max_ns as f64, Unit::Nanoseconds));
        }
        out.push(row("unmatched", s.unmatched as f64, Unit::Count));
        if let Some(k) = s.kernel {
            out.push(row("lost_starts", k.lost_starts as f64, Unit::Count));
            out.push(row("starts", k.starts as f64, Unit::Count));
            out.push(row("ends", k.ends as f64, Unit::Count));
        }
    }
    out
}
