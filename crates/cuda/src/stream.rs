//! Streams and the events that time the copies on them.

use std::ffi::c_void;

use crate::api::{CuEvent, CuStream, CU_EVENT_DEFAULT, CU_STREAM_NON_BLOCKING};
use crate::error::CudaError;
use crate::gpu::Gpu;
use crate::mem::DeviceBuf;

/// A non-blocking stream: copies on two of them may run at once on two copy engines.
pub struct Stream<'g> {
    gpu: &'g Gpu,
    raw: CuStream,
}

impl<'g> Stream<'g> {
    pub fn new(gpu: &'g Gpu) -> Result<Self, CudaError> {
        let mut raw: CuStream = std::ptr::null_mut();
        // SAFETY: writes one stream handle.
        gpu.check("cuStreamCreate", unsafe {
            (gpu.driver.api.stream_create)(&mut raw, CU_STREAM_NON_BLOCKING)
        })?;
        Ok(Self { gpu, raw })
    }

    /// Queues a host → device copy of `len` bytes.
    ///
    /// # Safety
    /// `src` must be readable for `len` bytes until the stream is synchronized.
    pub unsafe fn copy_htod(
        &self,
        dst: &DeviceBuf<'_>,
        src: *const u8,
        len: usize,
    ) -> Result<(), CudaError> {
        assert!(len <= dst.len(), "copy longer than its device buffer");
        // SAFETY: the caller's contract for `src`; `dst` holds `len` bytes.
        self.gpu.check("cuMemcpyHtoDAsync_v2", unsafe {
            (self.gpu.driver.api.memcpy_htod_async)(dst.ptr, src.cast::<c_void>(), len, self.raw)
        })
    }

    /// Queues a device → host copy of `len` bytes.
    ///
    /// # Safety
    /// `dst` must be writable for `len` bytes, and not otherwise accessed, until the
    /// stream is synchronized.
    pub unsafe fn copy_dtoh(
        &self,
        dst: *mut u8,
        src: &DeviceBuf<'_>,
        len: usize,
    ) -> Result<(), CudaError> {
        assert!(len <= src.len(), "copy longer than its device buffer");
        // SAFETY: the caller's contract for `dst`; `src` holds `len` bytes.
        self.gpu.check("cuMemcpyDtoHAsync_v2", unsafe {
            (self.gpu.driver.api.memcpy_dtoh_async)(dst.cast::<c_void>(), src.ptr, len, self.raw)
        })
    }

    /// Queues a device → device copy of `len` bytes.
    ///
    /// # Safety
    /// Both buffers must outlive the copy: the stream must be synchronized (or dropped)
    /// before either is freed.
    pub unsafe fn copy_dtod(
        &self,
        dst: &DeviceBuf<'_>,
        src: &DeviceBuf<'_>,
        len: usize,
    ) -> Result<(), CudaError> {
        assert!(
            len <= src.len() && len <= dst.len(),
            "copy longer than its buffers"
        );
        // SAFETY: both device buffers hold `len` bytes and outlive the copy (the
        // caller's contract).
        self.gpu.check("cuMemcpyDtoDAsync_v2", unsafe {
            (self.gpu.driver.api.memcpy_dtod_async)(dst.ptr, src.ptr, len, self.raw)
        })
    }

    /// Queues `event`'s timestamp after everything queued so far.
    pub fn record(&self, event: &Event<'_>) -> Result<(), CudaError> {
        // SAFETY: both handles are live.
        self.gpu.check("cuEventRecord", unsafe {
            (self.gpu.driver.api.event_record)(event.raw, self.raw)
        })
    }

    pub fn synchronize(&self) -> Result<(), CudaError> {
        // SAFETY: a live stream.
        self.gpu.check("cuStreamSynchronize", unsafe {
            (self.gpu.driver.api.stream_synchronize)(self.raw)
        })
    }
}

impl Drop for Stream<'_> {
    fn drop(&mut self) {
        // SAFETY: waits for the stream's copies first, so no copy outlives the host or
        // device memory its caller is about to free; then destroys the handle.
        unsafe {
            (self.gpu.driver.api.stream_synchronize)(self.raw);
            (self.gpu.driver.api.stream_destroy)(self.raw);
        }
    }
}

/// A timing event.
pub struct Event<'g> {
    gpu: &'g Gpu,
    raw: CuEvent,
}

impl<'g> Event<'g> {
    pub fn new(gpu: &'g Gpu) -> Result<Self, CudaError> {
        let mut raw: CuEvent = std::ptr::null_mut();
        // SAFETY: writes one event handle.
        gpu.check("cuEventCreate", unsafe {
            (gpu.driver.api.event_create)(&mut raw, CU_EVENT_DEFAULT)
        })?;
        Ok(Self { gpu, raw })
    }

    /// Waits until the event's stream has reached it.
    pub fn synchronize(&self) -> Result<(), CudaError> {
        // SAFETY: a live event.
        self.gpu.check("cuEventSynchronize", unsafe {
            (self.gpu.driver.api.event_synchronize)(self.raw)
        })
    }

    /// Milliseconds from this event to `later` (negative when `later` came first), with
    /// the driver's resolution of about half a microsecond. Both must have completed.
    pub fn elapsed_ms(&self, later: &Event<'_>) -> Result<f32, CudaError> {
        let mut ms = 0f32;
        // SAFETY: writes one float; both events are live.
        self.gpu.check("cuEventElapsedTime", unsafe {
            (self.gpu.driver.api.event_elapsed_time)(&mut ms, self.raw, later.raw)
        })?;
        Ok(ms)
    }
}

impl Drop for Event<'_> {
    fn drop(&mut self) {
        // SAFETY: destroys the handle made in `new`; the driver defers the release of an
        // event still pending on a stream.
        unsafe { (self.gpu.driver.api.event_destroy)(self.raw) };
    }
}
