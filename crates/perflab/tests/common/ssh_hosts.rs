//! Hosts for fleet tests: network namespaces made by the test, each joined to this one by
//! a veth pair and running its own `sshd` (Debian openssh-server) with a generated host
//! key, accepting one generated user key. Each host has its own HOME and knob journal (set
//! by sshd's SetEnv), so the hosts share nothing but this machine's file system and CPUs.
//! Everything is removed on drop: every process left in a namespace, then the namespace.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

use perflab_testkit::{have_root, have_tool, skip};

/// Subnets 10.232.K.0/30, K unique within this test process (test binaries run one at a
/// time, so the process id keeps names apart instead).
static NEXT: AtomicU32 = AtomicU32::new(1);

pub struct SshHosts {
    pub dir: tempfile::TempDir,
    pub names: Vec<String>,
    netns: Vec<String>,
}

fn run(cmd: &mut Command) {
    let out = cmd.output().expect("spawn");
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

impl SshHosts {
    /// `n` hosts named h1..hN, or None (with the skip said) where this machine cannot.
    pub fn start(n: u32) -> Option<SshHosts> {
        if !have_root("network namespaces and sshd for the fleet's hosts")
            || !have_tool("ip", "iproute2")
            || !have_tool("ssh", "openssh-client")
            || !have_tool("ssh-keygen", "openssh-client")
        {
            return None;
        }
        if !Path::new("/usr/sbin/sshd").exists() {
            skip(
                "sshd",
                "/usr/sbin/sshd is missing (apt-get install openssh-server)",
            );
            return None;
        }
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path().to_path_buf();
        let d = d.as_path();
        for key in ["hostkey", "userkey"] {
            run(Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", ""])
                .arg("-f")
                .arg(d.join(key)));
        }
        std::fs::copy(d.join("userkey.pub"), d.join("authorized_keys")).unwrap();
        std::fs::create_dir_all("/run/sshd").unwrap();
        let mut hosts = SshHosts {
            names: Vec::new(),
            netns: Vec::new(),
            dir,
        };
        let mut config = String::new();
        let pid = std::process::id();
        for i in 1..=n {
            let k = NEXT.fetch_add(1, Ordering::Relaxed);
            assert!(k < 250, "too many test hosts in one process");
            let ns = format!("plft-{pid}-{k}");
            let (va, vb) = (
                format!("pfa{}{k}", pid % 10000),
                format!("pfb{}{k}", pid % 10000),
            );
            run(Command::new("ip").args(["netns", "add", &ns]));
            hosts.netns.push(ns.clone());
            run(Command::new("ip").args(["link", "add", &va, "type", "veth", "peer", "name", &vb]));
            run(Command::new("ip").args(["link", "set", &vb, "netns", &ns]));
            run(Command::new("ip").args(["addr", "add", &format!("10.232.{k}.1/30"), "dev", &va]));
            run(Command::new("ip").args(["link", "set", &va, "up"]));
            run(Command::new("ip").args([
                "-n",
                &ns,
                "addr",
                "add",
                &format!("10.232.{k}.2/30"),
                "dev",
                &vb,
            ]));
            run(Command::new("ip").args(["-n", &ns, "link", "set", &vb, "up"]));
            run(Command::new("ip").args(["-n", &ns, "link", "set", "lo", "up"]));
            let name = format!("h{i}");
            let home = d.join(&name);
            std::fs::create_dir_all(&home).unwrap();
            std::fs::write(
                d.join(format!("sshd-{name}.conf")),
                format!(
                    "ListenAddress 10.232.{k}.2\nHostKey {hk}\nAuthorizedKeysFile {ak}\n\
                     PermitRootLogin prohibit-password\nPasswordAuthentication no\n\
                     KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n\
                     PidFile {d}/sshd-{name}.pid\n\
                     SetEnv HOME={home} PERFLAB_JOURNAL={home}/journal.json\n",
                    hk = d.join("hostkey").display(),
                    ak = d.join("authorized_keys").display(),
                    d = d.display(),
                    home = home.display(),
                ),
            )
            .unwrap();
            config.push_str(&format!(
                "Host {name}\n  HostName 10.232.{k}.2\n  User root\n  IdentityFile {key}\n  \
                 IdentitiesOnly yes\n  StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null\n  \
                 LogLevel ERROR\n",
                key = d.join("userkey").display()
            ));
            hosts.names.push(name.clone());
            hosts.start_sshd(&name);
        }
        std::fs::write(hosts.ssh_config(), config).unwrap();
        Some(hosts)
    }

    pub fn ssh_config(&self) -> PathBuf {
        self.dir.path().join("ssh_config")
    }

    /// The host's HOME (where perflab keeps its copy, database and log there).
    pub fn home(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn netns_of(&self, name: &str) -> &str {
        let i = self
            .names
            .iter()
            .position(|n| n == name)
            .expect("a host of ours");
        &self.netns[i]
    }

    pub fn start_sshd(&self, name: &str) {
        run(Command::new("ip")
            .args(["netns", "exec", self.netns_of(name), "/usr/sbin/sshd", "-f"])
            .arg(self.dir.path().join(format!("sshd-{name}.conf")))
            .arg("-E")
            .arg(self.dir.path().join(format!("sshd-{name}.log"))));
    }

    /// Kills every sshd of the host, its sessions included: the connection drops as when
    /// the host's network or sshd goes away. Other processes there (a detached run) live.
    pub fn kill_sshd(&self, name: &str) {
        for pid in self.pids(self.netns_of(name)) {
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
            if comm.trim() == "sshd" {
                // SAFETY: kill has no memory-safety preconditions.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
        }
    }

    fn pids(&self, ns: &str) -> Vec<i32> {
        let out = Command::new("ip")
            .args(["netns", "pids", ns])
            .output()
            .expect("ip netns pids");
        String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .filter_map(|p| p.parse().ok())
            .collect()
    }

    /// The processes in the host's namespace that are not sshd (what a run left running).
    pub fn others(&self, name: &str) -> Vec<String> {
        self.pids(self.netns_of(name))
            .into_iter()
            .filter_map(|pid| {
                let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
                (comm.trim() != "sshd").then(|| format!("{pid} {}", comm.trim()))
            })
            .collect()
    }
}

impl Drop for SshHosts {
    fn drop(&mut self) {
        for ns in &self.netns {
            for pid in self.pids(ns) {
                // SAFETY: as above.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
            let _ = Command::new("ip").args(["netns", "del", ns]).status();
        }
    }
}
