//! A threaded xfer measurement judged again from what the store keeps (its thread
//! records and metrics) gives the verdict the workload gave: the same validity and the
//! same reasons, word for word, as its note. This is what lets reports read the verdict
//! as data instead of parsing the note.

use std::collections::BTreeMap;

use perflab_core::note::Workers;
use perflab_core::{resolve, MeasureCtx, SysRoot, Workload};
use perflab_stats::parallel::{judge_stored, spans_from_records, Criteria};
use perflab_workloads::Xfer;

#[test]
fn a_stored_threaded_measurement_judges_again_to_its_note() {
    for placement in ["free", "spread"] {
        let given: BTreeMap<String, String> = [
            ("engine", "memcpy"),
            ("size", "64K"),
            ("threads_per_channel", "4"),
            ("duration", "0.05s"),
            ("placement", placement),
        ]
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
        let p = resolve("xfer", Xfer.info().params, &given).unwrap();
        let ctx = MeasureCtx::new(SysRoot::host(), Xfer.cpus(&p).unwrap());
        let out = Xfer.run(&p, &ctx).expect("xfer runs");
        // The runner stores these as the measurement's thread records.
        let threads = ctx.threads.take();
        let metric = |n: &str| out.metric(n).map(|m| m.value);
        let busy = metric("busy_measured").expect("busy_measured stored");
        let measured = (busy >= 0.5).then(|| metric("parallelism")).flatten();
        let again = judge_stored(
            &spans_from_records(&threads),
            &Criteria::default(),
            measured,
        );
        assert_eq!(
            f64::from(u8::from(again.sum_valid)),
            metric("sum_valid").unwrap()
        );
        assert_eq!(Some(again.parallelism), metric("parallelism"));
        let note = out
            .notes
            .iter()
            .find(|n| n.starts_with("summing per-thread bandwidths is"))
            .expect("verdict note");
        let from_note: Vec<&str> = note.split("; ").skip(1).collect();
        let words: Vec<String> = again
            .reasons
            .iter()
            .map(|r| r.text(Workers::Threads))
            .collect();
        assert_eq!(words, from_note, "{note}");
    }
}
