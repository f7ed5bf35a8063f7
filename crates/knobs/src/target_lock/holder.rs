//! Who holds a target, as its lock file records it.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::journal::file::unix_ms;
use crate::owner::Owner;

/// Who holds a target, as its lock file records it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Holder {
    /// The target's key ([`target_key`]).
    pub target: PathBuf,
    pub pid: u32,
    #[serde(default)]
    pub start_ticks: Option<u64>,
    #[serde(default)]
    pub boot_id: Option<String>,
    /// The holder's command line, shortened.
    #[serde(default)]
    pub command: String,
    /// The perflab run it measures, where known.
    #[serde(default)]
    pub run: Option<i64>,
    /// The journal (absolute) where the holder records the target's original.
    pub journal: PathBuf,
    /// The knob setting that first claimed the target.
    #[serde(default)]
    pub knob: String,
    #[serde(default)]
    pub since_unix_ms: u64,
}

impl Holder {
    pub fn owner(&self) -> Owner {
        Owner {
            pid: self.pid,
            start_ticks: self.start_ticks,
            boot_id: self.boot_id.clone(),
        }
    }

    /// `perflab pid 812 (`perflab run --workload null`, run 7) for thp=never, 12 s ago`.
    pub fn describe(&self) -> String {
        let mut what = format!("perflab pid {}", self.pid);
        let mut about = Vec::new();
        if !self.command.is_empty() {
            // Masked again: a record left by an earlier perflab holds the line as typed.
            let words: Vec<String> = self.command.split(' ').map(String::from).collect();
            about.push(format!(
                "`{}`",
                perflab_core::secret::mask_command(&words).join(" ")
            ));
        }
        if let Some(run) = self.run {
            about.push(format!("run {run}"));
        }
        if !about.is_empty() {
            what.push_str(&format!(" ({})", about.join(", ")));
        }
        if !self.knob.is_empty() {
            what.push_str(&format!(" for {}", self.knob));
        }
        let ago = unix_ms().saturating_sub(self.since_unix_ms) / 1000;
        if self.since_unix_ms > 0 {
            what.push_str(&format!(", {ago} s ago"));
        }
        what
    }
}

/// This process's command line for a person: the program's file name and its arguments
/// with every secret masked (a `-p token=`, a URL's password, an `env` item named like a
/// secret: the lock file outlives a kill and its line is printed to other runs), at most
/// 200 characters.
pub(crate) fn command_line() -> String {
    let mut args = std::env::args_os();
    let mut words: Vec<String> = args
        .next()
        .map(|p| {
            Path::new(&p)
                .file_name()
                .unwrap_or(p.as_os_str())
                .to_string_lossy()
                .into_owned()
        })
        .into_iter()
        .collect();
    words.extend(args.map(|a| a.to_string_lossy().into_owned()));
    let line = perflab_core::secret::mask_command(&words).join(" ");
    match line.char_indices().nth(200) {
        Some((cut, _)) => format!("{}...", &line[..cut]),
        None => line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn holders_describe_themselves_on_one_line() {
        let h = Holder {
            target: "/sys/x".into(),
            pid: 812,
            start_ticks: Some(5),
            boot_id: None,
            command: "perflab run --workload null".into(),
            run: Some(7),
            journal: "/tmp/j.json".into(),
            knob: "thp=never".into(),
            since_unix_ms: unix_ms(),
        };
        let d = h.describe();
        assert!(
            d.starts_with("perflab pid 812 (`perflab run --workload null`, run 7) for thp=never, "),
            "{d}"
        );
        assert!(!d.contains('\n'));
    }

    #[test]
    fn a_left_record_with_a_secret_is_described_without_it() {
        let h = Holder {
            target: "/sys/x".into(),
            pid: 9,
            start_ticks: None,
            boot_id: None,
            command: "perflab run -p token=T0K3N --db postgres://a:PW@h/d".into(),
            run: None,
            journal: "/tmp/j.json".into(),
            knob: String::new(),
            since_unix_ms: 0,
        };
        let d = h.describe();
        assert!(!d.contains("T0K3N") && !d.contains(":PW@"), "{d}");
        assert!(d.contains("token=hmac:") && d.contains("a:***@h"), "{d}");
    }

    proptest! {
        #[test]
        fn records_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            let _ = serde_json::from_slice::<Holder>(&bytes);
        }
    }
}
