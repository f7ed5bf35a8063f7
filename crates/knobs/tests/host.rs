//! Knobs on the live machine, where it allows them. A PM-QoS hold ends when its descriptor
//! closes, so this test cannot leave the machine changed even if it dies.

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
    if let Err(why) = knob.check(&host) {
        eprintln!("SKIP pmqos_on_the_host_device_needs_root: {why}");
        return;
    }
    let before = effective_latency(&host);
    if before <= 17 {
        eprintln!(
            "SKIP pmqos_on_the_host_device_needs_root: a limit of {before} µs is held already"
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
