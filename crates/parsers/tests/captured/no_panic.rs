use super::*;
use proptest::prelude::*;

fn all(text: &str) {
    for p in perflab_parsers::registry() {
        let _ = (p.parse)(text);
        let _ = p.read(text);
    }
}

/// The check of impossible figures refuses nothing real tools printed: every captured
/// output that parses also reads.
#[test]
fn every_captured_output_passes_the_plausibility_check() {
    let mut checked = 0;
    for (tool, rel) in samples() {
        let Some(p) = perflab_parsers::by_name(&tool) else {
            continue;
        };
        if (p.parse)(&data(&rel)).is_ok() {
            p.read(&data(&rel))
                .unwrap_or_else(|e| panic!("{tool} on {rel}: {e}"));
            checked += 1;
        }
    }
    assert!(checked >= 20, "only {checked} samples checked");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn random_text_never_panics(text in "\\PC{0,400}") {
        all(&text);
    }

    #[test]
    fn random_lines_of_tool_vocabulary_never_panic(
        lines in proptest::collection::vec(
            prop_oneof![
                Just("T: 0 (1) P:80 I:1000 C:".to_string()),
                Just("# Histogram".to_string()),
                Just("# Min Latencies: 00005 00007".to_string()),
                Just("000001 000002\t000003".to_string()),
                Just(" Performance counter stats for 'x':".to_string()),
                Just("<not counted>,,cycles,0,0.00,,".to_string()),
                Just("sockperf: ---> percentile 99.000 =".to_string()),
                Just("sockperf: ====> avg-latency=".to_string()),
                Just("# Running 'mem/memcpy' benchmark:".to_string()),
                Just("# function 'x' (y)".to_string()),
                Just("dmatest: t: summary 1 tests, 0 failures".to_string()),
                Just("6,1,2,-;dmatest: t: summary 1 tests, 0 failures 1 iops 1 KB/s (0)".to_string()),
                Just("| a kb | b MiB/s |".to_string()),
                Just("| -- | -- |".to_string()),
                Just("{\"fio version\": 1, \"jobs\": [{}]}".to_string()),
                Just("{\"results\": [{\"command\": 1, \"mean\": null}]}".to_string()),
                Just("{\"start\": {}, \"intervals\": [], \"end\": {\"streams\": [{}]}}".to_string()),
                "\\PC{0,40}",
            ],
            0..12,
        )
    ) {
        all(&lines.join("\n"));
    }

    #[test]
    fn cut_and_spliced_samples_never_panic(which in 0usize..64, at in 0usize..20_000, junk in "\\PC{0,20}") {
        let samples = samples();
        let (_, rel) = &samples[which % samples.len()];
        let text = data(rel);
        let mut cut = at % (text.len() + 1);
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        all(&text[..cut]);
        all(&format!("{}{junk}{}", &text[..cut], &text[cut..]));
    }
}
