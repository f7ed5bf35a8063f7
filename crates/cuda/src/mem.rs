//! Memory the driver hands out or knows about: device buffers, host memory it allocated
//! pinned, and host memory perflab mapped and registered with it. Each is returned to
//! the driver when dropped.

use std::ffi::c_void;

use crate::api::CuDevicePtr;
use crate::error::CudaError;
use crate::gpu::Gpu;

/// Device memory, `cuMemAlloc`.
pub struct DeviceBuf<'g> {
    gpu: &'g Gpu,
    pub(crate) ptr: CuDevicePtr,
    len: usize,
}

impl<'g> DeviceBuf<'g> {
    pub fn alloc(gpu: &'g Gpu, len: usize) -> Result<Self, CudaError> {
        let mut ptr: CuDevicePtr = 0;
        // SAFETY: writes one device pointer.
        gpu.check("cuMemAlloc_v2", unsafe {
            (gpu.driver.api.mem_alloc)(&mut ptr, len)
        })?;
        Ok(Self { gpu, ptr, len })
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Drop for DeviceBuf<'_> {
    fn drop(&mut self) {
        // SAFETY: frees the allocation made in `alloc`; copies into it were synchronized
        // by their owners before the buffer went out of scope (streams synchronize on
        // drop).
        unsafe { (self.gpu.driver.api.mem_free)(self.ptr) };
    }
}

/// Host memory allocated by the driver, page-locked and mapped for the GPU
/// (`cuMemAllocHost`): what CUDA calls pinned memory.
pub struct PinnedHost<'g> {
    gpu: &'g Gpu,
    ptr: *mut u8,
    len: usize,
}

impl<'g> PinnedHost<'g> {
    pub fn alloc(gpu: &'g Gpu, len: usize) -> Result<Self, CudaError> {
        let mut ptr: *mut c_void = std::ptr::null_mut();
        // SAFETY: writes one host pointer.
        gpu.check("cuMemAllocHost_v2", unsafe {
            (gpu.driver.api.mem_alloc_host)(&mut ptr, len)
        })?;
        Ok(Self {
            gpu,
            ptr: ptr.cast(),
            len,
        })
    }

    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Drop for PinnedHost<'_> {
    fn drop(&mut self) {
        // SAFETY: frees the allocation made in `alloc`; no copy from or to it is pending.
        unsafe { (self.gpu.driver.api.mem_free_host)(self.ptr.cast()) };
    }
}

/// Host memory perflab mapped (a hugetlb buffer), page-locked and mapped for the GPU by
/// `cuMemHostRegister` for as long as this value lives.
pub struct Registered<'g> {
    gpu: &'g Gpu,
    ptr: *mut u8,
}

impl<'g> Registered<'g> {
    /// Registers `len` bytes at `ptr`.
    ///
    /// # Safety
    /// `ptr..ptr+len` must be a mapping of this process that outlives the returned value.
    pub unsafe fn register(gpu: &'g Gpu, ptr: *mut u8, len: usize) -> Result<Self, CudaError> {
        // SAFETY: the caller's contract; flags 0: registered for this context only.
        gpu.check("cuMemHostRegister_v2", unsafe {
            (gpu.driver.api.mem_host_register)(ptr.cast(), len, 0)
        })?;
        Ok(Self { gpu, ptr })
    }
}

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        // SAFETY: unregisters the range registered in `register`, still mapped (the
        // caller's contract).
        unsafe { (self.gpu.driver.api.mem_host_unregister)(self.ptr.cast()) };
    }
}
