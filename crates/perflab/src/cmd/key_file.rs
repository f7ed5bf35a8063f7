//! Where this user's fingerprint key lives (see `perflab_core::secret_key`):
//! `$PERFLAB_FINGERPRINT_KEY` (a file several hosts or users may share, so that their
//! fingerprints agree), else beside the default results database, in perflab's data
//! directory, whatever `--db` names, so that every run of one user fingerprints a secret
//! alike. Under `sudo` it is the invoking user's, as their database is, and a key made
//! for them is theirs.

use std::ffi::OsString;
use std::path::PathBuf;

use crate::cli::Global;
use crate::cmd::sudo_db;

/// Names the key file for the first fingerprint this process makes; nothing is read or
/// made until then.
pub fn install(g: &Global) {
    if let Some(path) = std::env::var_os(VAR).filter(|v| !v.is_empty()) {
        perflab_core::secret_key::use_key_file(PathBuf::from(path), None);
        return;
    }
    let (path, owner) = match sudo_db::sudo_user_quiet(g) {
        Some(user) => (
            user.db.parent().map(|d| d.join(NAME)),
            Some((user.uid, user.gid)),
        ),
        None => (path_from(|n| std::env::var_os(n)), None),
    };
    if let Some(path) = path {
        perflab_core::secret_key::use_key_file(path, owner);
    }
}

const NAME: &str = "fingerprint.key";
/// The variable that names the key file instead.
pub const VAR: &str = "PERFLAB_FINGERPRINT_KEY";

/// `$XDG_DATA_HOME/perflab/fingerprint.key`, else `~/.local/share/perflab/…`; `None`
/// without either (the key is then this process's own).
fn path_from(env: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    Some(perflab_store::data_dir_from(env)?.join(NAME))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_lives_in_the_data_directory() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |n: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == n)
                    .map(|(_, v)| OsString::from(v))
            }
        };
        assert_eq!(
            path_from(env(&[("HOME", "/h"), ("XDG_DATA_HOME", "/d")])),
            Some(PathBuf::from("/d/perflab/fingerprint.key"))
        );
        assert_eq!(
            path_from(env(&[("HOME", "/h"), ("XDG_DATA_HOME", "rel")])),
            Some(PathBuf::from("/h/.local/share/perflab/fingerprint.key"))
        );
        assert_eq!(path_from(env(&[])), None);
    }
}
