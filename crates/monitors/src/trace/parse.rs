//! The ftrace text format of `trace_pipe`, one line at a time.
//!
//! ```text
//!   <comm>-<pid>  [(<tgid>)]  [<cpu>] <flags> <secs>.<usecs>: <event>: <fields>
//!   CPU:1 [LOST 112 EVENTS]
//! ```
//!
//! The comm may hold spaces and dashes (the pid is after the last dash before the CPU
//! column); `<...>` is a comm the kernel no longer knows. Syscall events print as
//! `sys_recvfrom(fd: 7, ...)` (enter) and `sys_recvfrom -> 0x40` (exit), with no event
//! name: they are named back `sys_enter_recvfrom` / `sys_exit_recvfrom` as tracefs
//! calls them. Anything else (headers, partial lines, garbage) is `Line::Other`. The
//! parser borrows from the line and never panics.

use std::borrow::Cow;
use std::io::BufRead;

/// One parsed line.
#[derive(Debug, PartialEq)]
pub enum Line<'a> {
    Event(Event<'a>),
    /// The kernel dropped `count` events of `cpu` (the buffer was full).
    Lost {
        cpu: u32,
        count: u64,
    },
    Other,
}

/// One event. Fields are read from `body` on demand (most events are not looked at).
#[derive(Debug, PartialEq)]
pub struct Event<'a> {
    pub comm: &'a str,
    pub pid: i64,
    pub tgid: Option<i64>,
    pub cpu: u32,
    pub ts_ns: u64,
    /// The event's name as tracefs names it (`sched_switch`, `sys_exit_recvfrom`).
    pub name: Cow<'a, str>,
    body: Body<'a>,
}

#[derive(Debug, PartialEq)]
enum Body<'a> {
    /// `key=value key=value`, values possibly with spaces, or free text.
    Fields(&'a str),
    /// `fd: 7, ubuf: 0x..., size: 0x10000` of a syscall entry.
    SyscallArgs(&'a str),
    /// The return value of a syscall exit.
    Ret(&'a str),
}

impl<'a> Event<'a> {
    /// The value of a named field; `common_pid`, `common_comm` and `cpu` are the line's
    /// own columns unless the event has a field of that name.
    pub fn field(&self, key: &str) -> Option<&'a str> {
        let own = match &self.body {
            Body::Fields(text) => key_values(text).find(|(k, _)| *k == key).map(|(_, v)| v),
            Body::SyscallArgs(text) => text
                .split(", ")
                .filter_map(|kv| kv.split_once(": "))
                .find(|(k, _)| k.trim() == key)
                .map(|(_, v)| v.trim()),
            Body::Ret(v) => (key == "ret").then_some(*v),
        };
        own.or((key == "common_comm").then_some(self.comm))
    }

    /// `key=value` pairs of the body, in order (syscall arguments as `key: value`).
    pub fn fields(&self) -> Vec<(&'a str, &'a str)> {
        match &self.body {
            Body::Fields(text) => key_values(text).collect(),
            Body::SyscallArgs(text) => text
                .split(", ")
                .filter_map(|kv| kv.split_once(": "))
                .map(|(k, v)| (k.trim(), v.trim()))
                .collect(),
            Body::Ret(v) => vec![("ret", *v)],
        }
    }
}

/// `key=value` pairs of a field text. A word without `=` continues the previous value
/// (`prev_comm=Web Content prev_pid=7`); brackets and parentheses around a pair are
/// dropped (`[action=NET_RX]`, `(flags=SPIN)`); `==>` separates.
fn key_values(text: &str) -> impl Iterator<Item = (&str, &str)> {
    let mut out: Vec<(&str, &str)> = Vec::new();
    // Byte offsets of the current value in `text`, so a value with spaces stays a slice.
    let mut current: Option<(&str, usize, usize)> = None;
    let mut offset = 0;
    for word in text.split(' ') {
        let start = offset;
        offset += word.len() + 1;
        if word.is_empty() || word.chars().all(|c| matches!(c, '=' | '>' | '<' | '-')) {
            continue;
        }
        let trimmed = word
            .trim_start_matches(['[', '('])
            .trim_end_matches([']', ')']);
        let lead = word.len() - word.trim_start_matches(['[', '(']).len();
        if let Some((k, v)) = trimmed.split_once('=') {
            if !k.is_empty() && k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
                if let Some((key, s, e)) = current.take() {
                    out.push((key, text.get(s..e).unwrap_or("")));
                }
                let vs = start + lead + k.len() + 1;
                current = Some((k, vs, vs + v.len()));
                continue;
            }
        }
        if let Some((_, _, e)) = current.as_mut() {
            *e = start + word.trim_end_matches([']', ')']).len();
        }
    }
    if let Some((key, s, e)) = current {
        out.push((key, text.get(s..e).unwrap_or("")));
    }
    out.into_iter()
}

/// Parses one line of `trace_pipe`.
pub fn parse_line(line: &str) -> Line<'_> {
    let line = line.trim_end_matches(['\n', '\r']);
    if let Some(lost) = parse_lost(line) {
        return lost;
    }
    parse_event(line).map_or(Line::Other, Line::Event)
}

/// `CPU:1 [LOST 112 EVENTS]`
fn parse_lost(line: &str) -> Option<Line<'_>> {
    let rest = line.trim_start().strip_prefix("CPU:")?;
    let (cpu, rest) = rest.split_once(' ')?;
    let count = rest
        .trim()
        .strip_prefix("[LOST ")?
        .strip_suffix(" EVENTS]")?;
    Some(Line::Lost {
        cpu: cpu.parse().ok()?,
        count: count.parse().ok()?,
    })
}

fn parse_event(line: &str) -> Option<Event<'_>> {
    // The CPU column is the first ` [digits] ` followed by a timestamp; a comm could hold
    // brackets, so every candidate is tried.
    let mut search = 0;
    while let Some(found) = line.get(search..)?.find(" [") {
        let at = search + found;
        search = at + 2;
        let after = line.get(at + 2..)?;
        let close = after.find(']')?;
        let digits = after.get(..close)?;
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Some((ts_ns, body)) = after.get(close + 1..).and_then(timestamp_and_body) else {
            continue;
        };
        let (comm, pid, tgid) = task(line.get(..at)?)?;
        let (name, body) = event_body(body)?;
        return Some(Event {
            comm,
            pid,
            tgid,
            cpu: digits.parse().ok()?,
            ts_ns,
            name,
            body,
        });
    }
    None
}

/// `<comm>-<pid>` with an optional `(<tgid>)` column after it.
fn task(head: &str) -> Option<(&str, i64, Option<i64>)> {
    let mut head = head.trim();
    let mut tgid = None;
    if let Some(open) = head.strip_suffix(')').and_then(|h| h.rfind('(')) {
        let inner = head.get(open + 1..head.len() - 1)?.trim();
        tgid = inner.parse().ok();
        head = head.get(..open)?.trim_end();
    }
    let (comm, pid) = head.rsplit_once('-')?;
    Some((comm.trim_start(), pid.parse().ok()?, tgid))
}

/// `flags 12345.678901: rest` or `12345.678901: rest` (no irq-info column).
fn timestamp_and_body(s: &str) -> Option<(u64, &str)> {
    let s = s.trim_start();
    let (first, rest) = s.split_once(' ')?;
    if let Some(ts) = first.strip_suffix(':').and_then(parse_ts) {
        return Some((ts, rest.trim_start()));
    }
    let rest = rest.trim_start();
    let (second, body) = rest.split_once(' ').unwrap_or((rest, ""));
    let ts = second.strip_suffix(':').and_then(parse_ts)?;
    Some((ts, body.trim_start()))
}

/// `secs.frac` in nanoseconds, without going through a float (a float loses the
/// microseconds of an uptime of days). A plain integer is a counter clock, taken as ns.
fn parse_ts(s: &str) -> Option<u64> {
    let (secs, frac) = s.split_once('.').unwrap_or((s, ""));
    if secs.is_empty() || !secs.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if !frac.bytes().all(|b| b.is_ascii_digit()) || frac.len() > 9 {
        return None;
    }
    let secs: u64 = secs.parse().ok()?;
    if frac.is_empty() && !s.contains('.') {
        return Some(secs);
    }
    let mut ns: u64 = if frac.is_empty() {
        0
    } else {
        frac.parse().ok()?
    };
    for _ in frac.len()..9 {
        ns *= 10;
    }
    secs.checked_mul(1_000_000_000)?.checked_add(ns)
}

/// `name: fields`, `sys_x(args)` or `sys_x -> ret`.
fn event_body(body: &str) -> Option<(Cow<'_, str>, Body<'_>)> {
    let ident_end = body
        .bytes()
        .position(|b| !(b.is_ascii_alphanumeric() || b == b'_'))
        .unwrap_or(body.len());
    let name = body.get(..ident_end)?;
    if name.is_empty() {
        return None;
    }
    let rest = body.get(ident_end..)?;
    if let Some(fields) = rest.strip_prefix(':') {
        return Some((Cow::Borrowed(name), Body::Fields(fields.trim_start())));
    }
    let call = name.strip_prefix("sys_")?;
    if let Some(args) = rest.strip_prefix('(') {
        let args = args.strip_suffix(')').unwrap_or(args);
        return Some((
            Cow::Owned(format!("sys_enter_{call}")),
            Body::SyscallArgs(args),
        ));
    }
    let ret = rest.strip_prefix(" -> ")?;
    Some((
        Cow::Owned(format!("sys_exit_{call}")),
        Body::Ret(ret.trim()),
    ))
}

/// Reads lines until the reader ends, handing each parsed line to `f`; a line that is
/// not valid UTF-8 is read lossily (comms are bytes). Returns how many lines were read.
pub fn for_each_line<R: BufRead>(
    mut reader: R,
    mut f: impl FnMut(Line<'_>),
) -> std::io::Result<u64> {
    let mut buf = Vec::new();
    let mut n = 0;
    loop {
        buf.clear();
        if reader.read_until(b'\n', &mut buf)? == 0 {
            return Ok(n);
        }
        n += 1;
        let text = String::from_utf8_lossy(&buf);
        f(parse_line(&text));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(line: &str) -> Event<'_> {
        match parse_line(line) {
            Line::Event(e) => e,
            other => panic!("not an event: {other:?}"),
        }
    }

    #[test]
    fn sched_switch_with_flags() {
        let e = event(
            "            bash-21768   [000] d..2. 11051.942830: sched_switch: prev_comm=bash \
             prev_pid=21768 prev_prio=120 prev_state=S ==> next_comm=bash next_pid=21771 \
             next_prio=120",
        );
        assert_eq!((e.comm, e.pid, e.tgid, e.cpu), ("bash", 21768, None, 0));
        assert_eq!(e.ts_ns, 11_051_942_830_000);
        assert_eq!(e.name, "sched_switch");
        assert_eq!(e.field("prev_state"), Some("S"));
        assert_eq!(e.field("next_pid"), Some("21771"));
        assert_eq!(e.field("common_comm"), Some("bash"));
        assert_eq!(e.field("nope"), None);
    }

    #[test]
    fn comm_with_spaces_dashes_and_tgid_column() {
        let e = event(
            " Web Content-x-99 (   98) [013] ..... 5.000001: sched_waking: comm=Web Content \
             pid=99 prio=120 target_cpu=013",
        );
        assert_eq!(
            (e.comm, e.pid, e.tgid, e.cpu),
            ("Web Content-x", 99, Some(98), 13)
        );
        assert_eq!(e.field("comm"), Some("Web Content"));
        assert_eq!(e.field("target_cpu"), Some("013"));
        let e = event(
            "  <...>-1234  (-------) [001] d.h1. 1.5: irq_handler_entry: irq=36 name=virtio1-req.0",
        );
        assert_eq!((e.comm, e.pid, e.tgid), ("<...>", 1234, None));
        assert_eq!(e.field("name"), Some("virtio1-req.0"));
        assert_eq!(e.ts_ns, 1_500_000_000);
    }

    #[test]
    fn syscalls_bracketed_fields_and_no_flags_column() {
        let e = event(" netrr-udp-respo-21777   [001] ..... 11051.978824: sys_recvfrom -> 0x40");
        assert_eq!(
            (e.name.as_ref(), e.field("ret")),
            ("sys_exit_recvfrom", Some("0x40"))
        );
        let e = event(
            " x-1 [000] ..... 2.000000: sys_recvfrom(fd: 7, ubuf: 0x7fd7, size: 0x10000, flags: 0)",
        );
        assert_eq!(e.name, "sys_enter_recvfrom");
        assert_eq!(e.field("fd"), Some("7"));
        assert_eq!(e.field("flags"), Some("0"));
        let e = event(" x-1 [000] 3.25: softirq_entry: vec=3 [action=NET_RX]");
        assert_eq!(e.field("vec"), Some("3"));
        assert_eq!(e.field("action"), Some("NET_RX"));
        let e = event(" x-1 [000] d.s3. 3.25: contention_begin: 000000002b79e09b (flags=SPIN)");
        assert_eq!(e.field("flags"), Some("SPIN"));
    }

    #[test]
    fn lost_events_and_garbage() {
        assert_eq!(
            parse_line("CPU:1 [LOST 112 EVENTS]\n"),
            Line::Lost { cpu: 1, count: 112 }
        );
        for junk in [
            "",
            "# tracer: nop",
            "CPU:x [LOST 1 EVENTS]",
            "  foo-12 [001] ...",
            "  foo-x [001] ..... 1.0: e: a=1",
            "  foo-1 [001] ..... 1.0x: e: a=1",
            " [1] 1.0: x:",
            "a-1 [1] . 1.0: ",
            "a-1 [1] . 1.1234567890: e: a=1",
        ] {
            assert_eq!(parse_line(junk), Line::Other, "{junk:?}");
        }
    }

    #[test]
    fn reads_a_reader_lossily() {
        let text = b"a\xff-1 [000] ..... 1.000001: e: k=v\nCPU:0 [LOST 2 EVENTS]\n\n";
        let mut seen = Vec::new();
        let n = for_each_line(&text[..], |l| {
            seen.push(match l {
                Line::Event(e) => format!("{}:{}", e.name, e.field("k").unwrap_or("")),
                Line::Lost { count, .. } => format!("lost {count}"),
                Line::Other => "other".into(),
            })
        })
        .unwrap();
        assert_eq!(n, 3);
        assert_eq!(seen, ["e:v", "lost 2", "other"]);
    }

    proptest::proptest! {
        #[test]
        fn never_panics(s in "\\PC*") {
            if let Line::Event(e) = parse_line(&s) {
                let _ = e.fields();
                let _ = e.field("pid");
            }
        }

        #[test]
        fn never_panics_near_the_format(
            comm in "[ a-z<>.\\-]{0,12}", pid in "[0-9x-]{0,6}", cpu in "[0-9]{0,3}",
            ts in "[0-9.]{0,12}", body in "[ a-z_=()\\[\\]:,>0-9-]{0,40}",
        ) {
            let line = format!("{comm}-{pid} [{cpu}] d..1. {ts}: {body}");
            if let Line::Event(e) = parse_line(&line) {
                let _ = e.fields();
                let _ = e.field("a");
            }
        }
    }
}
