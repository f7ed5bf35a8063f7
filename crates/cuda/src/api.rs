//! The driver entry points perflab calls, as a table of function pointers resolved by
//! name. The names are the exported symbols: since CUDA 3.2 several calls carry a `_v2`
//! suffix (64-bit sizes and device pointers) and the unsuffixed symbol is the old ABI,
//! so the suffix is part of the contract, not decoration.

use std::ffi::{c_char, c_int, c_uint, c_void};

/// `CUresult`: 0 is success.
pub type CuResult = c_int;
pub type CuDevice = c_int;
pub type CuContext = *mut c_void;
pub type CuStream = *mut c_void;
pub type CuEvent = *mut c_void;
pub type CuDevicePtr = u64;

pub const CUDA_SUCCESS: CuResult = 0;
/// `CUDA_ERROR_NO_DEVICE`: the driver loaded and found no GPU.
pub const CUDA_ERROR_NO_DEVICE: CuResult = 100;
/// `CU_STREAM_NON_BLOCKING`: the stream does not synchronize with the legacy stream 0.
pub const CU_STREAM_NON_BLOCKING: c_uint = 1;
/// `CU_EVENT_DEFAULT`: timing enabled, busy-wait synchronization.
pub const CU_EVENT_DEFAULT: c_uint = 0;

macro_rules! driver_api {
    ($( $(#[$doc:meta])* $field:ident = $sym:literal ( $($arg:ty),* ); )*) => {
        /// The resolved entry points.
        pub struct Api {
            $( $(#[$doc])* pub $field: unsafe extern "C" fn($($arg),*) -> CuResult, )*
        }

        /// Every symbol [`Api`] resolves, for the stand-in library's own check.
        pub const SYMBOLS: &[&str] = &[$($sym),*];

        impl Api {
            /// Resolves every entry point in `handle`.
            ///
            /// # Safety
            /// `handle` must come from `dlopen` of a library whose symbols of these names
            /// have the CUDA driver API's signatures.
            pub(crate) unsafe fn resolve(handle: *mut c_void) -> Result<Self, String> {
                Ok(Self {
                    $( $field: {
                        let p = symbol(handle, concat!($sym, "\0"))?;
                        // SAFETY: a non-null code address of a function with this
                        // signature (the caller's contract); fn pointers and data pointers
                        // have one size on every platform CUDA supports.
                        unsafe {
                            std::mem::transmute::<*mut c_void, unsafe extern "C" fn($($arg),*) -> CuResult>(p)
                        }
                    }, )*
                })
            }
        }
    };
}

/// `dlsym` of a NUL-terminated name, an error naming the symbol where it is missing.
unsafe fn symbol(handle: *mut c_void, name: &str) -> Result<*mut c_void, String> {
    // SAFETY: `name` is NUL-terminated (concat! above); `handle` is a live dlopen handle.
    let p = unsafe { libc::dlsym(handle, name.as_ptr().cast()) };
    if p.is_null() {
        return Err(format!(
            "the library has no {} (a CUDA driver older than 11, or not a CUDA driver)",
            name.trim_end_matches('\0')
        ));
    }
    Ok(p)
}

driver_api! {
    init = "cuInit"(c_uint);
    driver_get_version = "cuDriverGetVersion"(*mut c_int);
    get_error_name = "cuGetErrorName"(CuResult, *mut *const c_char);
    get_error_string = "cuGetErrorString"(CuResult, *mut *const c_char);
    device_get_count = "cuDeviceGetCount"(*mut c_int);
    device_get = "cuDeviceGet"(*mut CuDevice, c_int);
    device_get_name = "cuDeviceGetName"(*mut c_char, c_int, CuDevice);
    device_get_pci_bus_id = "cuDeviceGetPCIBusId"(*mut c_char, c_int, CuDevice);
    device_total_mem = "cuDeviceTotalMem_v2"(*mut usize, CuDevice);
    primary_ctx_retain = "cuDevicePrimaryCtxRetain"(*mut CuContext, CuDevice);
    primary_ctx_release = "cuDevicePrimaryCtxRelease_v2"(CuDevice);
    ctx_set_current = "cuCtxSetCurrent"(CuContext);
    mem_get_info = "cuMemGetInfo_v2"(*mut usize, *mut usize);
    mem_alloc = "cuMemAlloc_v2"(*mut CuDevicePtr, usize);
    mem_free = "cuMemFree_v2"(CuDevicePtr);
    mem_alloc_host = "cuMemAllocHost_v2"(*mut *mut c_void, usize);
    mem_free_host = "cuMemFreeHost"(*mut c_void);
    mem_host_register = "cuMemHostRegister_v2"(*mut c_void, usize, c_uint);
    mem_host_unregister = "cuMemHostUnregister"(*mut c_void);
    stream_create = "cuStreamCreate"(*mut CuStream, c_uint);
    stream_destroy = "cuStreamDestroy_v2"(CuStream);
    stream_synchronize = "cuStreamSynchronize"(CuStream);
    event_create = "cuEventCreate"(*mut CuEvent, c_uint);
    event_destroy = "cuEventDestroy_v2"(CuEvent);
    event_record = "cuEventRecord"(CuEvent, CuStream);
    event_synchronize = "cuEventSynchronize"(CuEvent);
    event_elapsed_time = "cuEventElapsedTime"(*mut f32, CuEvent, CuEvent);
    memcpy_htod_async = "cuMemcpyHtoDAsync_v2"(CuDevicePtr, *const c_void, usize, CuStream);
    memcpy_dtoh_async = "cuMemcpyDtoHAsync_v2"(*mut c_void, CuDevicePtr, usize, CuStream);
    memcpy_dtod_async = "cuMemcpyDtoDAsync_v2"(CuDevicePtr, CuDevicePtr, usize, CuStream);
}
