//! Opening the driver library once per process and turning its return codes into errors.

use std::ffi::{c_char, CStr, CString};
use std::sync::OnceLock;

use crate::api::{Api, CuResult, CUDA_ERROR_NO_DEVICE, CUDA_SUCCESS};
use crate::error::{CudaError, LoadError};

/// The variable naming the driver library to load instead of `libcuda.so.1` (the
/// workspace's stand-in library in tests, or a driver outside the loader's path).
pub const LIBCUDA_VAR: &str = "PERFLAB_LIBCUDA";
const DEFAULT_LIBRARY: &str = "libcuda.so.1";

/// The loaded driver: its entry points and the library they came from.
pub struct Driver {
    pub api: Api,
    pub library: String,
    /// `cuDriverGetVersion`: 12040 is CUDA 12.4.
    pub version: i32,
}

static DRIVER: OnceLock<Result<Driver, LoadError>> = OnceLock::new();

impl Driver {
    /// The process's driver, loaded and initialised (`cuInit`) on first use. The library
    /// is never closed: the CUDA driver keeps threads and state that do not survive an
    /// unload, and a process loads it once anyway.
    pub fn load() -> Result<&'static Driver, LoadError> {
        DRIVER
            .get_or_init(|| {
                let library =
                    std::env::var(LIBCUDA_VAR).unwrap_or_else(|_| DEFAULT_LIBRARY.to_string());
                Self::open(&library)
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    fn open(library: &str) -> Result<Driver, LoadError> {
        let unusable = |reason: String| LoadError::Unusable {
            library: library.to_string(),
            reason,
        };
        let c = CString::new(library).map_err(|_| unusable("the name holds a NUL byte".into()))?;
        // SAFETY: a NUL-terminated path; RTLD_NOW resolves everything up front, so a broken
        // library fails here rather than at a later call.
        let handle = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if handle.is_null() {
            return Err(LoadError::Absent {
                library: library.to_string(),
                reason: dlerror(),
            });
        }
        // SAFETY: a live handle of a library that claims the CUDA driver's names.
        let api = unsafe { Api::resolve(handle) }.map_err(unusable)?;
        let mut driver = Driver {
            api,
            library: library.to_string(),
            version: 0,
        };
        // SAFETY: cuInit takes flags, which must be 0.
        let rc = unsafe { (driver.api.init)(0) };
        if rc == CUDA_ERROR_NO_DEVICE {
            return Err(LoadError::NoDevice(driver.error("cuInit", rc).to_string()));
        }
        driver
            .check("cuInit", rc)
            .map_err(|e| unusable(e.to_string()))?;
        let mut v = 0;
        // SAFETY: writes one int.
        let rc = unsafe { (driver.api.driver_get_version)(&mut v) };
        driver
            .check("cuDriverGetVersion", rc)
            .map_err(|e| unusable(e.to_string()))?;
        driver.version = v;
        Ok(driver)
    }

    /// `rc` as a result: the error carries the driver's name and text for the code.
    pub fn check(&self, call: &'static str, rc: CuResult) -> Result<(), CudaError> {
        if rc == CUDA_SUCCESS {
            Ok(())
        } else {
            Err(self.error(call, rc))
        }
    }

    fn error(&self, call: &'static str, rc: CuResult) -> CudaError {
        let text = |f: unsafe extern "C" fn(CuResult, *mut *const c_char) -> CuResult| {
            let mut p: *const c_char = std::ptr::null();
            // SAFETY: the driver stores a pointer to a static string, or fails.
            let ok = unsafe { f(rc, &mut p) } == CUDA_SUCCESS && !p.is_null();
            // SAFETY: a NUL-terminated static string of the driver.
            ok.then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
        };
        CudaError {
            call,
            code: rc,
            name: text(self.api.get_error_name).unwrap_or_else(|| "CUDA_ERROR_?".into()),
            text: text(self.api.get_error_string).unwrap_or_else(|| "unknown code".into()),
        }
    }

    /// "12.4" from 12040.
    pub fn version_text(&self) -> String {
        format!("{}.{}", self.version / 1000, (self.version % 1000) / 10)
    }
}

fn dlerror() -> String {
    // SAFETY: dlerror returns the thread's last loader error or null.
    let p = unsafe { libc::dlerror() };
    if p.is_null() {
        "unknown loader error".into()
    } else {
        // SAFETY: a NUL-terminated string owned by the loader.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}
