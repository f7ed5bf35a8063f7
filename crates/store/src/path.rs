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
    match env("PERFLAB_DB").filter(|v| !v.is_empty()) {
        Some(db) => Some(PathBuf::from(db)),
        None => data_dir_from(env).map(|d| d.join("results.db")),
    }
}

/// perflab's data directory in environment `env`: `$XDG_DATA_HOME/perflab`, else
/// `~/.local/share/perflab`; `None` without either. Empty values count as unset, as the
/// XDG base-directory spec asks; a relative XDG_DATA_HOME is invalid under that spec and
/// ignored. The database, the fingerprint key and drill-downs all live here.
pub fn data_dir_from(env: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    let get = |name: &str| env(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(data) = get("XDG_DATA_HOME").filter(|d| d.is_absolute()) {
        return Some(data.join("perflab"));
    }
    Some(get("HOME")?.join(".local/share/perflab"))
}

/// What the passwd database says of a user (`getpwnam`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PasswdEntry {
    pub uid: u32,
    pub gid: u32,
    pub home: PathBuf,
}

/// The person behind `sudo perflab`: whose database the results go to, and who must own
/// the files perflab creates there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SudoUser {
    pub name: String,
    pub uid: u32,
    pub gid: u32,
    /// `~name/.local/share/perflab/results.db`.
    pub db: PathBuf,
}

/// Under `sudo` (effective uid 0, `SUDO_USER` naming a user other than root) with no
/// `PERFLAB_DB`, the invoking user and their default database, so that `perflab ls` run
/// afterwards without sudo finds the run. The home comes from the passwd database
/// (`lookup`), not from `HOME`, which sudo may have set to root's; `XDG_DATA_HOME` is
/// root's environment here, not the user's, and is not read. The owner is `SUDO_UID` and
/// `SUDO_GID` where sudo set them, else the passwd entry's.
///
/// `Ok(None)` when this is not such a sudo; `Err` with the reason when `SUDO_USER` names a
/// user the passwd database does not know (the caller says so and falls back to root's
/// own default).
pub fn sudo_user_from(
    euid: u32,
    env: impl Fn(&str) -> Option<OsString>,
    lookup: impl Fn(&str) -> Option<PasswdEntry>,
) -> Result<Option<SudoUser>, String> {
    let get = |name: &str| env(name).filter(|v| !v.is_empty());
    if euid != 0 || get("PERFLAB_DB").is_some() {
        return Ok(None);
    }
    let Some(name) = get("SUDO_USER").and_then(|n| n.into_string().ok()) else {
        return Ok(None);
    };
    if name == "root" {
        return Ok(None);
    }
    let entry =
        lookup(&name).ok_or_else(|| format!("SUDO_USER={name} is not a user this system knows"))?;
    if !entry.home.is_absolute() {
        return Err(format!(
            "SUDO_USER={name} has no absolute home directory ({})",
            entry.home.display()
        ));
    }
    let id = |var: &str, fallback: u32| {
        get(var)
            .and_then(|v| v.into_string().ok())
            .and_then(|v| v.parse().ok())
            .unwrap_or(fallback)
    };
    Ok(Some(SudoUser {
        uid: id("SUDO_UID", entry.uid),
        gid: id("SUDO_GID", entry.gid),
        db: entry.home.join(".local/share/perflab/results.db"),
        name,
    }))
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

    fn plab(name: &str) -> Option<PasswdEntry> {
        (name == "plab").then(|| PasswdEntry {
            uid: 1001,
            gid: 1002,
            home: PathBuf::from("/home/plab"),
        })
    }

    #[test]
    fn sudo_goes_to_the_invoking_users_database() {
        let sudo = [
            ("SUDO_USER", "plab"),
            ("SUDO_UID", "1001"),
            ("SUDO_GID", "1002"),
            ("HOME", "/root"),
            ("XDG_DATA_HOME", "/root/.local/share"),
        ];
        let u = sudo_user_from(0, env(&sudo), plab).unwrap().unwrap();
        assert_eq!(
            u,
            SudoUser {
                name: "plab".into(),
                uid: 1001,
                gid: 1002,
                db: PathBuf::from("/home/plab/.local/share/perflab/results.db"),
            }
        );
        // Without SUDO_UID/SUDO_GID the passwd entry's ids.
        let u = sudo_user_from(0, env(&[("SUDO_USER", "plab")]), plab)
            .unwrap()
            .unwrap();
        assert_eq!((u.uid, u.gid), (1001, 1002));
    }

    #[test]
    fn not_sudo_or_a_named_database_keeps_the_usual_default() {
        // Not root: sudo -u someone, or a user who set SUDO_USER by hand.
        assert_eq!(
            sudo_user_from(1000, env(&[("SUDO_USER", "plab")]), plab),
            Ok(None)
        );
        // Root logged in as root, or `sudo -u root` from root.
        assert_eq!(sudo_user_from(0, env(&[("HOME", "/root")]), plab), Ok(None));
        assert_eq!(
            sudo_user_from(0, env(&[("SUDO_USER", "root")]), plab),
            Ok(None)
        );
        assert_eq!(sudo_user_from(0, env(&[("SUDO_USER", "")]), plab), Ok(None));
        // PERFLAB_DB names the database: it is used as given.
        let named = [("SUDO_USER", "plab"), ("PERFLAB_DB", "/x/r.db")];
        assert_eq!(sudo_user_from(0, env(&named), plab), Ok(None));
    }

    #[test]
    fn an_unknown_sudo_user_is_said() {
        let e = sudo_user_from(0, env(&[("SUDO_USER", "ghost")]), plab).unwrap_err();
        assert!(e.contains("SUDO_USER=ghost"), "{e}");
        let relative = |_: &str| {
            Some(PasswdEntry {
                uid: 5,
                gid: 5,
                home: PathBuf::from(""),
            })
        };
        let e = sudo_user_from(0, env(&[("SUDO_USER", "x")]), relative).unwrap_err();
        assert!(e.contains("no absolute home"), "{e}");
    }
}
