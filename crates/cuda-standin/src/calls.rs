//! The exported driver entry points, with the CUDA driver API's names and signatures
//! (`cuda.h`), and the stand-in's own controls.
// Every `pub unsafe extern "C" fn` here has the contract of the CUDA driver API call of
// its name: pointers are valid for what the call writes or reads.
#![allow(clippy::missing_safety_doc)]

use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::sync::Arc;

use crate::state::*;
use crate::streams::{EventState, Op, StreamHandle};

const DEVICE_NAME: &[u8] = b"perflab CUDA stand-in (host memory)\0";

/// Takes the state, checks initialisation and the injected failure.
macro_rules! enter {
    ($call:literal) => {{
        let mut st = state();
        if !st.initialized {
            return NOT_INITIALIZED;
        }
        if st.fails($call) {
            return UNKNOWN;
        }
        st
    }};
}

#[no_mangle]
pub unsafe extern "C" fn cuInit(flags: c_uint) -> c_int {
    let mut st = state();
    if flags != 0 {
        return INVALID_VALUE;
    }
    if !st.initialized {
        st.devices = env_u64("CUDA_STANDIN_DEVICES").unwrap_or(1) as i32;
        st.device_bytes = env_u64("CUDA_STANDIN_MEMORY").unwrap_or(4 << 30);
        if let Some(model) = std::env::var("CUDA_STANDIN_MIB_S")
            .ok()
            .and_then(|s| crate::clock::parse(&s))
        {
            crate::clock::set(Some(model));
        }
        if st.fail.is_none() {
            st.fail = std::env::var("CUDA_STANDIN_FAIL")
                .ok()
                .and_then(|s| parse_fail(&s));
        }
    }
    if st.fails("cuInit") {
        return UNKNOWN;
    }
    if st.devices == 0 {
        return NO_DEVICE;
    }
    st.initialized = true;
    SUCCESS
}

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok()?.trim().parse().ok()
}

#[no_mangle]
pub unsafe extern "C" fn cuDriverGetVersion(v: *mut c_int) -> c_int {
    *v = 12040;
    SUCCESS
}

unsafe fn error_part(code: c_int, out: *mut *const c_char, text: bool) -> c_int {
    match error_text(code) {
        Some((name, string)) => {
            *out = if text { string } else { name }.as_ptr().cast();
            SUCCESS
        }
        None => {
            *out = std::ptr::null();
            INVALID_VALUE
        }
    }
}

#[no_mangle]
pub unsafe extern "C" fn cuGetErrorName(code: c_int, out: *mut *const c_char) -> c_int {
    error_part(code, out, false)
}

#[no_mangle]
pub unsafe extern "C" fn cuGetErrorString(code: c_int, out: *mut *const c_char) -> c_int {
    error_part(code, out, true)
}

#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetCount(n: *mut c_int) -> c_int {
    let st = enter!("cuDeviceGetCount");
    *n = st.devices;
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn cuDeviceGet(dev: *mut c_int, ordinal: c_int) -> c_int {
    let st = enter!("cuDeviceGet");
    if ordinal < 0 || ordinal >= st.devices {
        return INVALID_DEVICE;
    }
    *dev = ordinal;
    SUCCESS
}

unsafe fn write_text(dst: *mut c_char, len: c_int, text: &[u8]) -> c_int {
    if len <= 0 {
        return INVALID_VALUE;
    }
    let n = text.len().min(len as usize);
    std::ptr::copy_nonoverlapping(text.as_ptr().cast(), dst, n);
    *dst.add(n - 1) = 0;
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetName(name: *mut c_char, len: c_int, _dev: c_int) -> c_int {
    let _st = enter!("cuDeviceGetName");
    write_text(name, len, DEVICE_NAME)
}

#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetPCIBusId(id: *mut c_char, len: c_int, _dev: c_int) -> c_int {
    let _st = enter!("cuDeviceGetPCIBusId");
    // No PCI function: perflab must say it found no link rather than invent one.
    write_text(id, len, b"stand-in\0")
}

#[no_mangle]
pub unsafe extern "C" fn cuDeviceTotalMem_v2(bytes: *mut usize, _dev: c_int) -> c_int {
    let st = enter!("cuDeviceTotalMem_v2");
    *bytes = st.device_bytes as usize;
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn cuDevicePrimaryCtxRetain(ctx: *mut *mut c_void, dev: c_int) -> c_int {
    let mut st = enter!("cuDevicePrimaryCtxRetain");
    if dev < 0 || dev >= st.devices {
        return INVALID_DEVICE;
    }
    st.retained += 1;
    *ctx = (0xc0_0000 + dev as usize) as *mut c_void;
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn cuDevicePrimaryCtxRelease_v2(_dev: c_int) -> c_int {
    let mut st = enter!("cuDevicePrimaryCtxRelease_v2");
    if st.retained == 0 {
        return INVALID_HANDLE;
    }
    st.retained -= 1;
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn cuCtxSetCurrent(_ctx: *mut c_void) -> c_int {
    let _st = enter!("cuCtxSetCurrent");
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn cuMemGetInfo_v2(free: *mut usize, total: *mut usize) -> c_int {
    let st = enter!("cuMemGetInfo_v2");
    *free = st.device_bytes.saturating_sub(st.allocated) as usize;
    *total = st.device_bytes as usize;
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn cuMemAlloc_v2(ptr: *mut u64, len: usize) -> c_int {
    let mut st = enter!("cuMemAlloc_v2");
    if len == 0 {
        return INVALID_VALUE;
    }
    if st.allocated + len as u64 > st.device_bytes {
        return OUT_OF_MEMORY;
    }
    let mem = vec![0u8; len].into_boxed_slice();
    let addr = mem.as_ptr() as u64;
    st.device.insert(addr, mem);
    st.allocated += len as u64;
    *ptr = addr;
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn cuMemFree_v2(ptr: u64) -> c_int {
    let mut st = enter!("cuMemFree_v2");
    match st.device.remove(&ptr) {
        Some(mem) => {
            st.allocated -= mem.len() as u64;
            SUCCESS
        }
        None => INVALID_VALUE,
    }
}

#[no_mangle]
pub unsafe extern "C" fn cuMemAllocHost_v2(ptr: *mut *mut c_void, len: usize) -> c_int {
    let mut st = enter!("cuMemAllocHost_v2");
    if len == 0 {
        return INVALID_VALUE;
    }
    let mut mem = vec![0u8; len].into_boxed_slice();
    *ptr = mem.as_mut_ptr().cast();
    st.host.insert(mem.as_ptr() as usize, mem);
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn cuMemFreeHost(ptr: *mut c_void) -> c_int {
    let mut st = enter!("cuMemFreeHost");
    match st.host.remove(&(ptr as usize)) {
        Some(_) => SUCCESS,
        None => INVALID_VALUE,
    }
}

#[no_mangle]
pub unsafe extern "C" fn cuMemHostRegister_v2(ptr: *mut c_void, len: usize, _f: c_uint) -> c_int {
    let mut st = enter!("cuMemHostRegister_v2");
    let start = ptr as usize;
    if len == 0 || ptr.is_null() {
        return INVALID_VALUE;
    }
    if st
        .registered
        .iter()
        .any(|(&s, &l)| start < s + l && s < start + len)
    {
        return ALREADY_REGISTERED;
    }
    st.registered.insert(start, len);
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn cuMemHostUnregister(ptr: *mut c_void) -> c_int {
    let mut st = enter!("cuMemHostUnregister");
    match st.registered.remove(&(ptr as usize)) {
        Some(_) => SUCCESS,
        None => NOT_REGISTERED,
    }
}

#[no_mangle]
pub unsafe extern "C" fn cuStreamCreate(stream: *mut *mut c_void, _flags: c_uint) -> c_int {
    let mut st = enter!("cuStreamCreate");
    let h = st.handle();
    st.streams.insert(h, StreamHandle::spawn());
    *stream = h as *mut c_void;
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn cuStreamDestroy_v2(stream: *mut c_void) -> c_int {
    let mut st = enter!("cuStreamDestroy_v2");
    match st.streams.remove(&(stream as usize)) {
        Some(s) => {
            drop(st);
            s.stop();
            SUCCESS
        }
        None => INVALID_HANDLE,
    }
}

#[no_mangle]
pub unsafe extern "C" fn cuStreamSynchronize(stream: *mut c_void) -> c_int {
    let st = enter!("cuStreamSynchronize");
    let Some(wait) = st.streams.get(&(stream as usize)).map(StreamHandle::waiter) else {
        return INVALID_HANDLE;
    };
    drop(st);
    wait();
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn cuEventCreate(event: *mut *mut c_void, _flags: c_uint) -> c_int {
    let mut st = enter!("cuEventCreate");
    let h = st.handle();
    st.events.insert(h, Arc::new(EventState::default()));
    *event = h as *mut c_void;
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn cuEventDestroy_v2(event: *mut c_void) -> c_int {
    let mut st = enter!("cuEventDestroy_v2");
    match st.events.remove(&(event as usize)) {
        Some(_) => SUCCESS,
        None => INVALID_HANDLE,
    }
}

#[no_mangle]
pub unsafe extern "C" fn cuEventRecord(event: *mut c_void, stream: *mut c_void) -> c_int {
    let st = enter!("cuEventRecord");
    let (Some(ev), Some(s)) = (
        st.events.get(&(event as usize)),
        st.streams.get(&(stream as usize)),
    ) else {
        return INVALID_HANDLE;
    };
    ev.mark_pending();
    s.push(Op::Record(Arc::clone(ev)));
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn cuEventSynchronize(event: *mut c_void) -> c_int {
    let st = enter!("cuEventSynchronize");
    let Some(ev) = st.events.get(&(event as usize)).cloned() else {
        return INVALID_HANDLE;
    };
    drop(st);
    ev.wait();
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn cuEventElapsedTime(
    ms: *mut f32,
    start: *mut c_void,
    end: *mut c_void,
) -> c_int {
    let st = enter!("cuEventElapsedTime");
    let (Some(a), Some(b)) = (
        st.events.get(&(start as usize)),
        st.events.get(&(end as usize)),
    ) else {
        return INVALID_HANDLE;
    };
    match (a.time(), b.time()) {
        (Ok(t0), Ok(t1)) => {
            *ms = ((t1 as f64 - t0 as f64) / 1e6) as f32;
            SUCCESS
        }
        // A pending event is not ready; one never recorded is an invalid handle, as in
        // the real driver.
        (Err(true), _) | (_, Err(true)) => NOT_READY,
        _ => INVALID_HANDLE,
    }
}

/// Queues a copy after checking its device side lies inside allocations.
unsafe fn copy(
    call: &'static str,
    dst: usize,
    src: usize,
    len: usize,
    device: &[(u64, usize)],
    stream: *mut c_void,
) -> c_int {
    let mut st = state();
    if !st.initialized {
        return NOT_INITIALIZED;
    }
    if st.fails(call) {
        return UNKNOWN;
    }
    if device.iter().any(|&(p, l)| !st.device_range(p, l)) {
        return INVALID_VALUE;
    }
    match st.streams.get(&(stream as usize)) {
        Some(s) => {
            s.push(Op::Copy { dst, src, len });
            SUCCESS
        }
        None => INVALID_HANDLE,
    }
}

#[no_mangle]
pub unsafe extern "C" fn cuMemcpyHtoDAsync_v2(
    dst: u64,
    src: *const c_void,
    len: usize,
    stream: *mut c_void,
) -> c_int {
    copy(
        "cuMemcpyHtoDAsync_v2",
        dst as usize,
        src as usize,
        len,
        &[(dst, len)],
        stream,
    )
}

#[no_mangle]
pub unsafe extern "C" fn cuMemcpyDtoHAsync_v2(
    dst: *mut c_void,
    src: u64,
    len: usize,
    stream: *mut c_void,
) -> c_int {
    copy(
        "cuMemcpyDtoHAsync_v2",
        dst as usize,
        src as usize,
        len,
        &[(src, len)],
        stream,
    )
}

#[no_mangle]
pub unsafe extern "C" fn cuMemcpyDtoDAsync_v2(
    dst: u64,
    src: u64,
    len: usize,
    stream: *mut c_void,
) -> c_int {
    copy(
        "cuMemcpyDtoDAsync_v2",
        dst as usize,
        src as usize,
        len,
        &[(dst, len), (src, len)],
        stream,
    )
}

/// Stand-in control: the call `name` fails after `after` successful calls; a null name
/// clears the failure.
#[no_mangle]
pub unsafe extern "C" fn standin_fail(name: *const c_char, after: u64) {
    let mut st = state();
    st.fail = if name.is_null() {
        None
    } else {
        Some((CStr::from_ptr(name).to_string_lossy().into_owned(), after))
    };
}

/// Stand-in control: events read a modelled clock on which copies move `mib_s` MiB/s,
/// with a factor uniform in 1 ± `jitter_pct`/100 drawn from `seed` every modelled
/// millisecond; `mib_s` <= 0 goes back to the wall clock.
#[no_mangle]
pub extern "C" fn standin_clock(mib_s: f64, jitter_pct: f64, seed: u64) {
    crate::clock::set(crate::clock::parse(&format!("{mib_s}:{jitter_pct}:{seed}")));
}

/// Stand-in control: objects alive now (retained contexts, device and host allocations,
/// registrations, streams, events).
#[no_mangle]
pub extern "C" fn standin_live() -> u64 {
    state().live()
}
