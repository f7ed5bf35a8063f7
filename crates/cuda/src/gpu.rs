//! One GPU's primary context, made current on the thread that measures, and what the
//! driver says about each device.

use std::ffi::{c_char, c_int};

use crate::api::{CuContext, CuDevice};
use crate::driver::Driver;
use crate::error::CudaError;

/// What the driver says about one device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceInfo {
    pub ordinal: u32,
    /// `cuDeviceGetName`: "NVIDIA H100 80GB HBM3".
    pub name: String,
    /// The sysfs name of its PCI function, `0000:01:00.0` (lower case, 4-digit domain).
    pub pci_address: Option<String>,
    pub total_bytes: u64,
}

/// The devices the driver sees.
pub fn devices(d: &Driver) -> Result<Vec<DeviceInfo>, CudaError> {
    let mut n: c_int = 0;
    // SAFETY: writes one int.
    d.check("cuDeviceGetCount", unsafe {
        (d.api.device_get_count)(&mut n)
    })?;
    (0..n.max(0))
        .map(|i| {
            let dev = device(d, i)?;
            let mut name = [0 as c_char; 256];
            // SAFETY: the driver writes at most `len` bytes, NUL included.
            d.check("cuDeviceGetName", unsafe {
                (d.api.device_get_name)(name.as_mut_ptr(), name.len() as c_int, dev)
            })?;
            let mut bus = [0 as c_char; 64];
            // SAFETY: as above.
            let rc =
                unsafe { (d.api.device_get_pci_bus_id)(bus.as_mut_ptr(), bus.len() as c_int, dev) };
            let pci_address = d
                .check("cuDeviceGetPCIBusId", rc)
                .ok()
                .and_then(|()| crate::pcie::normalize_address(&c_text(&bus)));
            let mut total = 0usize;
            // SAFETY: writes one size_t.
            d.check("cuDeviceTotalMem_v2", unsafe {
                (d.api.device_total_mem)(&mut total, dev)
            })?;
            Ok(DeviceInfo {
                ordinal: i as u32,
                name: c_text(&name),
                pci_address,
                total_bytes: total as u64,
            })
        })
        .collect()
}

fn device(d: &Driver, ordinal: c_int) -> Result<CuDevice, CudaError> {
    let mut dev: CuDevice = 0;
    // SAFETY: writes one device handle.
    d.check("cuDeviceGet", unsafe {
        (d.api.device_get)(&mut dev, ordinal)
    })?;
    Ok(dev)
}

fn c_text(buf: &[c_char]) -> String {
    // The driver NUL-terminates; a buffer without a NUL is read to its end.
    let bytes: Vec<u8> = buf
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// A GPU's primary context (the one the CUDA runtime uses too), retained for as long as
/// this value lives and current on the thread that opened it. Everything allocated
/// through it borrows it, so it is released last.
pub struct Gpu {
    pub driver: &'static Driver,
    pub ordinal: u32,
    dev: CuDevice,
    ctx: CuContext,
}

impl Gpu {
    /// Retains device `ordinal`'s primary context and makes it current on this thread.
    pub fn open(driver: &'static Driver, ordinal: u32) -> Result<Self, CudaError> {
        let dev = device(driver, ordinal as c_int)?;
        let mut ctx: CuContext = std::ptr::null_mut();
        // SAFETY: writes one context handle.
        driver.check("cuDevicePrimaryCtxRetain", unsafe {
            (driver.api.primary_ctx_retain)(&mut ctx, dev)
        })?;
        let gpu = Gpu {
            driver,
            ordinal,
            dev,
            ctx,
        };
        // SAFETY: a context retained above; `gpu` releases it if this fails.
        driver.check("cuCtxSetCurrent", unsafe {
            (driver.api.ctx_set_current)(gpu.ctx)
        })?;
        Ok(gpu)
    }

    /// (free, total) device memory, `cuMemGetInfo`.
    pub fn memory(&self) -> Result<(u64, u64), CudaError> {
        let (mut free, mut total) = (0usize, 0usize);
        // SAFETY: writes two size_t.
        self.check("cuMemGetInfo_v2", unsafe {
            (self.driver.api.mem_get_info)(&mut free, &mut total)
        })?;
        Ok((free as u64, total as u64))
    }

    pub(crate) fn check(&self, call: &'static str, rc: i32) -> Result<(), CudaError> {
        self.driver.check(call, rc)
    }
}

impl Drop for Gpu {
    fn drop(&mut self) {
        // SAFETY: detaches this thread from the context, then drops the retain taken in
        // `open`; every handle made through it borrowed `self` and is gone.
        unsafe {
            (self.driver.api.ctx_set_current)(std::ptr::null_mut());
            (self.driver.api.primary_ctx_release)(self.dev);
        }
    }
}
