//! `crosscheck gpu`'s method on the stand-in driver with a modelled clock
//! (`Standin::clock`): copies whose figures are known in advance, steady or noisy, so the
//! method itself is what is tested. No measured time is compared: the stand-in's modelled
//! clock, not the machine, sets every figure.

use perflab_crosscheck::gpu::row;
use perflab_crosscheck::gpu_pairs::{self, Judgement};
use perflab_crosscheck::gpu_reference::Way;
use perflab_crosscheck::lab_side::LabSide;
use perflab_testkit::cuda::Standin;

#[test]
fn steady_copies_agree_within_the_tolerance_at_the_first_look() {
    let s = Standin::take();
    s.clock(8000.0, 0.0, 1);
    let mut lab = LabSide::new().expect("scratch store");
    for backing in ["pinned", "4k"] {
        let r = row(&mut lab, (Way::HtoD, "h2d"), backing, 1 << 20, 0.004, 3.0)
            .unwrap_or_else(|e| panic!("{backing}: {e}"));
        let (lo, hi) = r.estimate.ci;
        assert_eq!(r.judgement, Judgement::Within, "{backing}: {r:?}");
        assert!(
            hi - lo < 1e-3 && (r.estimate.median - 1.0).abs() < 1e-3,
            "{r:?}"
        );
        // Both sides see the modelled 8000 MiB/s.
        assert!((r.reference_mib_s - 8000.0).abs() < 1.0, "{r:?}");
        assert!((r.perflab_mib_s - 8000.0).abs() < 1.0, "{r:?}");
        assert_eq!(r.estimate.pairs, gpu_pairs::plan(backing).0, "{backing}");
    }
}

/// ±45 % jitter drawn every modelled millisecond, measurements of 1 ms: each pair's ratio
/// is off by tens of percent either way, as the H100's pageable reference loop was. One
/// ratio of two medians would land inside or outside ±3 % by luck; the interval of the
/// per-pair ratios says the pairs cannot tell, after the most pairs the plan allows.
#[test]
fn noisy_copies_leave_the_row_undecided_after_more_pairs_instead_of_a_false_verdict() {
    let s = Standin::take();
    s.clock(8000.0, 45.0, 7);
    let mut lab = LabSide::new().expect("scratch store");
    let r = row(&mut lab, (Way::DtoH, "d2h"), "thp", 1 << 20, 0.001, 3.0).unwrap();
    let (lo, hi) = r.estimate.ci;
    assert!(lo < 0.97 && hi > 1.03, "{r:?}");
    assert_eq!(r.judgement, Judgement::Undecided, "{r:?}");
    assert_eq!(r.estimate.pairs, gpu_pairs::PAGEABLE.1, "{r:?}");
}
