//! `sudo perflab run …` stores into the invoking user's database: run as root with sudo's
//! environment (SUDO_USER, SUDO_UID, SUDO_GID, HOME=/root) for a throw-away user, the run
//! lands in that user's ~/.local/share/perflab/results.db, every file and directory
//! perflab made there is theirs, and `perflab ls` as that user finds the run and can add
//! to the database. Needs root and useradd; skips, saying so, without them.

use crate::common;

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{text, Lab};
use perflab_testkit::{have_root, skip};

/// A user made for this test and removed, with their home, however the test ends.
struct ThrowAwayUser {
    name: String,
    uid: u32,
    gid: u32,
    home: PathBuf,
}

impl ThrowAwayUser {
    fn create() -> Option<Self> {
        let name = format!("plabt{}", std::process::id());
        let ok = Command::new("useradd")
            .args(["-m", "-s", "/bin/sh", &name])
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            return None;
        }
        let out = Command::new("getent")
            .args(["passwd", &name])
            .output()
            .expect("getent");
        let line = String::from_utf8_lossy(&out.stdout).trim().to_string();
        let f: Vec<&str> = line.split(':').collect();
        Some(Self {
            uid: f[2].parse().unwrap(),
            gid: f[3].parse().unwrap(),
            home: PathBuf::from(f[5]),
            name,
        })
    }

    /// `perflab ARGS` as this user, in a clean environment as their own shell has it.
    fn perflab(&self, bin: &Path, args: &[&str]) -> std::process::Output {
        Command::new("setpriv")
            .arg(format!("--reuid={}", self.uid))
            .arg(format!("--regid={}", self.gid))
            .arg("--init-groups")
            .arg(bin)
            .args(args)
            .env_clear()
            .env("HOME", &self.home)
            .env("PATH", "/usr/bin:/bin")
            .current_dir(&self.home)
            .output()
            .expect("setpriv")
    }
}

impl Drop for ThrowAwayUser {
    fn drop(&mut self) {
        let _ = Command::new("userdel")
            .args(["-r", &self.name])
            .stderr(std::process::Stdio::null())
            .status();
    }
}

fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn sudo_run_stores_into_the_invoking_users_database_and_gives_them_the_files() {
    if !have_root("it runs perflab as root for a throw-away user") {
        return;
    }
    if !(have("useradd") && have("userdel") && have("setpriv")) {
        skip(
            "useradd",
            "needs useradd, userdel and setpriv (passwd, util-linux)",
        );
        return;
    }
    let Some(user) = ThrowAwayUser::create() else {
        skip("useradd", "useradd could not create a user here");
        return;
    };
    let lab = Lab::new();
    // The user must be able to run the binary; the build tree may sit in root's home.
    let bin = user.home.join("perflab");
    std::fs::copy(env!("CARGO_BIN_EXE_perflab"), &bin).unwrap();
    std::os::unix::fs::chown(&bin, Some(user.uid), Some(user.gid)).unwrap();
    let db = user.home.join(".local/share/perflab/results.db");
    assert!(!user.home.join(".local").exists());

    // As `sudo perflab run` leaves the environment: root's HOME, the caller in SUDO_*.
    let o = lab
        .cmd()
        .env_remove("PERFLAB_DB")
        .env_remove("XDG_DATA_HOME")
        .env("HOME", "/root")
        .env("SUDO_USER", &user.name)
        .env("SUDO_UID", user.uid.to_string())
        .env("SUDO_GID", user.gid.to_string())
        .args(["run", "--workload", "null", "--reps", "2"])
        .args(["--label", "as root through sudo"])
        .output()
        .unwrap();
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "stdout: {out}\nstderr: {err}");
    assert!(
        err.contains(&format!(
            "results go to {}'s database {}",
            user.name,
            db.display()
        )),
        "{err}"
    );
    assert!(db.exists(), "{err}");
    // Everything perflab made in the home is the user's: .local, share, perflab, the
    // database and the claims file beside it.
    let mut made = vec![
        user.home.join(".local"),
        user.home.join(".local/share"),
        user.home.join(".local/share/perflab"),
    ];
    for f in std::fs::read_dir(db.parent().unwrap()).unwrap() {
        made.push(f.unwrap().path());
    }
    assert!(made.len() >= 5, "{made:?}");
    for p in &made {
        let m = std::fs::metadata(p).unwrap();
        assert_eq!(
            (m.uid(), m.gid()),
            (user.uid, user.gid),
            "{} is not the user's",
            p.display()
        );
    }

    // The user, without sudo, finds the run and can add to the database.
    let o = user.perflab(&bin, &["ls"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "stdout: {out}\nstderr: {err}");
    assert!(out.contains("as root through sudo"), "{out}");
    let o = user.perflab(&bin, &["run", "--workload", "null", "--reps", "1"]);
    assert!(o.status.success(), "{:?}", text(&o));
    let o = user.perflab(&bin, &["ls"]);
    assert_eq!(text(&o).0.matches("null").count(), 2, "{:?}", text(&o));
}

#[test]
fn with_a_named_database_sudo_changes_nothing() {
    if !have_root("it runs perflab as root with SUDO_USER set") {
        return;
    }
    // SUDO_USER names nobody this system knows, but PERFLAB_DB (the lab's) decides.
    let lab = Lab::new();
    let o = lab
        .cmd()
        .env("SUDO_USER", "no-such-user-here")
        .args(["run", "--workload", "null", "--reps", "1"])
        .output()
        .unwrap();
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(lab.db().exists());
    assert!(!err.contains("sudo") && !err.contains("SUDO_USER"), "{err}");
}
