//! The in-kernel backend of `trace`: spans matched and aggregated by eBPF programs
//! generated from the span declarations, so nothing is streamed and nothing is dropped.
//!
//! Per tracepoint the set uses, one program does what the span declarations say of that
//! event ([`plan`]: end, cancel, start, in the set's order, with the fields at the offsets
//! tracefs gives, [`format`]) and adds each duration to a per-CPU log-linear histogram
//! ([`hist`]). Where the kernel's BTF ([`btf`]) confirms how the event's arguments hold
//! those fields, the program is a raw tracepoint (no record assembled for it) and a
//! syscall exit is an `fexit` on the function behind it (no syscall tracepoint, which
//! slows every syscall); elsewhere it is a classic tracepoint program reading the record
//! ([`raw`] chooses, per event). The bytecode is emitted by [`codegen`] with a small
//! builder ([`insn`]), loaded and attached with the raw system calls ([`sys`]): no clang,
//! no BPF toolchain, no object file.
//! At the end of a measurement the maps are read once and the spans are the same
//! [`SpanResult`]s the text backend leaves, with nanosecond durations.

pub mod btf;
pub mod codegen;
pub mod format;
pub mod hist;
pub mod insn;
pub mod plan;
pub mod raw;
pub mod sys;

use std::cell::OnceCell;
use std::io::BufReader;

use hdrhistogram::Histogram;
use perflab_sys::SysRoot;

use super::matcher::{KernelCounts, SpanResult, MAX_NS, MAX_OPEN};
use super::spans::Span;
use codegen::{Fields, Maps, Slot, SLOTS};
use plan::{EventPlan, PlanError};
use raw::Attach;
use sys::{Attached, Link, Map, Prog, ProgKind};

/// The name of every program and the prefix of every map perflab loads (15 bytes at most),
/// so `bpftool prog` shows whose they are.
pub const PROG_NAME: &str = "perflab_trace";

/// The event layouts of a tracefs mount.
pub fn formats(fs: &SysRoot) -> impl Fn(&str, &str) -> Result<format::Format, String> + '_ {
    move |system, event| {
        let rel = format!("events/{system}/{event}/format");
        let file = std::fs::File::open(fs.path(&rel)).map_err(|e| format!("{rel}: {e}"))?;
        format::parse(BufReader::new(file)).map_err(|e| format!("{rel}: {e}"))
    }
}

/// Kernel symbol addresses from `/proc/kallsyms`, read once when first asked.
pub fn symbols(sys: &SysRoot) -> impl Fn(&str, bool) -> Vec<u64> + '_ {
    let table: OnceCell<Vec<(u64, String)>> = OnceCell::new();
    move |name, prefix| {
        let table = table.get_or_init(|| {
            sys.read_string("proc/kallsyms")
                .map(|t| parse_kallsyms(&t))
                .unwrap_or_default()
        });
        let mut out: Vec<u64> = table
            .iter()
            .filter(|(_, n)| {
                if prefix {
                    n.starts_with(name)
                } else {
                    n == name
                }
            })
            .map(|(a, _)| *a)
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }
}

/// `ffffffff81000000 T _stext` → (address, name), text symbols only (callbacks are code).
fn parse_kallsyms(text: &str) -> Vec<(u64, String)> {
    text.lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            let addr = u64::from_str_radix(w.next()?, 16).ok()?;
            let kind = w.next()?;
            let name = w.next()?;
            matches!(kind, "t" | "T").then(|| (addr, name.to_string()))
        })
        .collect()
}

/// The programs of a set on this kernel (tracefs at `fs`).
pub fn plan_spans(
    fs: &SysRoot,
    sys: &SysRoot,
    spans: &[Span],
) -> Result<Vec<EventPlan>, PlanError> {
    plan::plan(spans, &formats(fs), &symbols(sys))
}

/// The kernel's BTF, `/sys/kernel/btf/vmlinux` under `sys` (an error says why there is none).
pub fn vmlinux_btf(sys: &SysRoot) -> Result<btf::Btf, String> {
    let rel = perflab_sys::probe::bpf::VMLINUX_BTF;
    let file = std::fs::File::open(sys.path(rel)).map_err(|e| format!("/{rel}: {e}"))?;
    btf::Btf::read(file).map_err(|e| format!("/{rel}: {e}"))
}

/// How each planned event's program is attached here (`PERFLAB_TRACE_ATTACH=classic`:
/// all classic).
pub fn attachments(fs: &SysRoot, sys: &SysRoot, plans: &[EventPlan]) -> Vec<Attach> {
    if raw::classic_forced() {
        let why = format!("{}=classic", raw::ATTACH_VAR);
        return plans.iter().map(|_| Attach::Classic(why.clone())).collect();
    }
    let btf = vmlinux_btf(sys).ok();
    let formats = formats(fs);
    plans
        .iter()
        .map(|p| match formats(&p.system, &p.event) {
            Ok(f) => raw::choose(p, &f, btf.as_ref()),
            Err(e) => Attach::Classic(e),
        })
        .collect()
}

/// Set (to anything), every program is `r0 = 0; exit`, attached as usual: what the
/// attachments alone cost a workload, the floor under any matching (a diagnostic).
pub const EMPTY_VAR: &str = "PERFLAB_TRACE_EMPTY_PROGRAMS";

/// Set (to anything), the matching programs read a constant where they would read the
/// clock: every span lasts 0 ns, and what the clock reads cost a workload is the matching
/// programs' cost less theirs (`scripts/trace-cost.sh`'s `noclock` row; a diagnostic).
pub const CONSTANT_CLOCK_VAR: &str = "PERFLAB_TRACE_CONSTANT_CLOCK";

/// A diagnostic, as [`EMPTY_VAR`]: `system:event,…` loads only those events' programs,
/// `-system:event,…` every event's but those, so what one event's program adds to a
/// workload's cost can be measured alone and in context (`perflab crosscheck trace-cost`).
pub const EVENTS_VAR: &str = "PERFLAB_TRACE_EVENTS";

/// Whether `system:event` is loaded under [`EVENTS_VAR`] = `spec` (unset: every event).
pub fn event_selected(spec: Option<&str>, system: &str, event: &str) -> bool {
    let Some(spec) = spec.map(str::trim).filter(|s| !s.is_empty()) else {
        return true;
    };
    let (listed_loads, list) = match spec.strip_prefix('-') {
        Some(rest) => (false, rest),
        None => (true, spec),
    };
    let listed = list
        .split(',')
        .map(str::trim)
        .any(|e| e.split_once(':') == Some((system, event)));
    listed == listed_loads
}

/// The planned events [`EVENTS_VAR`] keeps, each with its attach method.
pub fn selected_events(plans: &[EventPlan], attach: &[Attach]) -> (Vec<EventPlan>, Vec<Attach>) {
    let spec = std::env::var(EVENTS_VAR).ok();
    plans
        .iter()
        .zip(attach)
        .filter(|(p, _)| event_selected(spec.as_deref(), &p.system, &p.event))
        .map(|(p, a)| (p.clone(), a.clone()))
        .unzip()
}

/// A set's programs on this kernel and how each would attach, after asking the kernel
/// to load a trivial program of each kind (what the doctor and `crosscheck trace-cost`
/// show without loading the set).
pub fn attach_here(
    fs: &SysRoot,
    sys: &SysRoot,
    spans: &[Span],
) -> Result<(Vec<EventPlan>, Vec<Attach>), String> {
    probe()?;
    let plans = plan_spans(fs, sys, spans).map_err(|e| e.to_string())?;
    let attach = attachments(fs, sys, &plans)
        .into_iter()
        .map(try_attach)
        .collect();
    Ok((plans, attach))
}

/// A program that does nothing.
fn empty() -> Result<Vec<insn::Insn>, String> {
    let mut a = insn::Asm::new();
    a.mov_imm(insn::R0, 0);
    a.exit();
    a.finish()
}

/// `how`, or the classic program where the kernel refuses a trivial program of its kind
/// (what the doctor asks without loading a set's programs).
pub fn try_attach(how: Attach) -> Attach {
    let (kind, tp) = match &how {
        Attach::Classic(_) => return how,
        Attach::Raw { tp, .. } => (ProgKind::RawTracepoint, Some(tp.as_str())),
        Attach::BtfRaw { btf_id, .. } => (ProgKind::BtfRawTracepoint(*btf_id), None),
        Attach::Fexit { btf_id, .. } => (ProgKind::Fexit(*btf_id), None),
    };
    let tried = empty()
        .and_then(|insns| Prog::load(kind, PROG_NAME, &insns))
        .and_then(|p| Link::open(tp, &p).map(drop).map_err(|e| e.to_string()));
    match tried {
        Ok(()) => how,
        Err(e) => match how.fallback(&e) {
            Some(next) => try_attach(next),
            None => how,
        },
    }
}

/// One line of how a set's programs are attached: `raw tracepoint: sched_switch, …;
/// fexit: __sys_recvfrom; tracepoint: x (why)`.
pub fn describe(plans: &[EventPlan], attach: &[Attach]) -> String {
    let mut parts: Vec<(&str, Vec<String>)> = Vec::new();
    for (p, a) in plans.iter().zip(attach) {
        let what = match a {
            Attach::Classic(why) => format!("{}:{} ({why})", p.system, p.event),
            Attach::Raw { tp, .. } | Attach::BtfRaw { tp, .. } => tp.clone(),
            Attach::Fexit { func, .. } => format!("{func} for {}", p.event),
        };
        match parts.iter_mut().find(|(m, _)| *m == a.method()) {
            Some((_, list)) => list.push(what),
            None => parts.push((a.method(), vec![what])),
        }
    }
    parts
        .iter()
        .map(|(m, list)| format!("{m}: {}", list.join(", ")))
        .collect::<Vec<_>>()
        .join("; ")
}

/// Whether this process may load BPF programs here: the probe `perflab doctor`'s `bpf`
/// line renders.
pub fn probe() -> Result<(), String> {
    match perflab_sys::probe::bpf::bpf() {
        perflab_sys::probe::bpf::Bpf::Loadable => Ok(()),
        perflab_sys::probe::bpf::Bpf::Refused(why) => Err(why),
    }
}

/// The loaded programs of one measurement. Dropping it detaches and frees everything.
pub struct Loaded {
    // Field order is drop order: attachments first, then programs, then maps.
    links: std::cell::RefCell<Vec<Link>>,
    attached: Vec<Attached>,
    /// Each program, with the raw tracepoint (`Some`) it is linked to when enabled, or
    /// `None` for a tracing program (fexit, BTF raw tracepoint), linked to what it was
    /// loaded for; classic ones are attached (disabled) at load.
    progs: Vec<(Prog, LinkTo)>,
    /// How each event's program is attached, after any fallback.
    pub used: Vec<Attach>,
    _starts: Map,
    _opens: Option<Map>,
    spans_map: Map,
    spans: Vec<(String, String)>,
    /// (span, span-map entry of its value 0) of the split spans.
    splits: Vec<(usize, u32)>,
    /// Entries of the span map: the spans, then each split span's values.
    entries: u32,
    cpus: usize,
    /// The span map is one copy for all CPUs ([`plan::shared_histograms`]).
    shared: bool,
    /// Why a set that could share its histograms has them per CPU (the kernel refused
    /// the atomic instructions), for the note.
    unshared_why: Option<String>,
    /// Why the open starts are in the hash map, not the table (the kernel refused the
    /// table's programs, or this CPU does not keep the store order it needs), for the note.
    untabled_why: Option<String>,
}

/// What one event's program is linked to when enabled: a raw tracepoint (`Some`), what a
/// tracing program was loaded for (`None`: fexit's function, a BTF raw tracepoint); no
/// link for a classic program, attached at load.
type LinkTo = Option<Option<String>>;

/// Loads one event's program as `how` says; for a raw one, links and unlinks it once, so
/// a tracepoint the kernel cannot link is known now, not when the measurement starts.
fn load_one(p: &EventPlan, how: &Attach, maps: Maps) -> Result<(Prog, LinkTo, Attach), String> {
    let (kind, fields, link) = match how {
        Attach::Classic(_) => (ProgKind::Tracepoint, Fields::Record, None),
        Attach::Raw { tp, reads } => (
            ProgKind::RawTracepoint,
            Fields::Args(reads),
            Some(Some(tp.clone())),
        ),
        Attach::BtfRaw { btf_id, reads, .. } => (
            ProgKind::BtfRawTracepoint(*btf_id),
            Fields::Btf(reads),
            Some(None),
        ),
        Attach::Fexit { btf_id, .. } => (ProgKind::Fexit(*btf_id), Fields::Args(&[]), Some(None)),
    };
    let clock = match std::env::var_os(CONSTANT_CLOCK_VAR) {
        Some(_) => codegen::Clock::Constant,
        None => codegen::Clock::Kernel,
    };
    let insns = if std::env::var_os(EMPTY_VAR).is_some() {
        empty()?
    } else {
        codegen::program(p, maps, fields, clock)?
    };
    let prog = Prog::load(kind, PROG_NAME, &insns)?;
    if let Some(tp) = &link {
        Link::open(tp.as_deref(), &prog).map_err(|e| format!("cannot attach: {e}"))?;
    }
    Ok((prog, link, how.clone()))
}

impl Loaded {
    /// Creates the maps, loads one program per event as `attach` says, and attaches the
    /// classic ones, disabled (the others are linked by `set_enabled`). The histograms
    /// are shared where the set allows it ([`plan::shared_histograms`]), per CPU where
    /// it does not or where the kernel refuses the atomic instructions sharing needs
    /// (before Linux 5.12).
    pub fn load(
        plans: &[EventPlan],
        attach: &[Attach],
        spans: &[Span],
        cpus: usize,
    ) -> Result<Self, String> {
        if attach.len() != plans.len() {
            return Err("one attach method per planned event is needed".into());
        }
        // Each needs atomic instructions but the last: the table's claim, the shared
        // map's adds (the table is the cheaper of the two for the programs). The table is
        // tried only where the CPU keeps the store order its claim relies on.
        let shareable = plan::shared_histograms(spans);
        let mut first_why: Option<String> = None;
        let tries: &[(bool, bool)] = if TABLE_ORDERED {
            &[(true, true), (false, true), (false, false)]
        } else {
            &[(true, false), (false, false)]
        };
        for &(shared, table) in tries {
            if shared && !shareable {
                continue;
            }
            match Self::load_maps(plans, attach, spans, cpus, shared, table) {
                Ok(mut loaded) => {
                    if shareable && !shared {
                        loaded.unshared_why = first_why.clone();
                    }
                    if !table {
                        loaded.untabled_why = match first_why {
                            _ if !TABLE_ORDERED => Some(UNORDERED_WHY.to_string()),
                            Some(why) => Some(format!(
                                "the kernel refused the table's programs ({})",
                                why.lines().last().unwrap_or("")
                            )),
                            None => None,
                        };
                    }
                    return Ok(loaded);
                }
                // Every try but the last (per CPU, hash map) has one after it.
                Err(why) if shared || table => {
                    first_why.get_or_insert(why);
                }
                Err(why) => return Err(why),
            }
        }
        Err(first_why.unwrap_or_default())
    }

    /// Where the histograms are kept and what they take, for the measurement's notes.
    pub fn histograms(&self) -> String {
        let entries = self.entries;
        let bytes = plan::span_map_bytes(entries, SLOTS * 8, self.cpus, self.shared);
        let mib = bytes as f64 / (1024.0 * 1024.0);
        let kib = SLOTS * 8 / 1024;
        if self.shared {
            return format!(
                "trace: span histograms in one map shared by the CPUs the set's events come from (atomic adds): {entries} × {kib} KiB = {mib:.1} MiB"
            );
        }
        let size = format!("{entries} × {kib} KiB × {} CPUs = {mib:.1} MiB", self.cpus);
        if let Some(why) = &self.untabled_why {
            return format!(
                "trace: span histograms per CPU ({size}), open starts in a hash map: {why}"
            );
        }
        match &self.unshared_why {
            // Whatever the kernel refused, the same programs loaded with plain adds.
            Some(why) => format!(
                "trace: span histograms per CPU ({size}): the kernel refused the shared map's programs ({})",
                why.lines().last().unwrap_or("")
            ),
            None => format!("trace: span histograms per CPU: {size}"),
        }
    }

    fn load_maps(
        plans: &[EventPlan],
        attach: &[Attach],
        spans: &[Span],
        cpus: usize,
        shared: bool,
        table: bool,
    ) -> Result<Self, String> {
        let entries = plan::map_entries(spans);
        let splits = plan::split_entries(spans);
        let (starts, opens, spans_map) = create_maps(
            spans.len() as u32,
            splits.len() as u32,
            entries,
            shared,
            table,
        )?;
        use std::os::fd::AsRawFd;
        let maps = Maps {
            opens: opens.as_ref().map(|m| m.fd.as_raw_fd()),
            starts: starts.fd.as_raw_fd(),
            spans: spans_map.fd.as_raw_fd(),
            shared,
        };
        let mut progs = Vec::new();
        let mut attached = Vec::new();
        let mut used = Vec::new();
        for (p, how) in plans.iter().zip(attach) {
            // A program the kernel refuses (a kernel or security policy that allows one
            // attach type and not another) falls back: a BTF raw tracepoint to a plain
            // one, that or fexit to the classic program of the event, the reason kept for
            // the note.
            let mut how = how.clone();
            let (prog, link, how) = loop {
                match load_one(p, &how, maps) {
                    Ok(x) => break x,
                    Err(e) => match how.fallback(&e) {
                        Some(next) => how = next,
                        None => {
                            return Err(format!("{}:{} ({}): {e}", p.system, p.event, how.method()))
                        }
                    },
                }
            };
            if link.is_none() {
                attached.push(Attached::tracepoint(p.id, &prog).map_err(|e| {
                    format!(
                        "cannot attach to the tracepoint {}:{}: {e}",
                        p.system, p.event
                    )
                })?);
            }
            progs.push((prog, link));
            used.push(how);
        }
        Ok(Self {
            used,
            links: Default::default(),
            attached,
            progs,
            _starts: starts,
            _opens: opens,
            spans_map,
            spans: spans
                .iter()
                .map(|s| (s.name.clone(), s.label.clone()))
                .collect(),
            splits,
            entries,
            cpus,
            shared,
            unshared_why: None,
            untabled_why: None,
        })
    }

    pub fn set_enabled(&self, on: bool) -> Result<(), String> {
        let mut links = self.links.borrow_mut();
        links.clear();
        if on {
            for (prog, link) in &self.progs {
                let Some(tp) = link else { continue };
                links.push(Link::open(tp.as_deref(), prog).map_err(|e| {
                    format!(
                        "cannot attach a BPF program to {}: {e}",
                        tp.as_deref()
                            .map_or("what it was loaded for".into(), |t| format!(
                                "the raw tracepoint {t}"
                            ))
                    )
                })?);
            }
        }
        for a in &self.attached {
            a.set_enabled(on).map_err(|e| {
                format!(
                    "cannot {} a tracepoint: {e}",
                    if on { "enable" } else { "disable" }
                )
            })?;
        }
        Ok(())
    }

    /// Stops the programs and reads every span's histogram and counters.
    pub fn finish(mut self) -> Result<Vec<SpanResult>, String> {
        let _ = self.set_enabled(false);
        self.attached.clear();
        // A shared map's lookup gives its one value, a per-CPU map's one per CPU.
        let read = |entry: u32, name: &str| {
            self.spans_map
                .lookup_percpu(entry, if self.shared { 1 } else { self.cpus })
                .map_err(|e| format!("cannot read the BPF histogram of span {name}: {e}"))
        };
        let mut out = Vec::new();
        for (i, (name, label)) in self.spans.iter().enumerate() {
            out.push(result(name, label, &read(i as u32, name)?));
            // A split span's values follow it, as the text matcher leaves them.
            let Some((_, first)) = self.splits.iter().find(|(s, _)| *s == i) else {
                continue;
            };
            for v in 0..crate::trace::spans::MAX_SPLIT {
                let sub = crate::trace::spans::split_name(name, v);
                let mut r = result(&sub, label, &read(first + v as u32, &sub)?);
                if r.count() > 0 {
                    // The span's own counters say what started and ended.
                    r.kernel = None;
                    out.push(r);
                }
            }
        }
        Ok(out)
    }
}

/// Whether this CPU sees another CPU's stores in the order they were made, as the
/// open-start table's lock-free claim assumes (codegen's note on the table): x86 does;
/// elsewhere (arm64, weaker orders) open starts stay in the hash map, slower but exact.
const TABLE_ORDERED: bool = cfg!(any(target_arch = "x86_64", target_arch = "x86"));

/// The note's reason where [`TABLE_ORDERED`] is false.
const UNORDERED_WHY: &str =
    "the table's lock-free claim relies on x86's store order, which this CPU does not keep";

/// The start map (16,384 keys per span, or with the table per split span: their values),
/// the open-start table (16,384 ways per span) where `table`, and the span map: per CPU,
/// or one shared copy.
fn create_maps(
    spans: u32,
    splits: u32,
    entries: u32,
    shared: bool,
    table: bool,
) -> Result<(Map, Option<Map>, Map), String> {
    let keyed = if table { splits } else { spans };
    let starts = Map::create(
        sys::BPF_MAP_TYPE_HASH,
        PROG_NAME,
        16,
        8,
        (MAX_OPEN as u32).saturating_mul(keyed.max(1)),
    )
    .map_err(|e| format!("cannot create the BPF start map: {e}"))?;
    let opens = match table {
        true => Some(
            Map::create(
                sys::BPF_MAP_TYPE_ARRAY,
                PROG_NAME,
                4,
                codegen::BUCKET_BYTES,
                codegen::TABLE_BUCKETS.saturating_mul(spans.max(1)),
            )
            .map_err(|e| format!("cannot create the BPF open-start table: {e}"))?,
        ),
        false => None,
    };
    let kind = if shared {
        sys::BPF_MAP_TYPE_ARRAY
    } else {
        sys::BPF_MAP_TYPE_PERCPU_ARRAY
    };
    let spans_map = Map::create(kind, PROG_NAME, 4, (SLOTS * 8) as u32, entries.max(1))
        .map_err(|e| format!("cannot create the BPF histogram map: {e}"))?;
    Ok((starts, opens, spans_map))
}

/// A span's result from its per-CPU slots (`cpus × SLOTS` u64s): buckets and counters
/// summed over CPUs, the maximum the largest.
pub fn result(name: &str, label: &str, per_cpu: &[u64]) -> SpanResult {
    let mut slots = vec![0u64; SLOTS];
    let mut max = 0;
    for cpu in per_cpu.chunks_exact(SLOTS) {
        for (s, v) in slots.iter_mut().zip(cpu) {
            *s = s.wrapping_add(*v);
        }
        max = max.max(cpu[hist::BUCKETS + Slot::Max as usize]);
    }
    let counter = |s: Slot| slots[hist::BUCKETS + s as usize];
    let mut h =
        Histogram::new_with_bounds(1, MAX_NS, 3).expect("constant histogram bounds are valid");
    for (i, &c) in slots[..hist::BUCKETS].iter().enumerate() {
        if c > 0 {
            let v = hist::representative(i as u32).unwrap_or(MAX_NS).min(MAX_NS);
            h.saturating_record_n(v, c);
        }
    }
    SpanResult {
        name: name.to_string(),
        label: label.to_string(),
        hist: h,
        sum_ns: u128::from(counter(Slot::Sum)),
        max_ns: max,
        unmatched: counter(Slot::Unmatched),
        evicted: counter(Slot::Full),
        kernel: Some(KernelCounts {
            lost_starts: counter(Slot::LostStarts),
            starts: counter(Slot::StartEvents),
            ends: counter(Slot::EndEvents),
        }),
    }
}

#[cfg(test)]
mod tests;
