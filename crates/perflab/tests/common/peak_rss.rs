//! The peak resident memory of a child perflab, read from its own `VmHWM`.
//!
//! Not `wait4`'s `ru_maxrss`: Linux carries the high-water mark of the memory a process
//! had before `execve` into the new program's (`signal->maxrss`), and a child spawned from
//! this test binary starts as a copy of it (vfork or fork). With many tests in one binary
//! the harness grows past 100 MiB, so `ru_maxrss` read the harness, not perflab: a bound of
//! 80 MiB failed in a full run and held when the test ran alone.

use std::thread::JoinHandle;
use std::time::Duration;

/// Polls `/proc/PID/status` every 2 ms until the process is gone (its memory released at
/// exit); joins to the largest `VmHWM` seen, in MiB. `VmHWM` is itself a high-water mark,
/// so polling misses at most what grew in the last 2 ms before exit.
pub fn watch(pid: u32) -> JoinHandle<f64> {
    std::thread::spawn(move || {
        let path = format!("/proc/{pid}/status");
        let mut peak_kib = 0u64;
        while let Ok(status) = std::fs::read_to_string(&path) {
            let hwm = status
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok());
            match hwm {
                Some(kib) => peak_kib = peak_kib.max(kib),
                // A zombie has no VmHWM line: the program has exited.
                None if peak_kib > 0 => break,
                None => {}
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        peak_kib as f64 / 1024.0
    })
}
