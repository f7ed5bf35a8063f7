//! A fleet run's own record, kept beside the user's other perflab state, so `fleet resume`
//! knows the hosts, the study and each host's run uid after this process is gone.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::hosts::Host;

/// How far one host got.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HostStatus {
    Pending,
    Complete,
    /// The run ended on the host but not complete (interrupted there): resume goes on.
    Incomplete,
    /// Could not be reached (after the reconnection window): resume tries again.
    Unreachable,
    /// Lacks something (another architecture, a run that fails there): said, not retried
    /// by resume unless asked.
    Failed,
}

impl HostStatus {
    pub fn word(&self) -> &'static str {
        match self {
            HostStatus::Pending => "pending",
            HostStatus::Complete => "complete",
            HostStatus::Incomplete => "incomplete",
            HostStatus::Unreachable => "unreachable",
            HostStatus::Failed => "failed",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HostEntry {
    pub host: Host,
    /// The uid of this host's run, the same in its database and in the fleet's store.
    pub uid: String,
    /// The run's number in the fleet's store, once it arrived there.
    pub local_run: Option<i64>,
    pub status: HostStatus,
    /// Why it is not complete.
    #[serde(default)]
    pub reason: String,
    /// Measurements of the run that arrived (ok, failed), for the summary.
    #[serde(default)]
    pub received: (u32, u32),
    #[serde(default)]
    pub planned: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FleetState {
    pub id: String,
    pub created_at: f64,
    /// `perflab run` arguments each host gets: the study, then its options.
    pub run_args: Vec<String>,
    /// The study's TOML text when the study is a file on this side (sent to each host).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub study_toml: Option<String>,
    /// The store the results go to, as given (never with a password: see `redacted_db`).
    pub db: Option<String>,
    pub hosts: Vec<HostEntry>,
}

/// Where fleet records live: `$XDG_STATE_HOME/perflab/fleets`, else
/// `~/.local/state/perflab/fleets`.
pub fn default_dir() -> Option<PathBuf> {
    let var = |n: &str| {
        std::env::var_os(n)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(s) = var("XDG_STATE_HOME").filter(|p| p.is_absolute()) {
        return Some(s.join("perflab/fleets"));
    }
    var("HOME").map(|h| h.join(".local/state/perflab/fleets"))
}

impl FleetState {
    pub fn path_in(dir: &Path, id: &str) -> PathBuf {
        dir.join(format!("{id}.json"))
    }

    /// Written to a temporary file and renamed, so a kill mid-write keeps the last state.
    /// Readable by its owner only: the run options may hold a peer's token, which a host
    /// that was never reached still needs when the fleet is resumed.
    pub fn save(&self, dir: &Path) -> std::io::Result<()> {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::create_dir_all(dir)?;
        let path = Self::path_in(dir, &self.id);
        let tmp = path.with_extension("json.tmp");
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)?;
        f.write_all(&serde_json::to_vec_pretty(self)?)?;
        drop(f);
        std::fs::rename(tmp, path)
    }

    /// The run options as shown to a person: a secret (a `token=` value, a password in a
    /// URL, an `env` item named like a secret) is replaced by its fingerprint, as it is in
    /// the results.
    pub fn shown_args(&self) -> String {
        perflab_core::secret::mask_command(&self.run_args).join(" ")
    }

    pub fn load(dir: &Path, id: &str) -> Result<FleetState, String> {
        if id.is_empty() || !id.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(format!(
                "{id:?} is not a fleet id (the hex word `fleet run` printed)"
            ));
        }
        let path = Self::path_in(dir, id);
        let text = std::fs::read(&path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                format!("no fleet {id} in {}", dir.display())
            } else {
                format!("{}: {e}", path.display())
            }
        })?;
        serde_json::from_slice(&text)
            .map_err(|e| format!("{}: not a fleet record: {e}", path.display()))
    }
}

/// 128 random bits as hex, from the kernel.
pub fn random_hex(bytes: usize) -> std::io::Result<String> {
    let mut buf = vec![0u8; bytes];
    // SAFETY: getrandom writes at most buf.len() bytes into the buffer we own.
    let n = unsafe { libc::getrandom(buf.as_mut_ptr().cast(), buf.len(), 0) };
    if n != buf.len() as isize {
        return Err(std::io::Error::last_os_error());
    }
    Ok(buf.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saves_and_loads() {
        let dir = tempfile::tempdir().unwrap();
        let s = FleetState {
            id: "0a1b2c3d".into(),
            created_at: 1.5,
            run_args: vec!["quick".into()],
            study_toml: None,
            db: None,
            hosts: vec![HostEntry {
                host: Host {
                    name: "h1".into(),
                    dest: "h1".into(),
                },
                uid: random_hex(16).unwrap(),
                local_run: Some(3),
                status: HostStatus::Unreachable,
                reason: "ssh: connect refused".into(),
                received: (4, 0),
                planned: 12,
            }],
        };
        s.save(dir.path()).unwrap();
        assert_eq!(FleetState::load(dir.path(), "0a1b2c3d").unwrap(), s);
        let mode = std::fs::metadata(FleetState::path_in(dir.path(), "0a1b2c3d"))
            .unwrap()
            .permissions();
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777,
            0o600
        );
        let mut t = s.clone();
        t.run_args = vec!["netpaths".into(), "-p".into(), "token=SECRET".into()];
        assert!(!t.shown_args().contains("SECRET"), "{}", t.shown_args());
        assert!(t.shown_args().contains("token=hmac:"), "{}", t.shown_args());
        let e = FleetState::load(dir.path(), "0a1b2c3e").unwrap_err();
        assert!(e.starts_with("no fleet 0a1b2c3e"), "{e}");
        assert!(FleetState::load(dir.path(), "../etc").is_err());
        std::fs::write(dir.path().join("ab.json"), "{").unwrap();
        assert!(FleetState::load(dir.path(), "ab")
            .unwrap_err()
            .contains("not a fleet record"));
    }
}
