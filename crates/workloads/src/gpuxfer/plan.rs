//! A point's setup from its parameters, and the checks that can be made before anything
//! is allocated: the driver and device are there, and the buffers fit in its memory.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use perflab_core::{format_bytes, ParamSpec, Params, WorkloadError};
use perflab_cuda::{Driver, Gpu};

use super::host::HostKind;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    HtoD,
    DtoH,
    DtoD,
    Bidir,
}

impl Direction {
    pub const NAMES: &'static [&'static str] = &["h2d", "d2h", "d2d", "bidir"];

    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "h2d" => Direction::HtoD,
            "d2h" => Direction::DtoH,
            "d2d" => Direction::DtoD,
            "bidir" => Direction::Bidir,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    pub fn device_buffers(self) -> usize {
        match self {
            Direction::HtoD | Direction::DtoH => 1,
            Direction::DtoD | Direction::Bidir => 2,
        }
    }

    pub fn host_buffers(self) -> usize {
        match self {
            Direction::HtoD | Direction::DtoH => 1,
            Direction::DtoD => 0,
            Direction::Bidir => 2,
        }
    }
}

/// What one point measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Setup {
    pub direction: Direction,
    pub size: u64,
    pub host: HostKind,
    pub device: u32,
}

impl Setup {
    pub fn device_bytes(&self) -> u64 {
        self.size
            .saturating_mul(self.direction.device_buffers() as u64)
    }

    pub fn host_bytes(&self) -> u64 {
        self.host
            .bytes(self.size)
            .saturating_mul(self.direction.host_buffers() as u64)
    }
}

/// The parameters with every missing one at its default.
pub fn complete(params: &Params, specs: &[ParamSpec]) -> Params {
    let mut out = params.clone();
    for spec in specs {
        if out.get(spec.name).is_none() {
            if let Some(v) = spec.default.and_then(|d| spec.parse(d).ok()) {
                out.0.insert(spec.name.to_string(), v);
            }
        }
    }
    out
}

pub fn setup(params: &Params) -> Result<Setup, WorkloadError> {
    let bad = |what: &str, v: &str| WorkloadError::Failed(format!("gpuxfer: unknown {what} {v:?}"));
    let d = params.str("direction")?;
    let direction = Direction::from_name(d).ok_or_else(|| bad("direction", d))?;
    let b = params.str("backing")?;
    let host = HostKind::from_name(b).ok_or_else(|| bad("backing", b))?;
    let size = params.int("size")?;
    if size <= 0 {
        return Err(WorkloadError::Failed(format!(
            "gpuxfer: size {size} is not a buffer size"
        )));
    }
    Ok(Setup {
        direction,
        size: size as u64,
        host,
        device: params.int("device")?.max(0) as u32,
    })
}

/// The message for device buffers that do not fit: every amount in one form
/// ([`format_bytes`]), so `1M` never stands beside `100000000`.
pub fn too_big(s: &Setup, free: u64) -> String {
    format!(
        "gpuxfer: {} needs {} device buffer(s) of {} ({}), GPU {} has {} free",
        s.direction.name(),
        s.direction.device_buffers(),
        format_bytes(s.size),
        format_bytes(s.device_bytes()),
        s.device,
        format_bytes(free)
    )
}

/// Whether the driver loads, the device exists and the point's device buffers fit in its
/// free memory. The free memory is read once per device and process: opening a context
/// costs a real GPU a fraction of a second, and a study validates hundreds of points.
/// (Free memory at plan time: what another process allocates later is not foreseen; the
/// measurement then fails with the driver's out-of-memory error.)
pub fn check_device(s: &Setup) -> Result<(), String> {
    static FREE: OnceLock<Mutex<HashMap<u32, Result<u64, String>>>> = OnceLock::new();
    let free = {
        let mut cache = FREE
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        cache
            .entry(s.device)
            .or_insert_with(|| {
                let driver = Driver::load().map_err(|e| e.to_string())?;
                let gpu = Gpu::open(driver, s.device).map_err(|e| match e.code {
                    // CUDA_ERROR_INVALID_DEVICE
                    101 => format!("no CUDA device {} ({e})", s.device),
                    _ => e.to_string(),
                })?;
                let free = gpu
                    .memory()
                    .map(|(free, _)| free)
                    .map_err(|e| e.to_string());
                // Kept retained for the life of the process: the primary context is
                // destroyed when its last retain is released, and every measurement
                // would then create it again (100 ms or more on a real GPU).
                std::mem::forget(gpu);
                free
            })
            .clone()?
    };
    if s.device_bytes() > free {
        return Err(too_big(s, free));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The stand-in with CUDA_STANDIN_MEMORY=100000000 used to say "GPU 0 has 100000000
    /// free" beside "of 1M": every amount of the line is now written one way.
    #[test]
    fn a_refusal_writes_every_amount_the_same_way() {
        let s = Setup {
            direction: Direction::HtoD,
            size: 128 << 20,
            host: HostKind::Pinned,
            device: 0,
        };
        assert_eq!(
            too_big(&s, 100_000_000),
            "gpuxfer: h2d needs 1 device buffer(s) of 128M (128M), GPU 0 has 95.4M free"
        );
    }
}
