//! `netpath=`: each path built for real, a UDP datagram sent across it from threads that
//! entered its namespaces, then torn down, with the host's `ip netns list` and
//! `ip -o link` exactly as before. Building needs root: those tests say so in their names
//! and skip with the reason elsewhere, as they do for a path this kernel cannot build
//! (it must then be unavailable with the reason, which is checked).

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use perflab_knobs::netpath::NetPathKnob;
use perflab_knobs::{parse_setting, restore_pending, Action, Journal, Knob, KnobGuard};
use perflab_sys::SysRoot;

/// The tests compare the whole machine's namespaces and links before and after, so they
/// must not build paths at the same time.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

fn ip(args: &[&str]) -> String {
    let out = Command::new("ip").args(args).output().unwrap();
    assert!(out.status.success(), "ip {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// Lines naming the objects of a perflab process other than this one and `also` (other
/// tests of the workspace may build paths at the same time) are left out; everything
/// else must match exactly.
fn foreign(line: &str, also: Option<u32>) -> bool {
    let ours = [Some(std::process::id()), also].map(|p| p.map(|p| p.to_string()));
    ["perflab-", ": pl"].iter().any(|p| {
        line.split(p).skip(1).any(|rest| {
            let pid: String = rest.chars().take_while(char::is_ascii_digit).collect();
            !pid.is_empty() && !ours.contains(&Some(pid))
        })
    })
}

/// The host's `ip netns list` and `ip -o link`.
fn net_state() -> (Vec<String>, Vec<String>) {
    net_state_also(None)
}

/// [`net_state`], counting the objects of process `also` as this one's.
fn net_state_also(also: Option<u32>) -> (Vec<String>, Vec<String>) {
    let keep = |text: String| -> Vec<String> {
        text.lines()
            .filter(|l| !foreign(l, also))
            .map(str::to_string)
            .collect()
    };
    (keep(ip(&["netns", "list"])), keep(ip(&["-o", "link"])))
}

fn facts(guard: &dyn KnobGuard) -> BTreeMap<String, String> {
    guard.facts().into_iter().collect()
}

/// Binds a UDP socket to `addr` on a thread that entered the namespace at `ns`; the socket
/// stays in that namespace.
fn bind_in(ns: &Path, addr: IpAddr) -> UdpSocket {
    let file = File::open(ns).unwrap();
    std::thread::scope(|s| {
        s.spawn(|| {
            // SAFETY: the descriptor is open for the call.
            let rc = unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) };
            assert_eq!(
                rc,
                0,
                "setns {}: {}",
                ns.display(),
                std::io::Error::last_os_error()
            );
            UdpSocket::bind(SocketAddr::new(addr, 0)).unwrap()
        })
        .join()
        .unwrap()
    })
}

/// Sends one datagram from the client namespace to the server's address and says whether
/// it arrived from the client's address.
fn datagram_arrives(f: &BTreeMap<String, String>) -> bool {
    let server_addr: IpAddr = f["net.server_addr"].parse().unwrap();
    let client_addr: IpAddr = f["net.client_addr"].parse().unwrap();
    let server = bind_in(Path::new(&f["net.server_netns"]), server_addr);
    let client = bind_in(Path::new(&f["net.client_netns"]), client_addr);
    // Only against a hang: a loaded machine may take a while to deliver it.
    server
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let to = server.local_addr().unwrap();
    client.send_to(b"hello", to).unwrap();
    let mut buf = [0u8; 16];
    match server.recv_from(&mut buf) {
        Ok((n, from)) => &buf[..n] == b"hello" && from.ip() == client_addr,
        Err(_) => false,
    }
}

/// The knob for `kind`, or `None` (with the skip reported) where the test cannot run.
fn available(kind: &str) -> Option<Box<dyn Knob>> {
    if !perflab_testkit::have_root("building network paths") {
        return None;
    }
    if !perflab_testkit::have_tool("ip", "iproute2") {
        return None;
    }
    let knob = parse_setting(&format!("netpath={kind}")).unwrap();
    match knob.check(&SysRoot::host()) {
        Ok(()) => Some(knob),
        Err(u) => {
            // Unavailable is a fine answer, but it must say why and how to fix it.
            assert!(!u.reason.is_empty());
            // ovs needs its tools and a running ovsdb; the other kinds, kernel support.
            let needs = if kind == "ovs" {
                "ovs".to_string()
            } else {
                format!("netpath-{kind}")
            };
            perflab_testkit::skip(
                &needs,
                format!(
                    "netpath={kind} is unavailable here: {} ({})",
                    u.reason,
                    u.hint.unwrap_or_default()
                ),
            );
            None
        }
    }
}

fn journal() -> (tempfile::TempDir, Journal, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.json");
    (dir, Journal::open(&path).unwrap(), path)
}

fn round_trip(kind: &str) {
    let Some(knob) = available(kind) else {
        return;
    };
    let _serial = serial();
    let before = net_state();
    let (_dir, journal, _) = journal();
    let host = SysRoot::host();
    let started = Instant::now();
    let guard = knob.apply(&host, &journal).unwrap();
    let built_in = started.elapsed();
    let f = facts(guard.as_ref());
    assert_eq!(f["net.path"], kind);
    let listed = ip(&["netns", "list"]);
    for side in ["server", "client"] {
        let ns = PathBuf::from(&f[&format!("net.{side}_netns")]);
        assert!(ns.exists(), "{}", ns.display());
        let name = ns.file_name().unwrap().to_str().unwrap();
        assert!(name.starts_with(&format!("perflab-{}-", std::process::id())));
        assert!(listed.contains(name), "{name} not in {listed}");
        let dev = &f[&format!("net.{side}_dev")];
        let links = ip(&["-n", name, "-o", "link", "show", "dev", dev]);
        assert!(links.contains(dev), "{links}");
    }
    let entries = journal.entries().unwrap();
    assert!(!entries.is_empty());
    assert!(entries
        .iter()
        .all(|e| matches!(e.action, Action::Remove { .. })));
    assert!(datagram_arrives(&f), "netpath={kind}: {f:?}");
    guard.restore().unwrap();
    assert_eq!(net_state(), before, "netpath={kind} left something behind");
    assert!(journal.entries().unwrap().is_empty());
    eprintln!(
        "netpath={kind}: built in {:.0} ms, {} objects journaled, facts {f:?}",
        built_in.as_secs_f64() * 1e3,
        entries.len()
    );
}

#[test]
fn netpath_loopback_needs_root() {
    round_trip("loopback");
}

#[test]
fn netpath_veth_needs_root() {
    round_trip("veth");
}

#[test]
fn netpath_bridge_needs_root() {
    round_trip("bridge");
}

#[test]
fn netpath_macvlan_needs_root() {
    round_trip("macvlan");
}

#[test]
fn netpath_ipvlan_needs_root() {
    round_trip("ipvlan");
}

#[test]
fn netpath_tap_needs_root() {
    round_trip("tap");
}

#[test]
fn netpath_ovs_needs_root() {
    round_trip("ovs");
}

#[test]
fn dropping_the_guard_tears_the_path_down_needs_root() {
    let Some(knob) = available("tap") else {
        return;
    };
    let _serial = serial();
    let before = net_state();
    let (_dir, journal, _) = journal();
    drop(knob.apply(&SysRoot::host(), &journal).unwrap());
    assert_eq!(net_state(), before);
    assert!(journal.entries().unwrap().is_empty());
}

#[test]
fn a_failure_part_way_leaves_nothing_needs_root() {
    if available("bridge").is_none() {
        return;
    }
    let _serial = serial();
    let before = net_state();
    let (_dir, journal, _) = journal();
    // 0..=2 are the namespaces, 3 the bridge, 4 and 5 the first veth pair.
    for index in [0, 1, 3, 5, 7] {
        let knob = NetPathKnob::parse("bridge").unwrap().failing_at(index);
        let err = knob.apply(&SysRoot::host(), &journal).err().unwrap();
        assert!(err.to_string().contains("injected failure"), "{err}");
        assert_eq!(net_state(), before, "failure at object {index}");
        assert!(journal.entries().unwrap().is_empty(), "index {index}");
    }
}

const CHILD_KIND: &str = "PERFLAB_NETPATH_TEST_KIND";
const CHILD_JOURNAL: &str = "PERFLAB_NETPATH_TEST_JOURNAL";

/// Runs in a child process (see the kill test): builds a path, says so, and waits to be
/// killed. Not a test on its own: ignored, and run only with `--ignored --exact`.
#[test]
#[ignore = "helper process: spawned by the a_sigkill_then_restore_leaves_nothing_* tests, not a test on its own"]
fn child_builds_a_path_and_waits() {
    let spawner = "the a_sigkill_then_restore_leaves_nothing_* tests";
    let kind = perflab_testkit::helper_env(CHILD_KIND, spawner);
    let path = perflab_testkit::helper_env(CHILD_JOURNAL, spawner);
    let journal = Journal::open(PathBuf::from(path)).unwrap();
    let knob = parse_setting(&format!("netpath={}", kind.to_string_lossy())).unwrap();
    let guard = knob.apply(&SysRoot::host(), &journal).unwrap();
    // On a line of its own: libtest has printed the test's name without a newline.
    println!("\nREADY {}", facts(guard.as_ref())["net.server_netns"]);
    std::thread::sleep(Duration::from_secs(60));
    drop(guard);
}

fn kill_mid_run(kind: &str) {
    let test = format!("a_sigkill_then_restore_leaves_nothing_{kind}_needs_root");
    if available(kind).is_none() {
        return;
    }
    let _serial = serial();
    let before = net_state();
    let (_dir, _, journal_path) = journal();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            "netpath::child_builds_a_path_and_waits",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_KIND, kind)
        .env(CHILD_JOURNAL, &journal_path)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = Some(child.id());
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let ready = stdout
        .lines()
        .map_while(Result::ok)
        .find_map(|l| l.strip_prefix("READY ").map(str::to_string));
    // SAFETY: signals our own child, which has not been reaped.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGKILL) };
    child.wait().unwrap();
    // Observed first and asserted after the replay, so that a failed assertion cannot
    // leave the machine with namespaces whose journal is about to be deleted.
    let left = ready.as_ref().is_some_and(|ns| Path::new(ns).exists());
    let during = net_state_also(pid);
    let report = restore_pending(&journal_path).unwrap();
    let after = net_state_also(pid);
    assert!(ready.is_some(), "the child never reported its path");
    assert!(left, "the kill should have left the path: {ready:?}");
    assert_ne!(during, before);
    assert!(report.is_clean(), "{:?}", report.lines());
    assert!(!report.restored.is_empty());
    eprintln!("{test}: {}", report.lines().join("\n  "));
    assert_eq!(after, before, "perflab restore left something behind");
    assert!(Journal::open(&journal_path)
        .unwrap()
        .entries()
        .unwrap()
        .is_empty());
}

#[test]
fn a_sigkill_then_restore_leaves_nothing_bridge_needs_root() {
    kill_mid_run("bridge");
}

#[test]
fn a_sigkill_then_restore_leaves_nothing_tap_needs_root() {
    kill_mid_run("tap");
}

#[test]
fn a_sigkill_then_restore_leaves_nothing_ovs_needs_root() {
    kill_mid_run("ovs");
}

#[test]
fn unknown_paths_list_the_valid_names() {
    let e = parse_setting("netpath=vxlan").err().unwrap().to_string();
    assert!(
        e.contains("expected one of loopback, veth, bridge, macvlan, ipvlan, tap, ovs"),
        "{e}"
    );
    assert!(!e.contains('\n'), "{e}");
}

const CHILD_NOBODY: &str = "PERFLAB_NETPATH_TEST_NOBODY";

/// Runs in a child process that has dropped root (see below). Not a test on its own:
/// ignored, and run only with `--ignored --exact`.
#[test]
#[ignore = "helper process: spawned by without_root_the_path_is_unavailable_with_the_reason, not a test on its own"]
fn child_checks_without_root() {
    perflab_testkit::helper_env(
        CHILD_NOBODY,
        "without_root_the_path_is_unavailable_with_the_reason",
    );
    let u = parse_setting("netpath=veth")
        .unwrap()
        .check(&SysRoot::host())
        .unwrap_err();
    println!("\nREASON {}", u.reason);
}

#[test]
fn without_root_the_path_is_unavailable_with_the_reason() {
    let reason = if is_root() {
        // Drop to nobody in a child, so the check sees what an ordinary user's perflab does.
        let mut cmd = Command::new(std::env::current_exe().unwrap());
        cmd.args([
            "--ignored",
            "--exact",
            "netpath::child_checks_without_root",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_NOBODY, "1");
        // SAFETY: setgid and setuid are single system calls, safe between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                if libc::setgid(65534) != 0 || libc::setuid(65534) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let out = match cmd.output() {
            Ok(out) => out,
            Err(e) => {
                perflab_testkit::skip(
                    "run-as-nobody",
                    format!("cannot start this test binary as nobody: {e}"),
                );
                return;
            }
        };
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        match text
            .lines()
            .find_map(|l| l.split_once("REASON ").map(|(_, r)| r))
        {
            Some(r) => r.to_string(),
            None => {
                perflab_testkit::skip(
                    "run-as-nobody",
                    format!(
                        "this test binary did not run as nobody: {text} {}",
                        String::from_utf8_lossy(&out.stderr)
                    ),
                );
                return;
            }
        }
    } else {
        parse_setting("netpath=veth")
            .unwrap()
            .check(&SysRoot::host())
            .unwrap_err()
            .reason
    };
    assert_eq!(reason, "needs root (CAP_NET_ADMIN)");
}

const CHILD_OVS: &str = "PERFLAB_NETPATH_TEST_OVS";

/// Runs in a child process whose `$PATH` starts with a stub `ovs-vsctl` (see below). Not
/// a test on its own: ignored, and run only with `--ignored --exact`.
#[test]
#[ignore = "helper process: spawned by ovs_without_a_running_ovsdb_is_unavailable_with_how_to_start_it_needs_root, not a test on its own"]
fn child_checks_ovs() {
    perflab_testkit::helper_env(
        CHILD_OVS,
        "ovs_without_a_running_ovsdb_is_unavailable_with_how_to_start_it_needs_root",
    );
    match parse_setting("netpath=ovs")
        .unwrap()
        .check(&SysRoot::host())
    {
        Ok(()) => println!("\nREASON none"),
        Err(u) => println!("\nREASON {} HINT {}", u.reason, u.hint.unwrap_or_default()),
    }
}

#[test]
fn ovs_without_a_running_ovsdb_is_unavailable_with_how_to_start_it_needs_root() {
    if !perflab_testkit::have_root("the root check comes before the ovsdb check") {
        return;
    }
    // A stub that fails as ovs-vsctl does when ovsdb-server is not running.
    let dir = tempfile::tempdir().unwrap();
    let stub = dir.path().join("ovs-vsctl");
    std::fs::write(
        &stub,
        "#!/bin/sh\necho 'ovs-vsctl: unix:/var/run/openvswitch/db.sock: database connection failed' >&2\nexit 1\n",
    )
    .unwrap();
    std::fs::set_permissions(&stub, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = std::env::join_paths(std::iter::once(dir.path().to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            "netpath::child_checks_ovs",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_OVS, "1")
        .env("PATH", path)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let reason = text
        .lines()
        .find_map(|l| l.split_once("REASON ").map(|(_, r)| r.to_string()))
        .unwrap_or_else(|| panic!("no reason from the child: {text}"));
    assert!(reason.contains("ovsdb-server is not running"), "{reason}");
    assert!(
        reason.contains("systemctl start openvswitch-switch"),
        "{reason}"
    );
}
