//! Finding the system tools perflab runs (`ip`, `ovs-vsctl`, `qemu-system-*`, `busybox`):
//! one search, used by the knobs that run them and by `perflab doctor`, which says
//! whether they are there; and asking one what it says of itself.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Directories searched after `$PATH`: a sudo or cron environment often lacks the sbin
/// directories where iproute2 and Open vSwitch install their tools.
const SBIN: [&str; 4] = ["/usr/sbin", "/sbin", "/usr/bin", "/bin"];

/// The absolute path of an executable, from `$PATH` or the sbin directories.
pub fn find_tool(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(SBIN.iter().map(PathBuf::from))
        .map(|dir| dir.join(name))
        .find(|p| is_executable(p))
}

/// The tool's stdout (trimmed) when it exits 0, else its stderr. A caller that asks a
/// daemon passes the tool's own timeout option, so none can hang on a dead one.
pub fn ask(tool: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new(tool)
        .args(args)
        .output()
        .map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
    }
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_every_machine_has_is_found_and_a_made_up_one_is_not() {
        let sh = find_tool("sh").expect("sh is in /bin");
        assert!(sh.is_absolute(), "{}", sh.display());
        assert_eq!(find_tool("perflab-no-such-tool"), None);
        assert_eq!(ask(&sh, &["-c", "echo yes"]), Ok("yes".into()));
        assert_eq!(ask(&sh, &["-c", "echo no >&2; exit 1"]), Err("no".into()));
    }
}
