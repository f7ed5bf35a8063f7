//! Test support shared by the perflab crates (a dev-dependency only): where the captured and
//! constructed /proc and /sys trees live, and writable copies of them for tests that change
//! files the way the kernel or a knob would; and [`skip`], the one way a test says it
//! cannot run here (see the `skip` module).

pub mod cuda;
mod pg;
mod readonly;
mod skip;

pub use pg::{pg_database, PgDatabase, PG_VAR};
pub use readonly::ReadOnlyView;
pub use skip::{have_root, have_tool, helper_env, is_root, skip, which, REQUIRE_VAR};

use std::path::{Path, PathBuf};

/// `tests/fixtures` at the repository root.
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures")
}

/// `tests/fixtures/<name>`.
pub fn fixture(name: &str) -> PathBuf {
    fixtures().join(name)
}

/// Copies the tree at `src` to `dst` (created), keeping symbolic links as links: sysfs
/// fixtures hold links (`/sys/class/net/eth0/device`) that must not be followed.
/// Panics on any I/O error: it is test set-up.
pub fn copy_tree(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap_or_else(|e| panic!("create {}: {e}", dst.display()));
    let entries = std::fs::read_dir(src).unwrap_or_else(|e| panic!("read {}: {e}", src.display()));
    for e in entries {
        let e = e.expect("directory entry");
        let to = dst.join(e.file_name());
        let ft = e.file_type().expect("file type");
        if ft.is_dir() {
            copy_tree(&e.path(), &to);
        } else if ft.is_symlink() {
            let target = std::fs::read_link(e.path()).expect("read link");
            std::os::unix::fs::symlink(target, &to).expect("make link");
        } else {
            std::fs::copy(e.path(), &to)
                .unwrap_or_else(|err| panic!("copy {}: {err}", e.path().display()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_files_directories_and_links() {
        let src = fixture("kvm-2vcpu");
        let dir = std::env::temp_dir().join(format!("perflab-testkit-{}", std::process::id()));
        copy_tree(&src, &dir);
        assert_eq!(
            std::fs::read(dir.join("proc/interrupts")).unwrap(),
            std::fs::read(src.join("proc/interrupts")).unwrap()
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
