//! `pmqos=N`: holds a PM-QoS CPU latency limit of N µs. The kernel keeps the request while
//! `/dev/cpu_dma_latency` stays open and drops it when the descriptor closes, so even a
//! SIGKILL cannot leave it behind; the journal entry only lets `perflab restore` say what
//! was held.
//!
//! On a test tree the device is a regular file, which keeps what is written to it: there
//! the knob journals the file's bytes and writes them back, like any attribute, so that a
//! restore (or `perflab restore` after a kill) leaves the tree as it was.

use perflab_core::{Descriptor, Kind, Need, Needs, ParamKind, ParamSpec, ReportHints};
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileTypeExt;

use perflab_core::{Unavailable, WorkloadOutput};
use perflab_sys::probe::{self, Access};
use perflab_sys::SysRoot;

use crate::effect::ReadBack;
use crate::error::KnobError;
use crate::files::{journal_files, FileGuard};
use crate::journal::{EntryId, Journal};
use crate::knob::{EffectProbe, Knob, KnobGuard};

pub static DESCRIPTOR: Descriptor = Descriptor {
    kind: Kind::Knob,
    name: "pmqos",
    help: "hold a CPU latency limit through /dev/cpu_dma_latency: microseconds, an integer >= 0",
    params: &[ParamSpec {
        name: "value",
        role: perflab_core::ParamRole::Plain,
        help: "the latency limit in µs",
        kind: ParamKind::Int {
            min: 0,
            max: i32::MAX as i64,
        },
        default: None,
    }],
    needs: Needs::all(&[Need::Privileges, Need::PmQos]),
    report: ReportHints::None,
};

/// The PM-QoS device, relative to the root.
pub const PMQOS_PATH: &str = perflab_sys::probe::PM_QOS_DEVICE;

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

impl Knob for PmQosKnob {
    fn name(&self) -> String {
        format!("pmqos={}", self.latency_us)
    }

    fn check(&self, sys: &SysRoot) -> Result<(), Unavailable> {
        let path = sys.path(PMQOS_PATH);
        // The same probe `perflab doctor` reports.
        match probe::pm_qos(sys) {
            Access::Missing => Err(Unavailable::new(format!(
                "{} is missing: the kernel offers no CPU latency PM-QoS",
                path.display()
            ))),
            Access::ReadOnly => Err(Unavailable::new(format!(
                "{} is not writable: needs root",
                path.display()
            ))
            .with_hint("run perflab as root")),
            Access::Writable => Ok(()),
        }
    }

    fn targets(&self, _sys: &SysRoot) -> Vec<String> {
        vec![PMQOS_PATH.to_string()]
    }

    fn apply(&self, sys: &SysRoot, journal: &Journal) -> Result<Box<dyn KnobGuard>, KnobError> {
        let path = sys.path(PMQOS_PATH);
        // The kernel takes exactly four bytes as a binary s32 (cpu_latency_qos_write).
        let value = self.latency_us.to_ne_bytes();
        if is_regular_file(&path) {
            let mut files = journal_files(sys, journal, &self.name(), &[PMQOS_PATH])?;
            return match sys.write(PMQOS_PATH, &value) {
                Ok(()) => Ok(Box::new(PmQosGuard {
                    hold: Some(Hold::StandIn(files)),
                    limit_us: self.latency_us,
                })),
                Err(e) => Err(match files.restore_all() {
                    Ok(()) => e.into(),
                    Err(restore) => KnobError::ApplyAndRestore {
                        apply: Box::new(e.into()),
                        restore: Box::new(restore),
                    },
                }),
            };
        }
        let detail = format!("a CPU latency limit of {} µs", self.latency_us);
        let id = journal.save_hold(sys, PMQOS_PATH, &self.name(), &detail)?;
        let held = OpenOptions::new()
            .write(true)
            .open(&path)
            .and_then(|mut f| {
                f.write_all(&value)?;
                Ok(f)
            });
        match held {
            Ok(file) => Ok(Box::new(PmQosGuard {
                hold: Some(Hold::Device {
                    file,
                    journal: journal.clone(),
                    id,
                }),
                limit_us: self.latency_us,
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

/// A file that is not the kernel's device: a test tree's stand-in. Where the type cannot
/// be read, the device is assumed, and opening it says what is wrong.
fn is_regular_file(path: &std::path::Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file())
}

/// Keeps the device open, closing it ends the request; or, on a test tree, holds the
/// stand-in file's original.
#[derive(Debug)]
pub struct PmQosGuard {
    hold: Option<Hold>,
    limit_us: i32,
}

#[derive(Debug)]
enum Hold {
    Device {
        file: File,
        journal: Journal,
        id: EntryId,
    },
    StandIn(FileGuard),
}

impl PmQosGuard {
    fn release(&mut self) -> Result<(), KnobError> {
        match self.hold.take() {
            Some(Hold::Device { file, journal, id }) => {
                drop(file);
                journal.forget(id)
            }
            Some(Hold::StandIn(mut files)) => files.restore_all(),
            None => Ok(()),
        }
    }
}

impl KnobGuard for PmQosGuard {
    fn restore(mut self: Box<Self>) -> Result<(), KnobError> {
        self.release()
    }

    /// The hold is open (our descriptor still refers to the device) and the kernel's
    /// effective limit is at most ours, as it is while our request counts; on a test tree,
    /// the stand-in file still holds the value written.
    fn probe(&self, _sys: &SysRoot) -> Option<Box<dyn EffectProbe>> {
        let limit = self.limit_us;
        match self.hold.as_ref()? {
            Hold::Device { file, .. } => {
                let fd = file.as_raw_fd();
                Some(Box::new(ReadBack(
                    move |sys: &SysRoot, _: &WorkloadOutput| hold_counts(sys, fd, limit),
                )))
            }
            Hold::StandIn(_) => Some(Box::new(ReadBack(
                move |sys: &SysRoot, _: &WorkloadOutput| stand_in_holds(sys, limit),
            ))),
        }
    }
}

fn stand_in_holds(sys: &SysRoot, limit: i32) -> Result<(), String> {
    match sys.read_bytes(PMQOS_PATH) {
        Ok(b) if b == limit.to_ne_bytes() => Ok(()),
        Ok(b) => Err(format!(
            "{} reads {b:?}, not the {limit} µs written",
            sys.path(PMQOS_PATH).display()
        )),
        Err(e) => Err(format!("cannot read the limit back: {e}")),
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
