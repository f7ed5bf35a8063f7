//! A minimal guest VM booted with QEMU, for the network paths that end in a virtual
//! machine (`netpath=vm-*`): its kernel, the initramfs perflab builds for it (busybox, the
//! virtio modules, and perflab itself answering as `perflab serve`), the accelerator, and
//! the QEMU process, which is journaled like every other object perflab creates.

pub mod accel;
pub mod cpio;
pub mod initramfs;
pub mod kernel;
pub mod ldd;
pub mod modules;
pub mod process;
pub mod qemu;
pub mod qemu_probe;
