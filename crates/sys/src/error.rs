//! The errors of kernel interfaces, defined in `perflab_core` beside [`SysRoot`](crate::SysRoot),
//! which returns them.

pub use perflab_core::sys_error::{ParseError, SysError};
