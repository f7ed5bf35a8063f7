//! Running a command that sees a directory read-only, as a user's read-only copy of a
//! results database is (a file they may not write, a read-only mount).
//!
//! Mode bits do not stop root, and CI runs the tests as root: there the command runs in a
//! private mount namespace (`unshare -m`) where the directory is bind-mounted onto itself
//! and remounted read-only, so writes fail with EROFS for root too, and nothing outside
//! that one command sees the mount. Not as root, the directory and its files lose their
//! write bits for as long as the view lives.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::skip::{is_root, skip, which};

/// A way to run commands that see `dir` read-only; see the module.
pub struct ReadOnlyView {
    dir: PathBuf,
    /// Files and directories whose modes were changed, with the mode to put back.
    restore: Vec<(PathBuf, u32)>,
}

impl ReadOnlyView {
    /// A view of `dir`; `None` after reporting the skip (`needs mount-namespace`) where
    /// this machine offers no way to make it read-only for this process's user.
    #[track_caller]
    pub fn of(dir: &Path) -> Option<ReadOnlyView> {
        if !is_root() {
            let mut restore = Vec::new();
            let mut entries = vec![dir.to_path_buf()];
            for e in std::fs::read_dir(dir).ok()?.flatten() {
                entries.push(e.path());
            }
            for p in entries {
                let mode = std::fs::metadata(&p).ok()?.permissions().mode();
                std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode & !0o222))
                    .ok()?;
                restore.push((p, mode));
            }
            return Some(ReadOnlyView {
                dir: dir.to_path_buf(),
                restore,
            });
        }
        let works = which("unshare").is_some()
            && Command::new("unshare")
                .args(["-m", "true"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
        if !works {
            skip(
                "mount-namespace",
                "`unshare -m` does not work here: no read-only mount can be made for root",
            );
            return None;
        }
        Some(ReadOnlyView {
            dir: dir.to_path_buf(),
            restore: Vec::new(),
        })
    }

    /// `program` to be run seeing the directory read-only (add arguments, environment and
    /// so on to the command as usual).
    pub fn command(&self, program: impl AsRef<Path>) -> Command {
        if !self.restore.is_empty() {
            return Command::new(program.as_ref());
        }
        let mut c = Command::new("unshare");
        c.args(["-m", "--propagation", "private", "--", "sh", "-c"])
            .arg("mount --bind \"$0\" \"$0\" && mount -o remount,bind,ro \"$0\" && exec \"$@\"")
            .arg(&self.dir)
            .arg(program.as_ref());
        c
    }
}

impl Drop for ReadOnlyView {
    fn drop(&mut self) {
        for (p, mode) in self.restore.iter().rev() {
            let _ = std::fs::set_permissions(p, std::fs::Permissions::from_mode(*mode));
        }
    }
}
