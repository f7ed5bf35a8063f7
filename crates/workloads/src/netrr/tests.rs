//! netrr on loopback (no root), against `perflab serve` in-process, with its failure
//! modes; and inside network namespaces (root, `..._needs_root`).

use std::collections::BTreeMap;
use std::io::Write;
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use perflab_core::{resolve, MeasureCtx, SysRoot, Workload, WorkloadError, WorkloadOutput};

use super::auth;
use super::proto::{self, OpenRequest, Reply, Request};
use super::serve::{Log, ServeConfig, ServeError, Server};
use super::*;

fn params(pairs: &[(&str, &str)]) -> Params {
    let given: BTreeMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    resolve("netrr", Netrr.info().params, &given).unwrap()
}

fn ctx() -> MeasureCtx {
    MeasureCtx::new(SysRoot::host(), vec![])
}

fn run(pairs: &[(&str, &str)]) -> Result<WorkloadOutput, WorkloadError> {
    Netrr.run(&params(pairs), &ctx())
}

fn m(out: &WorkloadOutput, name: &str) -> f64 {
    out.metric(name)
        .unwrap_or_else(|| panic!("no metric {name}"))
        .value
}

fn assert_plausible(out: &WorkloadOutput) {
    let h = &out.histograms[0];
    assert_eq!(h.name, "rtt");
    assert!(h.count > 0, "{h:?}");
    assert!(
        h.min > 0.0 && h.min <= h.p50 && h.p50 <= h.p99 && h.p99 <= h.p999,
        "{h:?}"
    );
    assert!(h.p999 <= h.max, "{h:?}");
    assert_eq!(m(out, "exchanges") as u64, h.count);
    assert!((m(out, "rtt_p50_us") - h.p50 / 1000.0).abs() < 1e-9);
    assert!(m(out, "transactions_per_s") > 0.0);
    // A round trip cannot be shorter than a microsecond through the kernel, nor a loopback
    // one longer than 100 ms at the median.
    assert!(h.p50 > 1_000.0 && h.p50 < 1e8, "{h:?}");
}

#[test]
fn udp_and_tcp_round_trips_on_loopback_are_plausible() {
    for proto in ["udp", "tcp"] {
        let out = run(&[("proto", proto), ("duration", "0.3s"), ("warmup", "100")])
            .unwrap_or_else(|e| panic!("{proto}: {e}"));
        assert_plausible(&out);
        assert_eq!(m(&out, "lost"), 0.0, "{proto}");
        assert!(
            out.notes[0].contains(&format!("path loopback: {proto} 64 B")),
            "{:?}",
            out.notes
        );
        // Closed loop: the timed round trips lie inside the window one after another, so
        // the rate can never exceed the inverse of the mean round trip (5% for the
        // histogram's rounding). How far below it falls is what the loop's own work and
        // the scheduler cost, which a loaded machine inflates: only an order of magnitude
        // is asserted (a unit error, µs for ms, breaks it).
        let implied = 1e6 / m(&out, "rtt_avg_us");
        let tps = m(&out, "transactions_per_s");
        assert!(
            tps <= implied * 1.05 && tps > implied * 0.1,
            "{proto}: {tps} vs {implied}"
        );
    }
}

/// The size parameter reaches the wire: the client counts a reply only when it is exactly
/// `size` bytes and carries its request's sequence number, so exchanges at 60000 B prove
/// 60000-byte messages went both ways, whole. (Whether they take longer than small ones
/// is a timing comparison, which a loaded machine can invert; it belongs in a benchmark.)
#[test]
fn a_big_message_travels_whole_both_ways() {
    for proto in ["udp", "tcp"] {
        let out = run(&[
            ("proto", proto),
            ("size", "60000"),
            ("duration", "0.2s"),
            ("warmup", "20"),
        ])
        .unwrap_or_else(|e| panic!("{proto}: {e}"));
        assert_plausible(&out);
        assert_eq!(m(&out, "lost"), 0.0, "{proto}");
        assert!(
            out.notes[0].contains(&format!("path loopback: {proto} 60000 B")),
            "{:?}",
            out.notes
        );
    }
}

#[test]
fn open_loop_sends_at_the_rate_and_times_from_the_schedule() {
    let out = run(&[
        ("rate", "2000"),
        ("duration", "0.5s"),
        ("warmup", "50"),
        ("size", "16"),
    ])
    .unwrap();
    assert_plausible(&out);
    let n = m(&out, "exchanges") + m(&out, "lost");
    assert!(
        (n - 1000.0).abs() <= 20.0,
        "{n} requests in 0.5 s at 2000/s"
    );
    // Open loop sends on its schedule whatever the load; the rate is the answered ones
    // over the planned window, so it can only fall short of 2000/s by what was lost.
    let tps = m(&out, "transactions_per_s");
    assert!(
        (tps * 0.5 - m(&out, "exchanges")).abs() < 1e-6 && tps <= 2000.0,
        "{tps}"
    );
    assert!(out.metric("send_lag_max_us").is_some());
    // Too small to carry a sequence number.
    let e = run(&[("rate", "100"), ("size", "4"), ("duration", "0.1s")]).unwrap_err();
    assert!(e.to_string().contains("size >= 8"), "{e}");
}

#[test]
fn tcp_open_loop_works_too() {
    let out = run(&[
        ("proto", "tcp"),
        ("rate", "1000"),
        ("duration", "0.3s"),
        ("warmup", "10"),
    ])
    .unwrap();
    assert_plausible(&out);
    assert_eq!(m(&out, "lost"), 0.0);
}

#[test]
fn load_streams_and_hogs_run_and_their_throughput_is_reported() {
    let out = run(&[
        ("load_streams", "2"),
        ("hogs", "0"),
        ("duration", "0.3s"),
        ("warmup", "100"),
    ])
    .unwrap();
    assert_plausible(&out);
    assert!(m(&out, "load_mib_s") > 1.0, "{}", m(&out, "load_mib_s"));
    assert!(
        out.notes.iter().any(|n| n == "CPU hogs on 0"),
        "{:?}",
        out.notes
    );
    let e = run(&[("hogs", "zero"), ("duration", "0.1s")]).unwrap_err();
    assert!(e.to_string().contains("not a CPU list"), "{e}");
}

fn silent_plan(proto: Proto, target: SocketAddr) -> client::ClientPlan {
    client::ClientPlan {
        proto,
        size: 64,
        rate: 0.0,
        warmup: 0,
        duration: Duration::from_secs(30),
        timeout: Duration::from_millis(50),
        cpu: None,
        netns: String::new(),
        bind: target.ip(),
        target,
    }
}

#[test]
fn a_peer_that_does_not_answer_times_out_within_the_bound() {
    // A UDP socket that never reads, and a TCP listener whose connections are never read.
    let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
    let tcp = TcpListener::bind("127.0.0.1:0").unwrap();
    for (proto, target) in [
        (Proto::Udp, udp.local_addr().unwrap()),
        (Proto::Tcp, tcp.local_addr().unwrap()),
    ] {
        let plan = silent_plan(proto, target);
        let bound = plan.timeout * DEAD_AFTER;
        let t = Instant::now();
        let e = client::run(&plan, &AtomicBool::new(false), &mut || {})
            .unwrap_err()
            .to_string();
        let took = t.elapsed();
        assert!(
            e.contains("did not answer 4") && e.contains(&target.to_string()),
            "{e}"
        );
        // At least the bound (the timeouts really ran), and far from the 30 s duration
        // (the timeouts, not the measurement's end, stopped it); a loaded machine may add
        // seconds to the bound.
        let slack = Duration::from_secs(5);
        assert!(took >= bound && took < bound + slack, "{proto:?} {took:?}");
        let mut open = plan.clone();
        open.rate = 1000.0;
        let t = Instant::now();
        let e = client::run(&open, &AtomicBool::new(false), &mut || {})
            .unwrap_err()
            .to_string();
        assert!(e.contains("did not answer"), "{e}");
        assert!(t.elapsed() < bound + slack, "{:?}", t.elapsed());
    }
}

#[test]
fn a_closed_port_is_refused_at_once() {
    let port = UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    // A 10 s timeout: a refusal that waited for the timeouts would take 40 s.
    let mut plan = silent_plan(Proto::Udp, port);
    plan.timeout = Duration::from_secs(10);
    let t = Instant::now();
    let e = client::run(&plan, &AtomicBool::new(false), &mut || {})
        .unwrap_err()
        .to_string();
    assert!(e.contains("nothing listens on"), "{e}");
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
}

#[test]
fn a_stop_request_ends_the_measurement_as_interrupted() {
    let c = ctx();
    let stop = c.stop.clone();
    let t = Instant::now();
    let h = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        stop.store(true, Ordering::Relaxed);
    });
    let e = Netrr.run(&params(&[("duration", "60s")]), &c).unwrap_err();
    h.join().unwrap();
    assert!(matches!(e, WorkloadError::Interrupted), "{e}");
    // Far from the 60 s asked for, with room for a loaded machine.
    assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
}

#[test]
fn facts_of_a_knob_are_used_and_checked() {
    let mut c = ctx();
    c.facts.insert("net.path".into(), "veth".into());
    c.facts.insert("net.server_addr".into(), "127.0.0.1".into());
    c.facts.insert("net.client_addr".into(), "127.0.0.1".into());
    let out = Netrr
        .run(&params(&[("duration", "0.1s"), ("warmup", "10")]), &c)
        .unwrap();
    assert!(out.notes[0].starts_with("path veth:"), "{:?}", out.notes);
    c.facts.insert("net.server_addr".into(), "srv".into());
    let e = Netrr.run(&params(&[("duration", "0.1s")]), &c).unwrap_err();
    assert!(e.to_string().contains("net.server_addr=\"srv\""), "{e}");
    let e = Netrr
        .run(&params(&[("peer", "10.0.0.1"), ("token", "t")]), &c)
        .unwrap_err();
    assert!(
        e.to_string().contains("both say where the server is"),
        "{e}"
    );
    c.facts.insert("net.server_addr".into(), "127.0.0.1".into());
    c.facts
        .insert("net.server_netns".into(), "/nonexistent/netns".into());
    let e = Netrr.run(&params(&[("duration", "0.1s")]), &c).unwrap_err();
    assert!(
        e.to_string()
            .contains("cannot open network namespace /nonexistent/netns"),
        "{e}"
    );
}

#[test]
fn unusable_peers_are_named() {
    let e = run(&[("peer", "10.0.0.1:http"), ("token", "t")]).unwrap_err();
    assert!(e.to_string().contains("ADDR:PORT"), "{e}");
    std::env::remove_var("PERFLAB_SERVE_TOKEN");
    let e = run(&[("peer", "127.0.0.1")]).unwrap_err();
    assert!(e.to_string().contains("token"), "{e}");
    // Nothing listens there: a refused control connection, not a hang.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let e = run(&[("peer", &port.to_string()), ("token", "t")]).unwrap_err();
    assert!(
        e.to_string().contains("is `perflab serve` running there"),
        "{e}"
    );
}

// ---- perflab serve ----

pub(super) struct TestServer {
    pub addr: SocketAddr,
    stop: Arc<AtomicBool>,
    pub log: Arc<Mutex<Vec<String>>>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl TestServer {
    pub fn start(cfg: impl FnOnce(&mut ServeConfig)) -> Self {
        let mut c = ServeConfig::new("s3cret");
        c.listen = "127.0.0.1:0".parse().unwrap();
        // The tests' token is short on purpose (it must not appear in any output).
        c.allow_weak_token = true;
        cfg(&mut c);
        let server = Server::bind(c).unwrap();
        let addr = server.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let log = Arc::new(Mutex::new(Vec::new()));
        let (s2, l2) = (stop.clone(), log.clone());
        let sink: Log = Arc::new(move |line: &str| l2.lock().unwrap().push(line.to_string()));
        let handle = std::thread::spawn(move || server.run(&s2, sink).unwrap());
        Self {
            addr,
            stop,
            log,
            handle: Some(handle),
        }
    }

    pub fn connect(&self) -> TcpStream {
        let s = TcpStream::connect(self.addr).unwrap();
        // Only against a hang: a loaded machine may take seconds to answer.
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        s
    }

    pub fn logged(&self, what: &str) -> bool {
        self.log.lock().unwrap().iter().any(|l| l.contains(what))
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// Hello, the challenge, and an auth with `token`'s MAC: the server's last reply (a
/// welcome, or an error).
pub(super) fn authenticate(s: &mut TcpStream, token: &str) -> Reply {
    let Reply::Challenge { nonce } = ask(
        s,
        &Request::Hello {
            version: proto::VERSION,
        },
    ) else {
        panic!("no challenge")
    };
    let server = auth::nonce_from_hex(&nonce).expect("a 32-byte nonce");
    let client = auth::nonce().unwrap();
    ask(
        s,
        &Request::Auth {
            client_nonce: auth::hex(&client),
            mac: auth::client_mac(token, &server, &client),
        },
    )
}

pub(super) fn ask(s: &mut TcpStream, req: &Request) -> Reply {
    proto::write_message(s, req).unwrap();
    proto::read_message(s).unwrap()
}

pub(super) fn error_text(r: Reply) -> String {
    match r {
        Reply::Error { message } => message,
        other => panic!("expected an error, got {other:?}"),
    }
}

pub(super) fn open_udp(s: &mut TcpStream) -> Reply {
    assert!(matches!(authenticate(s, "s3cret"), Reply::Welcome { .. }));
    ask(
        s,
        &Request::Open(OpenRequest {
            proto: "udp".into(),
            size: 64,
            load_streams: 0,
        }),
    )
}

/// The server still opens and answers a good session.
pub(super) fn still_serves(srv: &TestServer) {
    let mut s = srv.connect();
    let Reply::Opened { data_port, .. } = open_udp(&mut s) else {
        panic!("no session after an error");
    };
    let u = UdpSocket::bind("127.0.0.1:0").unwrap();
    u.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    u.connect(("127.0.0.1", data_port)).unwrap();
    u.send(&[7u8; 64]).unwrap();
    let mut b = [0u8; 100];
    assert_eq!(u.recv(&mut b).unwrap(), 64);
    // A datagram of another size is not measurement traffic and gets no answer.
    u.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    u.send(&[7u8; 10]).unwrap();
    assert!(u.recv(&mut b).is_err());
    assert_eq!(ask(&mut s, &Request::Close), Reply::Closed);
}

#[test]
fn serve_refuses_a_wrong_token_and_carries_on() {
    let srv = TestServer::start(|_| {});
    let mut s = srv.connect();
    let e = error_text(authenticate(&mut s, "guess"));
    assert!(e.starts_with("authentication failed"), "{e}");
    let mut s = srv.connect();
    let e = error_text(ask(&mut s, &Request::Close));
    assert!(e.contains("expected hello first"), "{e}");
    still_serves(&srv);
    assert!(srv.logged("authentication failed"));
}

#[test]
fn serve_rejects_garbage_and_oversized_messages_and_carries_on() {
    let srv = TestServer::start(|_| {});
    let mut s = srv.connect();
    let junk = b"GET / HTTP/1.0\r\n\r\n";
    s.write_all(&(junk.len() as u32).to_be_bytes()).unwrap();
    s.write_all(junk).unwrap();
    let e = error_text(proto::read_message(&mut s).unwrap());
    assert!(e.contains("not valid"), "{e}");
    // Raw text without a frame reads as an absurd length.
    let mut s = srv.connect();
    s.write_all(b"GET / HTTP/1.0\r\n\r\n").unwrap();
    let e = error_text(proto::read_message(&mut s).unwrap());
    assert!(e.contains("over the 4096-byte limit"), "{e}");
    let mut s = srv.connect();
    s.write_all(&(1u32 << 20).to_be_bytes()).unwrap();
    let e = error_text(proto::read_message(&mut s).unwrap());
    assert!(
        e.contains("1048576 bytes is over the 4096-byte limit"),
        "{e}"
    );
    // An open with a size no datagram can carry.
    let mut s = srv.connect();
    assert!(matches!(
        authenticate(&mut s, "s3cret"),
        Reply::Welcome { .. }
    ));
    let e = error_text(ask(
        &mut s,
        &Request::Open(OpenRequest {
            proto: "sctp".into(),
            size: 64,
            load_streams: 0,
        }),
    ));
    assert!(e.contains("unknown proto \"sctp\""), "{e}");
    still_serves(&srv);
}

#[test]
fn serve_holds_a_bounded_number_of_sessions() {
    let srv = TestServer::start(|c| c.max_sessions = 1);
    let mut first = srv.connect();
    assert!(matches!(open_udp(&mut first), Reply::Opened { .. }));
    // A second client is told "busy" once it has authenticated, not before.
    let mut second = srv.connect();
    let e = error_text(authenticate(&mut second, "s3cret"));
    assert!(e.contains("busy: 1 sessions in progress (limit 1)"), "{e}");
    assert_eq!(ask(&mut first, &Request::Close), Reply::Closed);
    // The slot is free again once the first has ended.
    let t = Instant::now();
    loop {
        let mut s = srv.connect();
        match authenticate(&mut s, "s3cret") {
            Reply::Welcome { .. } => break,
            Reply::Error { message } if t.elapsed() < Duration::from_secs(20) => {
                assert!(message.starts_with("busy"), "{message}");
                std::thread::sleep(Duration::from_millis(20));
            }
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn serve_ends_a_session_at_its_time_limit() {
    let srv = TestServer::start(|c| c.session_time = Duration::from_millis(400));
    let mut s = srv.connect();
    let Reply::Opened { data_port, .. } = open_udp(&mut s) else {
        panic!()
    };
    let t = Instant::now();
    let e = error_text(proto::read_message(&mut s).unwrap());
    assert!(e.contains("session time limit of 0 s reached"), "{e}");
    // The limit (0.4 s), not the client's 30 s read timeout, ended it.
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    // The data port is closed once the session has wound down: the kernel then refuses
    // a datagram to it (ECONNREFUSED on a connected socket), which no slow answer can
    // fake. Winding down follows the error message, so it is waited for.
    let u = UdpSocket::bind("127.0.0.1:0").unwrap();
    u.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    u.connect(("127.0.0.1", data_port)).unwrap();
    let t = Instant::now();
    loop {
        let _ = u.send(&[1u8; 64]);
        match u.recv(&mut [0u8; 100]) {
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => break,
            other => assert!(
                t.elapsed() < Duration::from_secs(20),
                "the data port still open: {other:?}"
            ),
        }
    }
    // A client that never says hello is cut off at the handshake time.
    let srv = TestServer::start(|c| c.handshake_time = Duration::from_millis(200));
    let mut s = srv.connect();
    let e = error_text(proto::read_message(&mut s).unwrap());
    assert!(e.contains("handshake"), "{e}");
}

#[test]
fn serve_says_when_its_port_is_in_use() {
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let mut c = ServeConfig::new("t");
    c.listen = taken.local_addr().unwrap();
    c.allow_weak_token = true;
    let e = Server::bind(c).unwrap_err();
    assert!(matches!(e, ServeError::Listen { .. }), "{e}");
    let text = e.to_string();
    assert!(text.contains("in use") && text.contains("--port"), "{text}");
    let mut c = ServeConfig::new("");
    c.listen = "127.0.0.1:0".parse().unwrap();
    assert!(matches!(Server::bind(c), Err(ServeError::NoToken)));
}

#[test]
fn netrr_measures_against_serve_with_load_and_says_when_the_token_is_wrong() {
    let srv = TestServer::start(|_| {});
    let peer = srv.addr.to_string();
    for proto in ["udp", "tcp"] {
        let out = run(&[
            ("peer", &peer),
            ("token", "s3cret"),
            ("proto", proto),
            ("duration", "0.3s"),
            ("warmup", "100"),
            ("load_streams", "1"),
        ])
        .unwrap_or_else(|e| panic!("{proto}: {e}"));
        assert_plausible(&out);
        assert!(m(&out, "load_mib_s") > 1.0);
        assert!(
            out.notes[0].starts_with("path host:127.0.0.1"),
            "{:?}",
            out.notes
        );
    }
    let e = run(&[("peer", &peer), ("token", "nope"), ("duration", "0.1s")]).unwrap_err();
    assert!(
        e.to_string().contains("refused: authentication failed"),
        "{e}"
    );
    let srv = TestServer::start(|c| c.session_time = Duration::from_secs(3));
    let e = run(&[
        ("peer", &srv.addr.to_string()),
        ("token", "s3cret"),
        ("duration", "10s"),
    ])
    .unwrap_err();
    assert!(e.to_string().contains("allows sessions of 3 s"), "{e}");
}

/// What a run stores is the token's fingerprint. In the process that sealed it, the
/// fingerprint stands for the token; elsewhere (a resumed run) the token must come from
/// PERFLAB_SERVE_TOKEN, and netrr says so rather than sending a fingerprint as a token.
#[test]
fn a_token_known_here_only_by_its_fingerprint_is_asked_for() {
    let srv = TestServer::start(|_| {});
    let peer = srv.addr.to_string();
    let fp = perflab_core::secret::fingerprint("a token never sealed here");
    let e = run(&[("peer", &peer), ("token", &fp), ("duration", "0.1s")])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("only the token's fingerprint") && e.contains("PERFLAB_SERVE_TOKEN"),
        "{e}"
    );
    let fp = perflab_core::secret::seal("s3cret");
    let out = run(&[
        ("peer", &peer),
        ("token", &fp),
        ("duration", "0.2s"),
        ("warmup", "10"),
    ])
    .unwrap();
    assert!(m(&out, "exchanges") > 0.0);
}

// ---- namespaces (root) ----

#[test]
fn netrr_runs_inside_a_namespace_needs_root() {
    let Some(ns) = ns::TestNetns::new("one") else {
        return;
    };
    let inside = ns.path();
    let mut c = path_ctx("loopback", (&inside, "127.0.0.1"), (&inside, "127.0.0.1"));
    both_protocols_under_load(&c, "0.2s", "50", "1");
    // The host's loopback is another namespace's: a server there is not reachable from
    // inside, which shows the client really ran inside.
    c.facts.insert("net.server_netns".into(), String::new());
    let e = Netrr
        .run(&params(&[("duration", "0.2s"), ("timeout", "50ms")]), &c)
        .unwrap_err();
    assert!(
        e.to_string().contains("did not answer") || e.to_string().contains("nothing listens"),
        "{e}"
    );
}

#[test]
fn netrr_crosses_a_veth_pair_between_two_namespaces_needs_root() {
    let (Some(a), Some(b)) = (ns::TestNetns::new("vs"), ns::TestNetns::new("vc")) else {
        return;
    };
    let sh = |args: &[&str]| {
        let ok = std::process::Command::new("ip")
            .args(args)
            .status()
            .map(|s| s.success());
        assert_eq!(ok.ok(), Some(true), "ip {args:?}");
    };
    let (va, vb) = (
        format!("pl{}s", std::process::id()),
        format!("pl{}c", std::process::id()),
    );
    sh(&[
        "link", "add", &va, "netns", &a.name, "type", "veth", "peer", "name", &vb, "netns", &b.name,
    ]);
    sh(&["-n", &a.name, "addr", "add", "10.231.0.1/24", "dev", &va]);
    sh(&["-n", &b.name, "addr", "add", "10.231.0.2/24", "dev", &vb]);
    sh(&["-n", &a.name, "link", "set", &va, "up"]);
    sh(&["-n", &b.name, "link", "set", &vb, "up"]);
    let c = path_ctx("veth", (&a.path(), "10.231.0.1"), (&b.path(), "10.231.0.2"));
    both_protocols_under_load(&c, "0.3s", "100", "2");
}

/// A context whose facts put the server and the client at (namespace, address) each, as
/// the netpaths study sets them for a path.
fn path_ctx(path: &str, server: (&str, &str), client: (&str, &str)) -> MeasureCtx {
    let mut c = ctx();
    for (k, v) in [
        ("net.path", path),
        ("net.server_netns", server.0),
        ("net.client_netns", client.0),
        ("net.server_addr", server.1),
        ("net.client_addr", client.1),
    ] {
        c.facts.insert(k.into(), v.into());
    }
    c
}

/// UDP then TCP round trips over `c`'s path with bulk load beside them: both plausible,
/// and the load really flowed.
fn both_protocols_under_load(c: &MeasureCtx, duration: &str, warmup: &str, streams: &str) {
    for proto in ["udp", "tcp"] {
        let out = Netrr
            .run(
                &params(&[
                    ("proto", proto),
                    ("duration", duration),
                    ("warmup", warmup),
                    ("load_streams", streams),
                ]),
                c,
            )
            .unwrap_or_else(|e| panic!("{proto}: {e}"));
        assert_plausible(&out);
        assert!(m(&out, "load_mib_s") > 1.0);
    }
}

/// A `netpath=vm-*` knob publishes its guest's serve as `net.peer`: netrr measures it as
/// a remote peer with the published token, and says the path and the guest's note.
#[test]
fn a_guest_peer_published_by_a_knob_is_measured_as_a_session() {
    let server = TestServer::start(|_| {});
    let mut c = ctx();
    c.facts.insert("net.path".into(), "vm-tap".into());
    c.facts.insert("net.peer".into(), server.addr.to_string());
    c.facts.insert("net.peer_token".into(), "s3cret".into());
    c.facts.insert("net.client_netns".into(), String::new());
    c.facts.insert("net.client_addr".into(), "127.0.0.1".into());
    c.facts
        .insert("net.guest_note".into(), "the guest runs under TCG".into());
    let out = Netrr
        .run(&params(&[("duration", "0.2s"), ("warmup", "10")]), &c)
        .unwrap();
    assert!(out.notes[0].starts_with("path vm-tap:"), "{:?}", out.notes);
    assert!(
        out.notes.iter().any(|n| n.contains("TCG")),
        "{:?}",
        out.notes
    );
    assert!(m(&out, "exchanges") > 0.0);
    assert!(server.logged("session"), "{:?}", server.log.lock().unwrap());

    c.facts.insert("net.peer_token".into(), "wrong".into());
    let e = Netrr.run(&params(&[("duration", "0.2s")]), &c).unwrap_err();
    assert!(e.to_string().contains("refused"), "{e}");
    c.facts.insert("net.peer".into(), "guest".into());
    let e = Netrr.run(&params(&[("duration", "0.2s")]), &c).unwrap_err();
    assert!(e.to_string().contains("not ADDR:PORT"), "{e}");
}
