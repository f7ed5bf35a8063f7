//! The CUDA driver API, loaded at run time.
//!
//! perflab must build, run and pass its tests on machines without CUDA, so nothing links
//! against `libcuda`: [`Driver::load`] opens `libcuda.so.1` (or the library named by
//! `PERFLAB_LIBCUDA`, such as the workspace's stand-in) with `dlopen` and resolves the
//! handful of entry points perflab calls ([`api`]). A hand-declared table instead of
//! cudarc: cudarc 0.19 pins a CUDA version by cargo feature and wraps far more than the
//! ~30 calls needed here, while this table is checked symbol by symbol against the
//! stand-in library in CI and loads against any driver of CUDA 11 or later.
//!
//! The handles ([`Gpu`], [`DeviceBuf`], [`PinnedHost`], [`Registered`], [`Stream`],
//! [`Event`]) release what they hold when dropped, so an error half way through a
//! measurement leaves nothing allocated on the device or registered on the host.

pub mod api;
mod driver;
mod error;
mod gpu;
mod mem;
pub mod pcie;
mod stream;

pub use driver::{Driver, LIBCUDA_VAR};
pub use error::{CudaError, LoadError};
pub use gpu::{devices, DeviceInfo, Gpu};
pub use mem::{DeviceBuf, PinnedHost, Registered};
pub use stream::{Event, Stream};
