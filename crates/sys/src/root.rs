//! [`SysRoot`], the one door to /proc, /sys and /dev. It is defined in `perflab_core`
//! because the plug-in contracts (`Workload`, `MeasureCtx`) carry it and core depends on
//! no other perflab crate; every kernel access still goes through it.

pub use perflab_core::sysroot::SysRoot;
