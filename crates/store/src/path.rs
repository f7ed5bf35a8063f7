//! Where the results database lives when the user does not say.

use std::ffi::OsString;
use std::path::PathBuf;

/// `$PERFLAB_DB`, else `$XDG_DATA_HOME/perflab/results.db`, else
/// `~/.local/share/perflab/results.db`; with none of these set (a service without HOME),
/// `perflab-results.db` in the current directory, where the person will find it, rather
/// than somewhere a reboot wipes.
pub fn default_path() -> PathBuf {
    default_path_from(|name| std::env::var_os(name))
        .unwrap_or_else(|| PathBuf::from("perflab-results.db"))
}

/// [`default_path`] over any environment, so the rules can be tested without touching the
/// process environment (which tests running in parallel share).
/// `None` when neither variable nor HOME is set.
pub fn default_path_from(env: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    // Empty values count as unset, as the XDG base-directory spec asks; a relative
    // XDG_DATA_HOME is invalid under that spec and ignored.
    let get = |name: &str| env(name).filter(|v| !v.is_empty());
    if let Some(db) = get("PERFLAB_DB") {
        return Some(PathBuf::from(db));
    }
    if let Some(data) = get("XDG_DATA_HOME").map(PathBuf::from) {
        if data.is_absolute() {
            return Some(data.join("perflab").join("results.db"));
        }
    }
    let home = get("HOME")?;
    Some(PathBuf::from(home).join(".local/share/perflab/results.db"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<OsString> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| OsString::from(v))
        }
    }

    #[test]
    fn perflab_db_wins() {
        let p = default_path_from(env(&[
            ("PERFLAB_DB", "/x/r.db"),
            ("XDG_DATA_HOME", "/d"),
            ("HOME", "/h"),
        ]))
        .unwrap();
        assert_eq!(p, PathBuf::from("/x/r.db"));
    }

    #[test]
    fn xdg_then_home() {
        let p = default_path_from(env(&[("XDG_DATA_HOME", "/d"), ("HOME", "/h")])).unwrap();
        assert_eq!(p, PathBuf::from("/d/perflab/results.db"));
        let p = default_path_from(env(&[("XDG_DATA_HOME", ""), ("HOME", "/h")])).unwrap();
        assert_eq!(p, PathBuf::from("/h/.local/share/perflab/results.db"));
        let p = default_path_from(env(&[("XDG_DATA_HOME", "rel"), ("HOME", "/h")])).unwrap();
        assert_eq!(p, PathBuf::from("/h/.local/share/perflab/results.db"));
    }

    #[test]
    fn nothing_set_gives_none() {
        assert_eq!(default_path_from(env(&[])), None);
        assert_eq!(default_path_from(env(&[("HOME", "")])), None);
    }
}
