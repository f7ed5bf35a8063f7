//! The in-kernel backend of `trace`: spans matched and aggregated by eBPF programs
//! generated from the span declarations, so nothing is streamed and nothing is dropped.
//!
//! Per tracepoint the set uses, one classic tracepoint program (BPF_PROG_TYPE_TRACEPOINT)
//! reads the record's fields at the offsets tracefs gives ([`format`]), does what the
//! span declarations say of that event ([`plan`]: end, cancel, start, in the set's order)
//! and adds each duration to a per-CPU log-linear histogram ([`hist`]). The bytecode is
//! emitted by [`codegen`] with a small builder ([`insn`]), loaded and attached with the
//! raw system calls ([`sys`]): no clang, no BPF toolchain, no object file, no BTF needed.
//! At the end of a measurement the maps are read once and the spans are the same
//! [`SpanResult`]s the text backend leaves, with nanosecond durations.

pub mod codegen;
pub mod format;
pub mod hist;
pub mod insn;
pub mod plan;
pub mod sys;

use std::cell::OnceCell;
use std::io::BufReader;

use hdrhistogram::Histogram;
use perflab_sys::SysRoot;

use super::matcher::{KernelCounts, SpanResult, MAX_NS, MAX_OPEN};
use super::spans::Span;
use codegen::{Maps, Slot, SLOTS};
use plan::{EventPlan, PlanError};
use sys::{Attached, Map, Prog};

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

/// Whether this process may load BPF programs here: creating a one-entry map is the
/// cheapest question the kernel answers truthfully.
pub fn probe() -> Result<(), String> {
    Map::create(sys::BPF_MAP_TYPE_PERCPU_ARRAY, PROG_NAME, 4, 8, 1)
        .map(drop)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::EPERM) | Some(libc::EACCES) => {
                "BPF needs root (CAP_BPF and CAP_PERFMON)".to_string()
            }
            Some(libc::ENOSYS) => "this kernel has no bpf() system call".to_string(),
            _ => format!("cannot create a BPF map: {e}"),
        })
}

/// The loaded programs of one measurement. Dropping it detaches and frees everything.
pub struct Loaded {
    // Field order is drop order: attachments first, then programs, then maps.
    attached: Vec<Attached>,
    _progs: Vec<Prog>,
    _starts: Map,
    spans_map: Map,
    spans: Vec<(String, String)>,
    /// (span, span-map entry of its value 0) of the split spans.
    splits: Vec<(usize, u32)>,
    cpus: usize,
}

impl Loaded {
    /// Creates the maps, loads one program per event and attaches it, disabled.
    pub fn load(plans: &[EventPlan], spans: &[Span], cpus: usize) -> Result<Self, String> {
        let n = spans.len() as u32;
        let starts = Map::create(
            sys::BPF_MAP_TYPE_HASH,
            PROG_NAME,
            16,
            8,
            (MAX_OPEN as u32).saturating_mul(n.max(1)),
        )
        .map_err(|e| format!("cannot create the BPF start map: {e}"))?;
        let spans_map = Map::create(
            sys::BPF_MAP_TYPE_PERCPU_ARRAY,
            PROG_NAME,
            4,
            (SLOTS * 8) as u32,
            plan::map_entries(spans).max(1),
        )
        .map_err(|e| format!("cannot create the BPF histogram map: {e}"))?;
        use std::os::fd::AsRawFd;
        let maps = Maps {
            starts: starts.fd.as_raw_fd(),
            spans: spans_map.fd.as_raw_fd(),
        };
        let mut progs = Vec::new();
        let mut attached = Vec::new();
        for p in plans {
            let insns = codegen::program(p, maps)?;
            let prog = Prog::load_tracepoint(PROG_NAME, &insns)
                .map_err(|e| format!("{}:{}: {e}", p.system, p.event))?;
            attached.push(Attached::tracepoint(p.id, &prog).map_err(|e| {
                format!(
                    "cannot attach to the tracepoint {}:{}: {e}",
                    p.system, p.event
                )
            })?);
            progs.push(prog);
        }
        Ok(Self {
            attached,
            _progs: progs,
            _starts: starts,
            spans_map,
            spans: spans
                .iter()
                .map(|s| (s.name.clone(), s.label.clone()))
                .collect(),
            splits: plan::split_entries(spans),
            cpus,
        })
    }

    pub fn set_enabled(&self, on: bool) -> Result<(), String> {
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
        let read = |entry: u32, name: &str| {
            self.spans_map
                .lookup_percpu(entry, self.cpus)
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
