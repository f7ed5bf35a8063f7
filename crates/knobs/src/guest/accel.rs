//! Which accelerator the guest gets: KVM where this machine's /dev/kvm really runs a
//! vCPU, else TCG (QEMU's emulator).
//!
//! Opening /dev/kvm is not enough: under nested virtualisation it can open, create a VM
//! and then never return from the first `KVM_RUN` (QEMU hangs in its firmware). So the
//! probe runs one instruction, `hlt`, in a one-page real-mode guest, in a child process
//! that is killed when it does not report back within [`PROBE_TIME`].

use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use perflab_core::note::Note;
use perflab_sys::SysRoot;

pub use super::qemu_probe::probe_qemu;

/// How long the vCPU probe may take; a working KVM answers in milliseconds.
pub const PROBE_TIME: Duration = Duration::from_secs(3);

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Accel {
    Kvm,
    /// Emulation, and why KVM is not used.
    Tcg {
        why: String,
    },
}

impl Accel {
    pub fn name(&self) -> &'static str {
        match self {
            Accel::Kvm => "kvm",
            Accel::Tcg { .. } => "tcg",
        }
    }

    /// The note every result measured with it carries.
    pub fn note(&self) -> Option<String> {
        match self {
            Accel::Kvm => None,
            // Worded by core, which reads it back for the report.
            Accel::Tcg { why } => Some(Note::guest_emulated(why).text()),
        }
    }
}

/// Chooses the accelerator: `PERFLAB_GUEST_ACCEL=tcg|kvm` forces one; otherwise KVM when
/// the probe runs a vCPU and, given QEMU and a kernel, QEMU under KVM gets that kernel to
/// print within [`PROBE_TIME`] (a nested KVM can pass the first and hang in firmware).
/// The answer is kept for the process: each probe costs up to seconds.
pub fn choose(sys: &SysRoot, boot: Option<(&Path, &Path)>) -> Accel {
    static CHOSEN: Mutex<Option<Accel>> = Mutex::new(None);
    if sys.is_host() {
        if let Some(a) = CHOSEN.lock().ok().and_then(|c| c.clone()) {
            return a;
        }
    }
    let a = decide(sys, boot);
    if sys.is_host() && boot.is_some() {
        if let Ok(mut c) = CHOSEN.lock() {
            *c = Some(a.clone());
        }
    }
    a
}

fn decide(sys: &SysRoot, boot: Option<(&Path, &Path)>) -> Accel {
    match std::env::var("PERFLAB_GUEST_ACCEL").as_deref() {
        Ok("tcg") => {
            return Accel::Tcg {
                why: "PERFLAB_GUEST_ACCEL=tcg".into(),
            }
        }
        Ok("kvm") => return Accel::Kvm,
        _ => {}
    }
    if !sys.exists("dev/kvm") {
        return Accel::Tcg {
            why: "this machine has no /dev/kvm".into(),
        };
    }
    if !sys.is_host() {
        return Accel::Tcg {
            why: "the vCPU probe runs on the live machine only".into(),
        };
    }
    if let Err(why) = probe_vcpu() {
        return Accel::Tcg { why };
    }
    match boot.map(|(qemu, kernel)| probe_qemu(qemu, kernel)) {
        Some(Err(why)) => Accel::Tcg { why },
        _ => Accel::Kvm,
    }
}

/// Runs the one-instruction guest in a child; Ok when it halted.
#[cfg(target_arch = "x86_64")]
pub fn probe_vcpu() -> Result<(), String> {
    // Everything the child needs is made before fork: after fork in a threaded process
    // the child may only make system calls.
    // SAFETY: an anonymous private mapping of one page; the result is checked.
    let page = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            4096,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if page == libc::MAP_FAILED {
        return Err(format!("mmap: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: the page is mapped writable and one byte long is within it.
    unsafe { *(page as *mut u8) = 0xF4 }; // hlt
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: fork has no preconditions; the child calls only async-signal-safe functions.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        // A vCPU hung in KVM_RUN under a nested KVM never returns: the child must die with
        // perflab (SIGKILL included) rather than spin under init.
        // SAFETY: prctl and getppid are system calls; _exit runs no destructors.
        unsafe {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0
                || libc::getppid() != parent
            {
                libc::_exit(30);
            }
        }
        // SAFETY: in the child, only system calls on memory mapped before fork.
        let code = unsafe { kvm_child(page) };
        // SAFETY: _exit never returns and runs no destructors.
        unsafe { libc::_exit(code) };
    }
    // SAFETY: unmaps the page mapped above (the child has its own copy).
    unsafe { libc::munmap(page, 4096) };
    if pid < 0 {
        return Err(format!("fork: {}", std::io::Error::last_os_error()));
    }
    let started = Instant::now();
    loop {
        let mut status = 0;
        // SAFETY: waits for our own child without blocking.
        let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if r == pid {
            return child_verdict(status);
        }
        if r < 0 {
            return Err(format!("waitpid: {}", std::io::Error::last_os_error()));
        }
        if started.elapsed() > PROBE_TIME {
            // SAFETY: our own, not yet reaped child.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, &mut status, 0);
            }
            return Err(format!(
                "/dev/kvm opens but a vCPU did not run one instruction within {} s (nested \
                 virtualisation without working nested KVM?)",
                PROBE_TIME.as_secs()
            ));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[cfg(not(target_arch = "x86_64"))]
pub fn probe_vcpu() -> Result<(), String> {
    Err("the KVM vCPU probe is written for x86_64 only".into())
}

fn child_verdict(status: i32) -> Result<(), String> {
    if !libc::WIFEXITED(status) {
        return Err("the KVM probe died".into());
    }
    Err(match libc::WEXITSTATUS(status) {
        0 => return Ok(()),
        10 => "/dev/kvm cannot be opened (permission? add the user to group kvm)".into(),
        11 => "KVM_CREATE_VM failed".into(),
        12 => "KVM_SET_USER_MEMORY_REGION failed".into(),
        13 => "KVM_CREATE_VCPU failed".into(),
        14 => "the vCPU's run area cannot be mapped".into(),
        15 => "KVM_GET_SREGS/KVM_SET_SREGS failed".into(),
        16 => "KVM_SET_REGS failed".into(),
        17 => "KVM_RUN failed".into(),
        n => format!("a vCPU ran but stopped for another reason than hlt (probe code {n})"),
    })
}

#[cfg(target_arch = "x86_64")]
mod ioctl {
    pub const CREATE_VM: libc::c_ulong = 0xAE01;
    pub const GET_VCPU_MMAP_SIZE: libc::c_ulong = 0xAE04;
    pub const CREATE_VCPU: libc::c_ulong = 0xAE41;
    /// _IOW(0xAE, 0x46, struct kvm_userspace_memory_region), 32 bytes.
    pub const SET_USER_MEMORY_REGION: libc::c_ulong = 0x4020_AE46;
    /// _IOW(0xAE, 0x82, struct kvm_regs), 144 bytes.
    pub const SET_REGS: libc::c_ulong = 0x4090_AE82;
    /// _IOR(0xAE, 0x83, struct kvm_sregs), 312 bytes.
    pub const GET_SREGS: libc::c_ulong = 0x8138_AE83;
    /// _IOW(0xAE, 0x84, struct kvm_sregs).
    pub const SET_SREGS: libc::c_ulong = 0x4138_AE84;
    pub const RUN: libc::c_ulong = 0xAE80;
    pub const EXIT_HLT: u32 = 5;
}

/// The child's part: a VM with the page at guest-physical 0x1000, one vCPU in real mode
/// at cs:ip = 0:0x1000. Returns the exit code [`child_verdict`] reads.
///
/// # Safety
/// Only for a freshly forked child; `page` must be a mapped page.
#[cfg(target_arch = "x86_64")]
unsafe fn kvm_child(page: *mut libc::c_void) -> i32 {
    let kvm = libc::open(c"/dev/kvm".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC);
    if kvm < 0 {
        return 10;
    }
    let vm = libc::ioctl(kvm, ioctl::CREATE_VM, 0);
    if vm < 0 {
        return 11;
    }
    // struct kvm_userspace_memory_region { slot, flags, guest_phys_addr, memory_size,
    // userspace_addr }.
    let region: [u64; 4] = [0, 0x1000, 4096, page as u64];
    if libc::ioctl(vm, ioctl::SET_USER_MEMORY_REGION, region.as_ptr()) < 0 {
        return 12;
    }
    let vcpu = libc::ioctl(vm, ioctl::CREATE_VCPU, 0);
    if vcpu < 0 {
        return 13;
    }
    let size = libc::ioctl(kvm, ioctl::GET_VCPU_MMAP_SIZE, 0);
    if size <= 0 {
        return 14;
    }
    let run = libc::mmap(
        std::ptr::null_mut(),
        size as usize,
        libc::PROT_READ | libc::PROT_WRITE,
        libc::MAP_SHARED,
        vcpu,
        0,
    );
    if run == libc::MAP_FAILED {
        return 14;
    }
    let mut sregs = [0u8; 312];
    if libc::ioctl(vcpu, ioctl::GET_SREGS, sregs.as_mut_ptr()) < 0 {
        return 15;
    }
    // sregs starts with cs: { u64 base; u32 limit; u16 selector; … }.
    sregs[0..8].copy_from_slice(&0u64.to_ne_bytes());
    sregs[12..14].copy_from_slice(&0u16.to_ne_bytes());
    if libc::ioctl(vcpu, ioctl::SET_SREGS, sregs.as_ptr()) < 0 {
        return 15;
    }
    // kvm_regs: rax … r15 (16), rip, rflags.
    let mut regs = [0u64; 18];
    regs[16] = 0x1000;
    regs[17] = 0x2;
    if libc::ioctl(vcpu, ioctl::SET_REGS, regs.as_ptr()) < 0 {
        return 16;
    }
    if libc::ioctl(vcpu, ioctl::RUN, 0) < 0 {
        return 17;
    }
    // struct kvm_run { u8 request_interrupt_window, immediate_exit, padding[6]; u32
    // exit_reason; … }.
    let reason = *((run as *const u8).add(8) as *const u32);
    if reason == ioctl::EXIT_HLT {
        0
    } else {
        20 + (reason.min(200) as i32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tree_without_dev_kvm_gets_tcg_with_the_reason() {
        let dir = tempfile::tempdir().unwrap();
        let a = choose(&SysRoot::at(dir.path()), None);
        assert!(
            matches!(&a, Accel::Tcg { why } if why.contains("/dev/kvm")),
            "{a:?}"
        );
        assert!(a.note().unwrap().contains("NOT representative"));
        assert_eq!(Accel::Kvm.note(), None);
    }

    #[test]
    fn the_probe_answers_within_its_time_limit() {
        if !std::path::Path::new("/dev/kvm").exists() {
            perflab_testkit::skip("kvm probe", "no /dev/kvm on this machine");
            return;
        }
        let started = Instant::now();
        let verdict = probe_vcpu();
        assert!(
            started.elapsed() < PROBE_TIME + Duration::from_secs(5),
            "{verdict:?}"
        );
        eprintln!("kvm probe: {verdict:?}");
        if let Err(why) = verdict {
            assert!(!why.is_empty());
        }
    }
}
