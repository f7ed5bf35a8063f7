//! The stand-in CUDA driver library (crate `perflab-cuda-standin`) for tests of the GPU
//! paths: built on first use with `cargo build -p`, so `cargo test -p <one crate>` works
//! as well as `cargo test --workspace`, and controlled through its own exported calls.
//!
//! The test process builds it with the cargo that runs the tests (`$CARGO`) and reads the
//! library's path from cargo's JSON artifact messages, not from a guessed target
//! directory layout.

use std::ffi::{c_char, c_void, CString};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, MutexGuard, OnceLock};

/// The stand-in library's path, built once per test process. Panics (failing the test)
/// when it cannot be built: the library is part of the workspace, so that is a broken
/// build, not a missing prerequisite.
pub fn standin_library() -> PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(build).clone()
}

fn build() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .current_dir(&root)
        .args([
            "build",
            "--quiet",
            "-p",
            "perflab-cuda-standin",
            "--message-format=json",
        ])
        .output()
        .unwrap_or_else(|e| panic!("cannot run cargo to build the CUDA stand-in: {e}"));
    assert!(
        out.status.success(),
        "cargo build -p perflab-cuda-standin failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    // One artifact line names the library among its "filenames".
    let path = text
        .lines()
        .filter(|l| l.contains("\"compiler-artifact\""))
        .flat_map(|l| l.split('"'))
        .find(|s| s.ends_with("libcuda_standin.so"))
        .unwrap_or_else(|| panic!("cargo named no libcuda_standin.so in: {text}"));
    PathBuf::from(path)
}

/// The stand-in, loaded into this process (the same copy perflab's driver loader gets
/// when `PERFLAB_LIBCUDA` names it), with perflab pointed at it. Holding it serializes
/// the tests of one process that use it: the injected failure and the object counts are
/// process-wide.
pub struct Standin {
    handle: *mut c_void,
    _serial: MutexGuard<'static, ()>,
}

impl Standin {
    /// Sets `PERFLAB_LIBCUDA` to the stand-in, loads it and takes the process's
    /// stand-in lock. Any failure injected by an earlier test is cleared.
    pub fn take() -> Self {
        static SERIAL: Mutex<()> = Mutex::new(());
        let guard = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
        let path = standin_library();
        // Every test sets the same value, under the lock.
        std::env::set_var("PERFLAB_LIBCUDA", &path);
        let c = CString::new(path.to_string_lossy().as_bytes()).expect("path without NUL");
        // SAFETY: loads a library of this workspace; the handle is never closed.
        let handle = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        assert!(!handle.is_null(), "cannot load {}", path.display());
        let s = Standin {
            handle,
            _serial: guard,
        };
        s.clear_failure();
        s.clock(0.0, 0.0, 0);
        s
    }

    fn sym(&self, name: &str) -> *mut c_void {
        let c = CString::new(name).expect("symbol without NUL");
        // SAFETY: a live handle and a NUL-terminated name.
        let p = unsafe { libc::dlsym(self.handle, c.as_ptr()) };
        assert!(!p.is_null(), "the stand-in exports no {name}");
        p
    }

    /// Makes the driver call `call` fail after `after` successful calls.
    pub fn fail(&self, call: &str, after: u64) {
        let c = CString::new(call).expect("call without NUL");
        // SAFETY: the stand-in's `standin_fail(const char*, uint64_t)`.
        let f: unsafe extern "C" fn(*const c_char, u64) =
            unsafe { std::mem::transmute(self.sym("standin_fail")) };
        // SAFETY: a NUL-terminated name the stand-in copies.
        unsafe { f(c.as_ptr(), after) };
    }

    pub fn clear_failure(&self) {
        // SAFETY: as in `fail`; a null name clears.
        let f: unsafe extern "C" fn(*const c_char, u64) =
            unsafe { std::mem::transmute(self.sym("standin_fail")) };
        // SAFETY: null is the documented "clear".
        unsafe { f(std::ptr::null(), 0) };
    }

    /// Events read a modelled clock on which copies move `mib_s` MiB/s, with a factor
    /// uniform in 1 ± `jitter_pct`/100 drawn from `seed` every modelled millisecond, so a
    /// test knows the figures in advance; `mib_s` 0 goes back to the wall clock. Taking the
    /// stand-in goes back to the wall clock too.
    pub fn clock(&self, mib_s: f64, jitter_pct: f64, seed: u64) {
        // SAFETY: the stand-in's `standin_clock(double, double, uint64_t)`.
        let f: extern "C" fn(f64, f64, u64) =
            unsafe { std::mem::transmute(self.sym("standin_clock")) };
        f(mib_s, jitter_pct, seed);
    }

    /// Objects alive in the stand-in: contexts retained, allocations, registrations,
    /// streams, events.
    pub fn live(&self) -> u64 {
        // SAFETY: the stand-in's `uint64_t standin_live(void)`.
        let f: extern "C" fn() -> u64 = unsafe { std::mem::transmute(self.sym("standin_live")) };
        f()
    }
}

impl Drop for Standin {
    fn drop(&mut self) {
        self.clear_failure();
        self.clock(0.0, 0.0, 0);
    }
}
