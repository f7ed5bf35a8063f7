//! Knobs on the live machine, where it allows them. A PM-QoS hold ends when its descriptor
//! closes, so its test cannot leave the machine changed even if it dies. The huge page
//! test resizes the host's 2M pool by 4 pages; killed between apply and restore, it would
//! leave them reserved (its journal is in a temporary directory nobody replays).

use perflab_knobs::{parse_setting, Journal};
use perflab_sys::SysRoot;

fn effective_latency(host: &SysRoot) -> i32 {
    // Reading the device gives the current limit as a binary s32.
    let bytes = host.read_bytes("dev/cpu_dma_latency").unwrap();
    i32::from_ne_bytes(bytes[..4].try_into().unwrap())
}

#[test]
fn pmqos_on_the_host_device_needs_root() {
    let host = SysRoot::host();
    let knob = parse_setting("pmqos=17").unwrap();
    if !perflab_testkit::have_root("holding a PM-QoS limit on /dev/cpu_dma_latency") {
        return;
    }
    if let Err(why) = knob.check(&host) {
        perflab_testkit::skip("cpu_dma_latency", why);
        return;
    }
    let before = effective_latency(&host);
    if before <= 17 {
        perflab_testkit::skip(
            "no-pmqos-limit",
            format!("a limit of {before} µs is held already, so 17 µs changes nothing"),
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let journal = Journal::open(dir.path().join("journal.json")).unwrap();
    let guard = knob.apply(&host, &journal).unwrap();
    assert_eq!(effective_latency(&host), 17);
    guard.restore().unwrap();
    assert_eq!(effective_latency(&host), before);
    assert!(journal.entries().unwrap().is_empty());
}

#[test]
fn hugepages_on_the_host_pool_are_given_back_exactly() {
    if !perflab_testkit::have_root("resizing the host's hugetlb pool") {
        return;
    }
    let host = SysRoot::host();
    let knob = parse_setting("hugepages=2M:4").unwrap();
    if let Err(why) = knob.check(&host) {
        perflab_testkit::skip("hugetlb-2M", why);
        return;
    }
    let rel = "sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages";
    let before = host.read_bytes(rel).unwrap();
    let pages: u64 = host.read_parsed(rel).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let journal = Journal::open(dir.path().join("journal.json")).unwrap();
    match knob.apply(&host, &journal) {
        Ok(guard) => {
            assert_eq!(host.read_parsed::<u64>(rel).unwrap(), pages + 4);
            assert_eq!(journal.entries().unwrap().len(), 1);
            guard.restore().unwrap();
        }
        // Fragmented memory is the host's state, not a fault of the knob, which must
        // still have given back what it got.
        Err(e @ perflab_knobs::KnobError::ShortAllocation { .. }) => perflab_testkit::skip(
            "unfragmented-memory",
            format!("the grown pool was not checked: {e}"),
        ),
        Err(e) => panic!("{e}"),
    }
    assert_eq!(host.read_bytes(rel).unwrap(), before);
    assert!(journal.entries().unwrap().is_empty());
}
