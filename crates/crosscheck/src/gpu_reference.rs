//! The plain way to time a host ↔ GPU copy, written straight against the driver API
//! (perflab-cuda's table of entry points, none of gpuxfer's code): host memory allocated
//! as `bandwidthTest` would (malloc-like pageable pages, `cuMemAllocHost`, or a hugetlb
//! mapping registered with `cuMemHostRegister`), one stream, one event before and one
//! after `n` back-to-back copies, bytes over the elapsed time.

use std::ffi::c_void;
use std::ptr;

use perflab_cuda::api::{CuContext, CuDevicePtr, CuEvent, CuStream};
use perflab_cuda::{CudaError, Driver};

/// What one reference loop copies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Way {
    HtoD,
    DtoH,
}

/// Everything a reference loop holds, released in `Drop` whatever failed half way.
struct Held {
    d: &'static Driver,
    dev: i32,
    ctx: CuContext,
    dev_ptr: CuDevicePtr,
    /// (address, length, how it was made).
    host: Option<(*mut c_void, usize, HostMade)>,
    registered: bool,
    stream: CuStream,
    events: [CuEvent; 2],
}

#[derive(Clone, Copy, PartialEq)]
enum HostMade {
    Mmap,
    Driver,
}

impl Drop for Held {
    fn drop(&mut self) {
        let a = &self.d.api;
        // SAFETY: each handle is released once, only if it was made, in reverse order of
        // making; the stream is synchronized first so no copy is left on the memory.
        unsafe {
            if !self.stream.is_null() {
                (a.stream_synchronize)(self.stream);
                (a.stream_destroy)(self.stream);
            }
            for e in self.events {
                if !e.is_null() {
                    (a.event_destroy)(e);
                }
            }
            if let Some((p, len, made)) = self.host {
                if self.registered {
                    (a.mem_host_unregister)(p);
                }
                match made {
                    HostMade::Driver => {
                        (a.mem_free_host)(p);
                    }
                    HostMade::Mmap => {
                        libc::munmap(p, len);
                    }
                }
            }
            if self.dev_ptr != 0 {
                (a.mem_free)(self.dev_ptr);
            }
            if !self.ctx.is_null() {
                (a.primary_ctx_release)(self.dev);
            }
        }
    }
}

/// Maps `len` bytes with `flags` and `advice`, written once so every page is present.
fn map(len: usize, flags: libc::c_int, advice: Option<libc::c_int>) -> Result<*mut c_void, String> {
    // SAFETY: a fresh anonymous mapping.
    let p = unsafe {
        libc::mmap(
            ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | flags,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(format!("mmap: {}", std::io::Error::last_os_error()));
    }
    if let Some(adv) = advice {
        // SAFETY: advice on the mapping just made.
        unsafe { libc::madvise(p, len, adv) };
    }
    // SAFETY: writes within the mapping.
    unsafe { libc::memset(p, 1, len) };
    Ok(p)
}

/// Why a row of the GPU check has no figure. The check branches on it: a machine that
/// cannot give the host memory asked for leaves the row unmeasured, anything else fails.
#[derive(Debug, thiserror::Error)]
pub enum RowError {
    /// No free 2 MiB hugetlb pages for the host buffer (on either side).
    #[error("{0}")]
    NoHostMemory(String),
    #[error("{0}")]
    Failed(String),
}

impl From<String> for RowError {
    fn from(why: String) -> Self {
        RowError::Failed(why)
    }
}

impl RowError {
    /// A failed gpuxfer measurement, whose cause arrives only as the stored status text;
    /// this is the one place its words are read.
    pub fn of_measurement(why: String) -> Self {
        if why.contains("hugetlb") {
            RowError::NoHostMemory(why)
        } else {
            RowError::Failed(why)
        }
    }
}

/// MiB/s of `size`-byte copies in `way` with host memory `backing` (4k, thp, 2m,
/// pinned), `n` copies between two events, the loop made to last about `duration_s`.
pub fn mib_s(way: Way, backing: &str, size: u64, duration_s: f64) -> Result<f64, RowError> {
    let d = Driver::load().map_err(|e| e.to_string())?;
    let a = &d.api;
    let err = |e: CudaError| e.to_string();
    let len = size as usize;
    let mut h = Held {
        d,
        dev: 0,
        ctx: ptr::null_mut(),
        dev_ptr: 0,
        host: None,
        registered: false,
        stream: ptr::null_mut(),
        events: [ptr::null_mut(); 2],
    };
    // SAFETY (this block): every call gets pointers to locals or fields of `h` of the
    // types the driver API declares; `h` releases what was made.
    unsafe {
        d.check("cuDeviceGet", (a.device_get)(&mut h.dev, 0))
            .map_err(err)?;
        d.check(
            "cuDevicePrimaryCtxRetain",
            (a.primary_ctx_retain)(&mut h.ctx, h.dev),
        )
        .map_err(err)?;
        d.check("cuCtxSetCurrent", (a.ctx_set_current)(h.ctx))
            .map_err(err)?;
        d.check("cuMemAlloc_v2", (a.mem_alloc)(&mut h.dev_ptr, len))
            .map_err(err)?;
        host_memory(&mut h, backing, len)?;
        let host = h.host.map(|(p, _, _)| p).unwrap_or(ptr::null_mut());
        d.check("cuStreamCreate", (a.stream_create)(&mut h.stream, 1))
            .map_err(err)?;
        for e in &mut h.events {
            d.check("cuEventCreate", (a.event_create)(e, 0))
                .map_err(err)?;
        }
        let copy = |h: &Held| match way {
            Way::HtoD => d.check(
                "cuMemcpyHtoDAsync_v2",
                (a.memcpy_htod_async)(h.dev_ptr, host, len, h.stream),
            ),
            Way::DtoH => d.check(
                "cuMemcpyDtoHAsync_v2",
                (a.memcpy_dtoh_async)(host, h.dev_ptr, len, h.stream),
            ),
        };
        let timed = |h: &Held, n: u64| -> Result<f64, CudaError> {
            d.check("cuEventRecord", (a.event_record)(h.events[0], h.stream))?;
            for _ in 0..n {
                copy(h)?;
            }
            d.check("cuEventRecord", (a.event_record)(h.events[1], h.stream))?;
            d.check("cuEventSynchronize", (a.event_synchronize)(h.events[1]))?;
            let mut ms = 0f32;
            d.check(
                "cuEventElapsedTime",
                (a.event_elapsed_time)(&mut ms, h.events[0], h.events[1]),
            )?;
            Ok(f64::from(ms) / 1e3)
        };
        // Warm: the first copy pays for mapping the host pages into the driver.
        timed(&h, 1).map_err(err)?;
        let one = timed(&h, 1).map_err(err)?.max(1e-7);
        let n = (duration_s / one).clamp(1.0, 1e6) as u64;
        let secs = timed(&h, n).map_err(err)?;
        Ok(n as f64 * size as f64 / secs / (1u64 << 20) as f64)
    }
}

/// Host memory of `backing` for `len`-byte copies, kept in `h` so that it is released.
///
/// # Safety
///
/// `h.d` is a loaded driver with a current context; the pointers passed are locals or
/// fields of `h`, of the types the driver API declares.
unsafe fn host_memory(h: &mut Held, backing: &str, len: usize) -> Result<(), RowError> {
    let a = &h.d.api;
    let err = |e: CudaError| e.to_string();
    let two_m = 2usize << 20;
    let host_len = match backing {
        "thp" | "2m" => len.div_ceil(two_m) * two_m,
        _ => len,
    };
    match backing {
        "pinned" => {
            let mut p: *mut c_void = ptr::null_mut();
            h.d.check("cuMemAllocHost_v2", (a.mem_alloc_host)(&mut p, len))
                .map_err(err)?;
            h.host = Some((p, len, HostMade::Driver));
        }
        "4k" => {
            let p = map(host_len, 0, Some(libc::MADV_NOHUGEPAGE))?;
            h.host = Some((p, host_len, HostMade::Mmap));
        }
        "thp" => {
            let p = map(host_len, 0, Some(libc::MADV_HUGEPAGE))?;
            h.host = Some((p, host_len, HostMade::Mmap));
        }
        "2m" => {
            let p = map(host_len, libc::MAP_HUGETLB | libc::MAP_HUGE_2MB, None).map_err(|e| {
                RowError::NoHostMemory(format!("no 2 MiB hugetlb pages for the reference: {e}"))
            })?;
            h.host = Some((p, host_len, HostMade::Mmap));
            h.d.check(
                "cuMemHostRegister_v2",
                (a.mem_host_register)(p, host_len, 0),
            )
            .map_err(err)?;
            h.registered = true;
        }
        other => return Err(format!("the reference has no host memory {other:?}").into()),
    }
    Ok(())
}
