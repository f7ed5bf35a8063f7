//! `pmqos=N`: holds a PM-QoS CPU latency limit of N µs. The kernel keeps the request while
//! `/dev/cpu_dma_latency` stays open and drops it when the descriptor closes, so even a
//! SIGKILL cannot leave it behind; the journal entry only lets `perflab restore` say what
//! was held.

use std::ffi::CString;
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileTypeExt;

use perflab_core::{Unavailable, WorkloadOutput};
use perflab_sys::SysRoot;

use crate::effect::ReadBack;
use crate::error::KnobError;
use crate::journal::{EntryId, Journal};
use crate::knob::{EffectProbe, Knob, KnobGuard};

/// The PM-QoS device, relative to the root.
pub const PMQOS_PATH: &str = "dev/cpu_dma_latency";

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PmQosKnob {
    pub latency_us: i32,
}

impl PmQosKnob {
    pub fn parse(value: &str) -> Result<Self, KnobError> {
        match value.trim().parse::<i32>() {
            Ok(us) if us >= 0 => Ok(Self { latency_us: us }),
            _ => Err(KnobError::InvalidValue {
                knob: "pmqos".into(),
                value: value.into(),
                reason: format!(
                    "expected a latency in µs, an integer from 0 to {}",
                    i32::MAX
                ),
            }),
        }
    }
}

/// Asks the kernel whether the effective user may write the file, without opening it:
/// opening the PM-QoS device already registers a request.
fn may_write(sys: &SysRoot, rel: &str) -> bool {
    let Ok(path) = CString::new(sys.path(rel).as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: `path` is a valid NUL-terminated string for the duration of the call.
    unsafe { libc::faccessat(libc::AT_FDCWD, path.as_ptr(), libc::W_OK, libc::AT_EACCESS) == 0 }
}

impl Knob for PmQosKnob {
    fn name(&self) -> String {
        format!("pmqos={}", self.latency_us)
    }

    fn check(&self, sys: &SysRoot) -> Result<(), Unavailable> {
        let path = sys.path(PMQOS_PATH);
        if !sys.exists(PMQOS_PATH) {
            return Err(Unavailable::new(format!(
                "{} is missing: the kernel offers no CPU latency PM-QoS",
                path.display()
            )));
        }
        if !may_write(sys, PMQOS_PATH) {
            return Err(Unavailable::new(format!(
                "{} is not writable: needs root",
                path.display()
            ))
            .with_hint("run perflab as root"));
        }
        Ok(())
    }

    fn apply(&self, sys: &SysRoot, journal: &Journal) -> Result<Box<dyn KnobGuard>, KnobError> {
        let detail = format!("a CPU latency limit of {} µs", self.latency_us);
        let id = journal.save_hold(sys, PMQOS_PATH, &self.name(), &detail)?;
        let path = sys.path(PMQOS_PATH);
        // The kernel takes exactly four bytes as a binary s32 (cpu_latency_qos_write).
        let held = OpenOptions::new()
            .write(true)
            .open(&path)
            .and_then(|mut f| {
                f.write_all(&self.latency_us.to_ne_bytes())?;
                Ok(f)
            });
        match held {
            Ok(file) => Ok(Box::new(PmQosGuard {
                file: Some(file),
                limit_us: self.latency_us,
                journal: journal.clone(),
                id,
            })),
            Err(e) => {
                let apply = KnobError::io(path, e);
                Err(match journal.forget(id) {
                    Ok(()) => apply,
                    Err(restore) => KnobError::ApplyAndRestore {
                        apply: Box::new(apply),
                        restore: Box::new(restore),
                    },
                })
            }
        }
    }
}

/// Keeps the device open; closing it ends the request.
#[derive(Debug)]
pub struct PmQosGuard {
    file: Option<File>,
    limit_us: i32,
    journal: Journal,
    id: EntryId,
}

impl PmQosGuard {
    fn release(&mut self) -> Result<(), KnobError> {
        match self.file.take() {
            Some(file) => {
                drop(file);
                self.journal.forget(self.id)
            }
            None => Ok(()),
        }
    }
}

impl KnobGuard for PmQosGuard {
    fn restore(mut self: Box<Self>) -> Result<(), KnobError> {
        self.release()
    }

    /// The hold is open (our descriptor still refers to the device) and, on a real PM-QoS
    /// device, the kernel's effective limit is at most ours, as it is while our request
    /// counts.
    fn probe(&self, _sys: &SysRoot) -> Option<Box<dyn EffectProbe>> {
        let fd = self.file.as_ref()?.as_raw_fd();
        let limit = self.limit_us;
        Some(Box::new(ReadBack(
            move |sys: &SysRoot, _: &WorkloadOutput| hold_counts(sys, fd, limit),
        )))
    }
}

fn hold_counts(sys: &SysRoot, fd: i32, limit: i32) -> Result<(), String> {
    // SAFETY: F_GETFD only asks whether the descriptor is open; it changes nothing.
    if unsafe { libc::fcntl(fd, libc::F_GETFD) } == -1 {
        return Err("the descriptor holding the request was closed".into());
    }
    let path = sys.path(PMQOS_PATH);
    let is_device = std::fs::metadata(&path)
        .map(|m| m.file_type().is_char_device())
        .unwrap_or(false);
    if !is_device {
        // A test tree's plain file has no kernel behind it: the open hold is all there is.
        return Ok(());
    }
    let mut bytes = [0u8; 4];
    std::fs::File::open(&path)
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(|e| {
            format!(
                "cannot read the effective limit from {}: {e}",
                path.display()
            )
        })?;
    let effective = i32::from_ne_bytes(bytes);
    if effective > limit {
        return Err(format!(
            "the kernel's effective CPU latency limit is {effective} µs, above the {limit} µs \
             held: the request does not count"
        ));
    }
    Ok(())
}

impl Drop for PmQosGuard {
    fn drop(&mut self) {
        if let Err(e) = self.release() {
            eprintln!("perflab: {e}");
        }
    }
}
