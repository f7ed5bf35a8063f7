//! Entering a network namespace from one thread.
//!
//! `setns(CLONE_NEWNET)` changes the namespace of the calling thread only, and a socket
//! belongs to the namespace it was created in. So each side of a measurement runs on a
//! thread of its own that enters its namespace first and then creates its sockets; the
//! thread is never reused for anything else.

use std::fs::File;

use nix::sched::{setns, CloneFlags};

/// Moves the calling thread into the network namespace named by `path` (e.g.
/// `/run/netns/perflab-1234-srv`). An empty path leaves it where it is (perflab's own).
pub(crate) fn enter_netns(path: &str) -> Result<(), String> {
    if path.is_empty() {
        return Ok(());
    }
    let f = File::open(path).map_err(|e| format!("cannot open network namespace {path}: {e}"))?;
    setns(&f, CloneFlags::CLONE_NEWNET).map_err(|e| {
        format!("cannot enter network namespace {path}: {e} (entering one needs root)")
    })
}

/// Pins the calling thread to `cpu` when one is given (`-1` in parameters: none).
pub(crate) fn pin_self(cpu: Option<u32>) -> Result<(), String> {
    match cpu {
        Some(c) => crate::affinity::pin(0, &[c]).map_err(|e| format!("cannot pin to CPU {c}: {e}")),
        None => Ok(()),
    }
}

/// Test helper: a network namespace made with `ip netns add`, its loopback up, removed
/// when dropped (on panic too).
#[cfg(test)]
pub(crate) struct TestNetns {
    pub name: String,
}

#[cfg(test)]
impl TestNetns {
    /// None (with the reason printed) when not root or `ip` cannot make one.
    pub fn new(tag: &str) -> Option<Self> {
        if !nix::unistd::Uid::effective().is_root() {
            eprintln!("skipped: needs root to create a network namespace");
            return None;
        }
        let name = format!("perflab-test-{}-{tag}", std::process::id());
        let ok = |args: &[&str]| {
            std::process::Command::new("ip")
                .args(args)
                .status()
                .map(|s| s.success())
                .unwrap_or(false)
        };
        if !ok(&["netns", "add", &name]) {
            eprintln!("skipped: `ip netns add` failed");
            return None;
        }
        let ns = Self { name };
        if !ok(&["-n", &ns.name, "link", "set", "lo", "up"]) {
            eprintln!("skipped: cannot bring lo up in {}", ns.name);
            return None;
        }
        Some(ns)
    }

    pub fn path(&self) -> String {
        format!("/run/netns/{}", self.name)
    }
}

#[cfg(test)]
impl Drop for TestNetns {
    fn drop(&mut self) {
        let _ = std::process::Command::new("ip")
            .args(["netns", "del", &self.name])
            .status();
    }
}
