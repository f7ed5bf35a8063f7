//! A stand-in for the CUDA driver library (`libcuda.so.1`), so that perflab's GPU paths —
//! loading by name, every entry point's bookkeeping, asynchronous streams, event timing,
//! error handling — run in CI on machines without a GPU. Point perflab at it with
//! `PERFLAB_LIBCUDA=/path/to/libcuda_standin.so`.
//!
//! "Device" memory is host memory; copies are `memcpy` run by one worker thread per
//! stream, so two streams really copy at once, and events are timestamps taken by the
//! worker when it reaches them. Its bandwidths mean nothing about any GPU.
//!
//! Controls (none exists in the real driver):
//! - `CUDA_STANDIN_FAIL=cuName[:N]`: the call `cuName` (with or without its `_v2`) fails
//!   with CUDA_ERROR_UNKNOWN after N successful calls (default 0); read by `cuInit`, and
//!   settable at any time with the exported `standin_fail`.
//! - `CUDA_STANDIN_DEVICES=0`: `cuInit` reports CUDA_ERROR_NO_DEVICE, as a driver on a
//!   machine without a GPU does.
//! - `CUDA_STANDIN_MEMORY=bytes`: the device's size (default 4 GiB), so a copy larger than
//!   free memory fails as on a GPU.
//! - `CUDA_STANDIN_MIB_S=RATE[:JITTER_PCT[:SEED]]` (or `standin_clock`): events read a
//!   modelled clock on which copies move RATE MiB/s, with repeatable jitter, instead of
//!   the wall clock (see `clock`), so a method can be tested on figures known in advance.
//! - `standin_live()`: objects alive now (contexts retained, allocations, registrations,
//!   streams, events), for tests that check nothing leaks.

mod calls;
mod clock;
mod state;
mod streams;

pub use calls::*;
