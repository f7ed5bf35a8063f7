//! iproute2's `ip`, which every `netpath=` variant builds its namespaces and links with.

use std::path::PathBuf;

use super::tools::{ask, find_tool};
use crate::SysRoot;

/// Whether `ip` is installed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IpTool {
    /// A captured tree: the tools of another machine are not here to look at.
    NotChecked,
    Missing,
    /// Where it is, and what `ip -V` says (`version unknown` where it says nothing).
    Found {
        path: PathBuf,
        version: String,
    },
}

/// Whether `ip` is installed on the live machine.
pub fn ip_tool(sys: &SysRoot) -> IpTool {
    if !sys.is_host() {
        return IpTool::NotChecked;
    }
    match find_tool("ip") {
        None => IpTool::Missing,
        Some(path) => {
            let version = ask(&path, &["-V"]).unwrap_or_else(|_| "version unknown".into());
            IpTool::Found { path, version }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tree_is_not_checked_and_the_host_follows_the_path() {
        assert_eq!(ip_tool(&SysRoot::at("/nonexistent")), IpTool::NotChecked);
        let host = ip_tool(&SysRoot::host());
        assert_eq!(
            matches!(host, IpTool::Found { .. }),
            find_tool("ip").is_some()
        );
    }
}
