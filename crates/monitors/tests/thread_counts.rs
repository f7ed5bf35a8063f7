//! Per-thread perf counts of core's `ThreadTracker`, as the counters monitor asks for
//! them (`count_per_thread`). They live here, not in core, because they need perf events
//! and report a visible skip where the machine refuses them (perflab-testkit).

use perflab_core::{monotonic_ns, ThreadEvent, ThreadTracker};
use perflab_sys::perf_event;

/// Two threads of one measurement, one sleeping in many short steps: each record
/// holds its own thread's context switches, not the other's.
#[test]
fn counts_each_thread_on_its_own() {
    let tracker = counting_switches();
    std::thread::scope(|s| {
        s.spawn(|| {
            let p = tracker.begin("sleeper", None);
            for _ in 0..200 {
                std::thread::sleep(std::time::Duration::from_micros(100));
            }
            p.finish(&tracker, None);
        });
        s.spawn(|| {
            let p = tracker.begin("spinner", None);
            let t = std::time::Instant::now();
            while t.elapsed() < std::time::Duration::from_millis(5) {
                std::hint::spin_loop();
            }
            p.finish(&tracker, None);
        });
    });
    let recs = tracker.take();
    let switches = |role: &str| {
        let r = recs.iter().find(|r| r.role == role).unwrap();
        if r.counters.is_empty() {
            return None; // perf events refused here (seccomp, paranoid 3)
        }
        assert_eq!(r.counters[0].event, "context-switches");
        r.counters[0].value
    };
    let (Some(sleeper), Some(spinner)) = (switches("sleeper"), switches("spinner")) else {
        perflab_testkit::skip("perf-events", "perf_event_open refused for software events");
        return;
    };
    assert!(sleeper >= 200.0, "{sleeper}");
    assert!(spinner < 100.0, "{spinner}");
}

/// A tracker whose threads count their own context switches (a software event, so
/// it needs no PMU).
fn counting_switches() -> ThreadTracker {
    let tracker = ThreadTracker::new();
    tracker.count_per_thread(vec![ThreadEvent {
        name: "context-switches",
        type_: perf_event::PERF_TYPE_SOFTWARE,
        config: 3,
        flags: 0,
    }]);
    tracker
}

/// A prepared probe counts nothing until started: the switches of the set-up before a
/// start barrier stay out of the thread's count.
#[test]
fn a_prepared_probe_counts_only_after_start() {
    let tracker = counting_switches();
    let sleeps = |n| {
        for _ in 0..n {
            std::thread::sleep(std::time::Duration::from_micros(100));
        }
    };
    let before = std::thread::scope(|s| {
        s.spawn(|| {
            let mut p = tracker.prepare("late", None);
            sleeps(300);
            let before = monotonic_ns();
            p.start();
            sleeps(20);
            p.finish(&tracker, None);
            before
        })
        .join()
        .unwrap()
    });
    let r = tracker.take().remove(0);
    assert!(
        r.start_ns >= before,
        "the record starts at start, not at prepare"
    );
    let Some(c) = r.counters.first() else {
        perflab_testkit::skip("perf-events", "perf_event_open refused for software events");
        return;
    };
    let v = c.value.expect("counted while started");
    assert!(
        (20.0..150.0).contains(&v),
        "{v} switches: the set-up was counted"
    );
}
