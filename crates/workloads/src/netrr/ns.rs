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
    /// None (with the skip reported) when not root or `ip` cannot make one.
    pub fn new(tag: &str) -> Option<Self> {
        if !perflab_testkit::have_root("creating a network namespace") {
            return None;
        }
        if !perflab_testkit::have_tool("ip", "iproute2") {
            return None;
        }
        let name = format!("perflab-test-{}-{tag}", std::process::id());
        let run = |args: &[&str]| {
            std::process::Command::new("ip")
                .args(args)
                .output()
                .map_err(|e| e.to_string())
                .and_then(|o| {
                    if o.status.success() {
                        Ok(())
                    } else {
                        Err(String::from_utf8_lossy(&o.stderr).trim().to_string())
                    }
                })
        };
        if let Err(why) = run(&["netns", "add", &name]) {
            perflab_testkit::skip("netns", format!("`ip netns add {name}` failed: {why}"));
            return None;
        }
        let ns = Self { name };
        if let Err(why) = run(&["-n", &ns.name, "link", "set", "lo", "up"]) {
            perflab_testkit::skip("netns", format!("cannot bring lo up in {}: {why}", ns.name));
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
