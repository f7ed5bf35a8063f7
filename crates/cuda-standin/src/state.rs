//! The stand-in's process-wide state: what is allocated, registered and retained, and
//! which call is to fail.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use crate::streams::{EventState, StreamHandle};

pub const SUCCESS: i32 = 0;
pub const INVALID_VALUE: i32 = 1;
pub const OUT_OF_MEMORY: i32 = 2;
pub const NOT_INITIALIZED: i32 = 3;
pub const NO_DEVICE: i32 = 100;
pub const INVALID_DEVICE: i32 = 101;
pub const INVALID_HANDLE: i32 = 400;
pub const NOT_READY: i32 = 600;
pub const ALREADY_REGISTERED: i32 = 712;
pub const NOT_REGISTERED: i32 = 713;
pub const UNKNOWN: i32 = 999;

/// The (name, text) pairs of `cuGetErrorName` and `cuGetErrorString`, NUL-terminated.
pub fn error_text(code: i32) -> Option<(&'static str, &'static str)> {
    Some(match code {
        SUCCESS => ("CUDA_SUCCESS\0", "no error\0"),
        INVALID_VALUE => ("CUDA_ERROR_INVALID_VALUE\0", "invalid argument\0"),
        OUT_OF_MEMORY => ("CUDA_ERROR_OUT_OF_MEMORY\0", "out of memory\0"),
        NOT_INITIALIZED => ("CUDA_ERROR_NOT_INITIALIZED\0", "initialization error\0"),
        NO_DEVICE => (
            "CUDA_ERROR_NO_DEVICE\0",
            "no CUDA-capable device is detected\0",
        ),
        INVALID_DEVICE => ("CUDA_ERROR_INVALID_DEVICE\0", "invalid device ordinal\0"),
        INVALID_HANDLE => ("CUDA_ERROR_INVALID_HANDLE\0", "invalid resource handle\0"),
        NOT_READY => ("CUDA_ERROR_NOT_READY\0", "device not ready\0"),
        ALREADY_REGISTERED => (
            "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED\0",
            "part or all of the requested memory range is already mapped\0",
        ),
        NOT_REGISTERED => (
            "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED\0",
            "pointer does not correspond to a registered memory region\0",
        ),
        UNKNOWN => (
            "CUDA_ERROR_UNKNOWN\0",
            "unknown error (injected by the stand-in library: CUDA_STANDIN_FAIL)\0",
        ),
        _ => return None,
    })
}

#[derive(Default)]
pub struct State {
    pub initialized: bool,
    pub devices: i32,
    pub device_bytes: u64,
    pub allocated: u64,
    /// Device allocations by address: the memory behind each "device pointer".
    pub device: HashMap<u64, Box<[u8]>>,
    pub host: HashMap<usize, Box<[u8]>>,
    /// Registered host ranges: start → length.
    pub registered: HashMap<usize, usize>,
    pub retained: u64,
    pub streams: HashMap<usize, StreamHandle>,
    pub events: HashMap<usize, Arc<EventState>>,
    pub next_handle: usize,
    /// (call, successful calls left before it fails).
    pub fail: Option<(String, u64)>,
}

impl State {
    pub fn handle(&mut self) -> usize {
        self.next_handle += 1;
        // Never null, and far from any real address.
        0x5ca1_0000 + self.next_handle * 16
    }

    /// Whether a device range lies inside one allocation.
    pub fn device_range(&self, ptr: u64, len: usize) -> bool {
        self.device.iter().any(|(&base, mem)| {
            ptr >= base && ptr.saturating_add(len as u64) <= base + mem.len() as u64
        })
    }

    pub fn live(&self) -> u64 {
        self.retained
            + (self.device.len() + self.host.len() + self.registered.len()) as u64
            + (self.streams.len() + self.events.len()) as u64
    }

    /// Counts a call against the injected failure; true when this call is to fail.
    pub fn fails(&mut self, call: &str) -> bool {
        match &mut self.fail {
            Some((name, left)) if name == call || name == call.trim_end_matches("_v2") => {
                if *left == 0 {
                    true
                } else {
                    *left -= 1;
                    false
                }
            }
            _ => false,
        }
    }
}

pub fn state() -> MutexGuard<'static, State> {
    static STATE: OnceLock<Mutex<State>> = OnceLock::new();
    STATE
        .get_or_init(Default::default)
        .lock()
        // A panic in a test's thread must not wedge every later call.
        .unwrap_or_else(|p| p.into_inner())
}

/// "cuName[:N]" → (name, N).
pub fn parse_fail(spec: &str) -> Option<(String, u64)> {
    let spec = spec.trim();
    if spec.is_empty() {
        return None;
    }
    Some(match spec.split_once(':') {
        Some((name, n)) => (name.to_string(), n.parse().unwrap_or(0)),
        None => (spec.to_string(), 0),
    })
}
