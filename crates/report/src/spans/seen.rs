//! Whether a span was measured at all on a path: a span that matched a handful of events
//! over thousands of round trips (10, 1 and 1 events for about 2,600 round trips on
//! `vm-tap-novhost`) describes some other wake-up of the machine, not the benchmark's
//! packets, and its p50 must not sit in a table as if it were one. And a span that cannot
//! match on a path says why, rather than a bare "none".

use perflab_core::note::{Note, NoteKind};
use perflab_core::record::MeasurementRecord;

use crate::spans::rows;

/// The fewest matched events per round trip (medians over the repetitions) for a span's
/// figures to be shown: every round trip receives at least one packet on this host, so a
/// span on the packet's way matches about once per round trip or more; one in ten leaves
/// room for events the tracer dropped under load.
pub const MIN_EVENTS_PER_ROUND_TRIP: f64 = 0.1;

/// The netrr metric that counts round trips in a measurement.
pub const ROUND_TRIPS: &str = "exchanges";

/// Too few matches: (events, round trips), medians over the repetitions.
pub fn too_few(recs: &[&MeasurementRecord], span: &str) -> Option<(f64, f64)> {
    let events = perflab_stats::median(rows::counts(recs, span))?;
    let trips = perflab_stats::median(
        recs.iter()
            .filter_map(|m| m.output.metric(ROUND_TRIPS).map(|x| x.value)),
    )?;
    (trips > 0.0 && events < MIN_EVENTS_PER_ROUND_TRIP * trips).then_some((events, trips))
}

/// What a path lacks that a span needs, for the netrx set's VM spans (the set's comment
/// says which need vhost-net and which KVM): `path` is the netpath (`vm-tap-novhost`),
/// `tcg` whether the guest was emulated.
pub fn why_absent(span: &str, path: &str, tcg: bool) -> Option<&'static str> {
    let name = span.rsplit('.').next().unwrap_or(span);
    let novhost = path.ends_with("novhost");
    match name {
        "vhost_wake" | "vhost_run" if novhost => Some("no vhost-net on this path"),
        "vhost_wake" | "vhost_run" => Some("no vhost worker woke: vhost-net not in use?"),
        "vhost_irq" | "vcpu_wake" if tcg => Some("TCG has no KVM interrupt injection"),
        "vhost_irq" | "vcpu_wake" if novhost => Some("no vhost-net on this path"),
        "guest_entry" if tcg => Some("TCG has no KVM exits or entries"),
        // The receiving task of a VM path runs inside the guest, which the host's
        // tracepoints do not see.
        "wake" | "sched" | "syscall" if path.starts_with("vm-") => {
            Some("the receiver runs in the guest, out of the host's sight")
        }
        _ => None,
    }
}

/// The seed's lettered spans (`(a)`–`(d)` of the built-in `netrx` set) that apply to this
/// path but that the monitor skipped, as (key, label, why): its note says the kernel lacks
/// their events (`trace: this kernel has no kvm:kvm_entry: span netrx.guest_entry is
/// skipped`). Without this the row would be missing, as if the seed had no such part.
pub fn skipped_seed_spans(
    recs: &[&MeasurementRecord],
    path: &str,
) -> Vec<(String, String, String)> {
    let Some(set) = crate::hints::span_set(SEED_SET) else {
        return Vec::new();
    };
    let facts = std::collections::BTreeMap::from([(NET_PATH_FACT.to_string(), path.to_string())]);
    // The trace monitor's skipped spans, read as values (span, missing tracepoints).
    let skipped: Vec<(String, Vec<String>)> = recs
        .iter()
        .flat_map(|m| m.output.notes.iter())
        .filter_map(|n| match Note::from_stored(n).kind {
            NoteKind::SpanSkipped { missing, span } => Some((span, missing)),
            _ => None,
        })
        .collect();
    let mut out = Vec::new();
    for s in &set.spans {
        if !is_lettered(&s.label) || s.when.as_ref().is_some_and(|w| !w.holds(&facts)) {
            continue;
        }
        let key = format!("{SEED_SET}.{}", s.name);
        let Some((_, missing)) = skipped.iter().find(|(span, _)| *span == key) else {
            continue;
        };
        let lacks = format!("this kernel has no {}", missing.join(", "));
        let kvm = missing.iter().any(|t| t.starts_with("kvm:"));
        let why = if kvm {
            format!("{lacks} (no kvm module: a TCG host, or KVM not loaded)")
        } else {
            lacks
        };
        out.push((key, s.label.clone(), why));
    }
    out
}

/// Sorts rows of the seed's set in its declaration order (the order of a packet's way);
/// rows of other sets keep their order, after them.
pub fn in_set_order<T>(rows: &mut [T], key: impl Fn(&T) -> &str) {
    let Some(set) = crate::hints::span_set(SEED_SET) else {
        return;
    };
    let rank = |k: &str| {
        set.spans
            .iter()
            .position(|s| format!("{SEED_SET}.{}", s.name) == k)
            .unwrap_or(usize::MAX)
    };
    rows.sort_by_key(|r| rank(key(r)));
}

/// The built-in set whose spans are seed 001's.
const SEED_SET: &str = "netrx";
/// The fact the netpath knob publishes, which the set's `when` reads.
const NET_PATH_FACT: &str = "net.path";

fn is_lettered(label: &str) -> bool {
    label
        .strip_prefix('(')
        .and_then(|l| l.split_once(')'))
        .is_some_and(|(x, _)| x.len() == 1 && x.chars().all(|c| c.is_ascii_lowercase()))
}

/// Whether the guest of these measurements ran under TCG: netrr passes on the netpath
/// knob's note, read back as a value.
pub fn under_tcg(recs: &[&MeasurementRecord]) -> bool {
    recs.iter().any(|m| {
        m.output
            .notes
            .iter()
            .any(|n| matches!(Note::from_stored(n).kind, NoteKind::GuestEmulated { .. }))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vm_spans_say_what_the_path_lacks() {
        assert_eq!(
            why_absent("netrx.vhost_wake", "vm-tap-novhost", true),
            Some("no vhost-net on this path")
        );
        assert_eq!(
            why_absent("netrx.guest_entry", "vm-tap", true),
            Some("TCG has no KVM exits or entries")
        );
        assert_eq!(why_absent("netrx.guest_entry", "vm-tap", false), None);
        assert_eq!(why_absent("netrx.raise", "vm-tap-novhost", true), None);
        assert_eq!(
            why_absent("netrx.sched", "vm-tap-novhost", true),
            Some("the receiver runs in the guest, out of the host's sight")
        );
        assert_eq!(why_absent("netrx.sched", "veth", false), None);
    }
}
