//! Where a run's per-pair drill-down goes when `--out` does not say: under the data
//! directory, beside the results database (`~/.local/share/perflab/drilldown/<study>-<run>`
//! for the default database), never the current directory, which may be a source tree or
//! `/` and is not where a person looks for results later. Its name never starts with `-`
//! or `.`, whatever the study is called.

use std::path::{Path, PathBuf};

/// `<data dir>/drilldown/<study>-<run>`. The data directory is the database file's
/// directory; for a database that is no file (PostgreSQL), the user's XDG data directory.
pub fn default_dir(study: &str, run: i64, db_file: Option<&Path>) -> PathBuf {
    let data = match db_file {
        Some(db) => match db.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        },
        None => data_home(|n| std::env::var_os(n)),
    };
    data.join("drilldown").join(folder_name(study, run))
}

/// `$XDG_DATA_HOME/perflab`, else `~/.local/share/perflab`, else a folder of this user's
/// under the temporary directory.
fn data_home(env: impl Fn(&str) -> Option<std::ffi::OsString>) -> PathBuf {
    if let Some(dir) = perflab_store::data_dir_from(env) {
        return dir;
    }
    // SAFETY: geteuid has no preconditions and cannot fail.
    let uid = unsafe { libc::geteuid() };
    std::env::temp_dir().join(format!("perflab-{uid}"))
}

/// `<study>-<run>` with every character other than letters, digits, `.`, `_` and `-`
/// made `_`, and no leading `-` or `.`.
pub fn folder_name(study: &str, run: i64) -> String {
    let safe: String = study
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let safe = safe.trim_start_matches(['-', '.']);
    if safe.is_empty() {
        format!("run-{run}")
    } else {
        format!("{safe}-{run}")
    }
}

/// Under `sudo`, the folders and files the drill-down made in the user's data directory
/// are given to the user, as the database is. `top` is the `drilldown` folder.
pub fn give_to(user: &perflab_store::SudoUser, top: &Path) -> std::io::Result<()> {
    fn walk(p: &Path, uid: u32, gid: u32) -> std::io::Result<()> {
        std::os::unix::fs::chown(p, Some(uid), Some(gid))?;
        if p.is_dir() && !p.is_symlink() {
            for e in std::fs::read_dir(p)? {
                walk(&e?.path(), uid, gid)?;
            }
        }
        Ok(())
    }
    walk(top, user.uid, user.gid)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    #[test]
    fn beside_the_database_and_named_safely() {
        assert_eq!(
            default_dir(
                "idle-ipi",
                7,
                Some(Path::new("/home/a/.local/share/perflab/results.db"))
            ),
            Path::new("/home/a/.local/share/perflab/drilldown/idle-ipi-7")
        );
        assert_eq!(
            default_dir("x", 1, Some(Path::new("results.db"))),
            Path::new("./drilldown/x-1")
        );
        assert_eq!(folder_name("--rm -rf", 3), "rm_-rf-3");
        assert_eq!(folder_name("../../etc", 3), "_.._etc-3");
        assert_eq!(folder_name(".hidden", 3), "hidden-3");
        assert_eq!(folder_name("-", 4), "run-4");
        assert_eq!(folder_name("my study/v2", 5), "my_study_v2-5");
        for s in ["-x", "--", ".", "..", "a/b", " x", "é"] {
            let n = folder_name(s, 9);
            assert!(
                !n.starts_with(['-', '.']) && !n.contains('/'),
                "{s:?} -> {n}"
            );
        }
    }

    #[test]
    fn a_database_that_is_no_file_uses_the_xdg_data_directory() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |n: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == n)
                    .map(|(_, v)| OsString::from(v))
            }
        };
        assert_eq!(
            data_home(env(&[("XDG_DATA_HOME", "/x"), ("HOME", "/h")])),
            Path::new("/x/perflab")
        );
        assert_eq!(
            data_home(env(&[("XDG_DATA_HOME", "rel"), ("HOME", "/h")])),
            Path::new("/h/.local/share/perflab")
        );
        assert!(data_home(env(&[])).starts_with(std::env::temp_dir()));
    }
}
