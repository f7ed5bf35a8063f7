//! What the journal holds: its entries (what a perflab process changed and how to undo
//! it) and the file's format, with the parser that checks it. No I/O here: the file is
//! read and written by [`super::file`], and claimed targets by the handle in
//! [`super`].

use std::path::PathBuf;

use perflab_sys::SysRoot;
use serde::{Deserialize, Serialize};

use crate::owner::Owner;

/// The journal format this perflab writes and understands.
pub const JOURNAL_VERSION: u32 = 1;

/// Identifies one entry within its journal. Ids only grow, so their order is the order
/// of recording, which a replay reverses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct EntryId(pub u64);

impl std::fmt::Display for EntryId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "#{}", self.0)
    }
}

/// What restoring a file writes back: a JSON string when it is UTF-8 (as sysfs values are,
/// and readable by a person), else an array of byte values. For most files these are the
/// exact original bytes; for an attribute that reads differently from how it is written
/// (a choice list such as `always [madvise] never`) it is the value in the written form
/// (`madvise`), since the kernel refuses the form it shows.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Original {
    Text(String),
    Bytes(Vec<u8>),
}

impl Original {
    pub fn from_bytes(bytes: Vec<u8>) -> Self {
        match String::from_utf8(bytes) {
            Ok(text) => Original::Text(text),
            Err(e) => Original::Bytes(e.into_bytes()),
        }
    }

    pub fn as_bytes(&self) -> &[u8] {
        match self {
            Original::Text(t) => t.as_bytes(),
            Original::Bytes(b) => b,
        }
    }
}

/// What undoing an entry takes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Action {
    /// Write the original bytes back to the file.
    Write { original: Original },
    /// A request the kernel holds only while a file descriptor is open (PM-QoS): it ends
    /// with its owner, so there is nothing to write back. Recorded so that `perflab restore`
    /// can say what was held.
    Hold { detail: String },
    /// Something perflab created (a network namespace, a link, an OVS bridge): undoing it
    /// removes it. Recorded before the object is created, so a kill in between leaves an
    /// entry whose removal finds nothing, never an object nobody knows about.
    Remove { object: Created },
}

/// An object perflab creates and removes again, by the name it has on the machine.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Created {
    /// A named network namespace (`/run/netns/<name>`).
    Netns { name: String },
    /// A network interface, in a named namespace or (`None`) in the host's.
    Link { netns: Option<String>, name: String },
    /// An Open vSwitch bridge, kept in ovsdb until deleted.
    OvsBridge { name: String },
    /// A process perflab started and stops again (a guest's QEMU, the KVM probe's). The
    /// start time and command name tell it from a later process that got its pid: only
    /// the one started is stopped.
    Process {
        pid: u32,
        start_ticks: u64,
        /// `/proc/<pid>/comm` when it started; absent in journals of older perflabs.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        comm: Option<String>,
        what: String,
    },
    /// A directory of perflab's own files (a guest's initramfs and console log).
    Dir { path: std::path::PathBuf },
    /// An ftrace instance (`instances/<name>` in tracefs, wherever tracefs is mounted)
    /// with tracing on and its ring buffer allocated until it is removed.
    TraceInstance { name: String },
}

impl Created {
    /// Where the object is, as the journal entry's path: not a file, but a stable key
    /// that names it for a person.
    pub fn key(&self) -> String {
        match self {
            Created::Netns { name } => format!("netns/{name}"),
            Created::Link {
                netns: Some(ns),
                name,
            } => format!("netns/{ns}/link/{name}"),
            Created::Link { netns: None, name } => format!("link/{name}"),
            Created::OvsBridge { name } => format!("ovs/{name}"),
            Created::Process { pid, .. } => format!("process/{pid}"),
            Created::Dir { path } => format!("dir{}", path.display()),
            Created::TraceInstance { name } => format!("tracefs/instances/{name}"),
        }
    }
}

impl std::fmt::Display for Created {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Created::Netns { name } => write!(f, "network namespace {name}"),
            Created::Link {
                netns: Some(ns),
                name,
            } => write!(f, "link {name} in namespace {ns}"),
            Created::Link { netns: None, name } => write!(f, "link {name} in the host namespace"),
            Created::OvsBridge { name } => write!(f, "OVS bridge {name}"),
            Created::Process { pid, what, .. } => write!(f, "{what} (pid {pid})"),
            Created::Dir { path } => write!(f, "directory {}", path.display()),
            Created::TraceInstance { name } => write!(f, "ftrace instance {name}"),
        }
    }
}

/// One change a perflab process made, or was about to make.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub id: EntryId,
    /// The perflab process that made the change.
    pub pid: u32,
    #[serde(default)]
    pub pid_start_ticks: Option<u64>,
    #[serde(default)]
    pub boot_id: Option<String>,
    /// The SysRoot the path is relative to (`/` on a live machine).
    pub root: PathBuf,
    /// The file, relative to `root`.
    pub path: String,
    /// The knob setting that made the change, e.g. `cpuidle=poll-only`.
    pub knob: String,
    pub recorded_unix_ms: u64,
    pub action: Action,
}

impl Entry {
    pub fn owner(&self) -> Owner {
        Owner {
            pid: self.pid,
            start_ticks: self.pid_start_ticks,
            boot_id: self.boot_id.clone(),
        }
    }

    /// The absolute path of the file the entry is about.
    pub fn full_path(&self) -> PathBuf {
        SysRoot::at(&self.root).path(&self.path)
    }

    /// One line for a person: `cpuidle=poll-only: /sys/.../disable was "0\n" (pid 812)`.
    pub fn describe(&self) -> String {
        if let Action::Remove { object } = &self.action {
            return format!(
                "{}: created {object} (entry {}, pid {})",
                self.knob, self.id, self.pid
            );
        }
        let what = match &self.action {
            Action::Write {
                original: Original::Text(t),
            } => format!("was {t:?}"),
            Action::Write {
                original: Original::Bytes(b),
            } => format!("was {} bytes", b.len()),
            Action::Hold { detail } => format!("held {detail}"),
            Action::Remove { object } => format!("created {object}"),
        };
        format!(
            "{}: {} {what} (entry {}, pid {})",
            self.knob,
            self.full_path().display(),
            self.id,
            self.pid
        )
    }
}

/// What [`Journal::save_original`] recorded: the entry's id and the bytes it saved, which
/// the caller writes back on restore.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Saved {
    pub id: EntryId,
    pub path: String,
    pub original: Vec<u8>,
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct JournalFile {
    pub version: u32,
    pub next_id: u64,
    pub entries: Vec<Entry>,
}

impl Default for JournalFile {
    fn default() -> Self {
        Self {
            version: JOURNAL_VERSION,
            next_id: 1,
            entries: Vec::new(),
        }
    }
}

/// Parses a journal's bytes. Separate from `load` so that it can be fed arbitrary input.
pub(crate) fn parse(bytes: &[u8]) -> Result<JournalFile, String> {
    let file: JournalFile = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
    if file.version != JOURNAL_VERSION {
        return Err(format!(
            "format version {} (this perflab understands {JOURNAL_VERSION})",
            file.version
        ));
    }
    if let Some(e) = file.entries.iter().find(|e| e.id.0 >= file.next_id) {
        return Err(format!(
            "entry {} is not below next_id {}",
            e.id, file.next_id
        ));
    }
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn originals_round_trip_as_text_or_bytes() {
        for bytes in [b"0\n".to_vec(), vec![0xff, 0x00, b'a'], Vec::new()] {
            let o = Original::from_bytes(bytes.clone());
            let json = serde_json::to_string(&o).unwrap();
            let back: Original = serde_json::from_str(&json).unwrap();
            assert_eq!(back.as_bytes(), &bytes[..], "{json}");
        }
        assert_eq!(
            serde_json::to_string(&Original::from_bytes(b"1\n".to_vec())).unwrap(),
            "\"1\\n\""
        );
    }

    #[test]
    fn created_objects_round_trip() {
        for object in [
            Created::Netns {
                name: "perflab-1-0-srv".into(),
            },
            Created::Link {
                netns: Some("n".into()),
                name: "srv0".into(),
            },
            Created::Link {
                netns: None,
                name: "pl1-0s".into(),
            },
            Created::OvsBridge {
                name: "pl1-0br".into(),
            },
            Created::Process {
                pid: 42,
                start_ticks: 7,
                comm: Some("qemu-system-x86".into()),
                what: "QEMU guest".into(),
            },
            Created::Process {
                pid: 43,
                start_ticks: 8,
                comm: None,
                what: "QEMU guest".into(),
            },
            Created::Dir {
                path: "/run/perflab/guest-1-0".into(),
            },
            Created::TraceInstance {
                name: "perflab-1-0".into(),
            },
        ] {
            let action = Action::Remove { object };
            let json = serde_json::to_string(&action).unwrap();
            assert!(json.contains("\"kind\":\"remove\""), "{json}");
            let back: Action = serde_json::from_str(&json).unwrap();
            assert_eq!(back, action);
        }
    }

    #[test]
    fn rejects_unknown_versions_and_inconsistent_ids() {
        assert!(parse(br#"{"version":1,"next_id":1,"entries":[]}"#).is_ok());
        let err = parse(br#"{"version":9,"next_id":1,"entries":[]}"#).unwrap_err();
        assert!(err.contains("version 9"), "{err}");
        assert!(parse(b"").is_err());
    }

    proptest! {
        #[test]
        fn parse_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = parse(&bytes);
        }

        #[test]
        fn parse_never_panics_on_near_json(s in "\\{\"version\":1,\"next_id\":[0-9]{1,3},\"entries\":\\[.{0,80}\\]\\}") {
            let _ = parse(s.as_bytes());
        }
    }
}
