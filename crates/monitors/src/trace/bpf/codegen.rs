//! One tracepoint's program, generated from its [`EventPlan`].
//!
//! The same program serves a classic tracepoint (r1 the record: a field is a load at its
//! offset) and a raw tracepoint or `fexit` (r1 the arguments as u64s: a field is where
//! [`super::raw`] found it, an argument or a struct member read with
//! `bpf_probe_read_kernel`); [`Fields`] says which.
//!
//! Maps (created by the loader, their fds baked into `ld_imm64`):
//! - `opens`, the open starts: an array of [`TABLE_BUCKETS`] buckets per span, each of
//!   [`WAYS`] ways `{key: u64, start: u64}` (start 0: none open; 1: a way being taken),
//!   the bucket chosen by a multiplicative hash of the key. Its lookup is inlined by the
//!   verifier (about 2 ns here) where a hash map's is a call (about 35 ns on this guest,
//!   whose every return goes through the SRSO safe-return thunk): see [`find`];
//! - `starts`, a hash map `{span: u32, pad: u32, key: u64}` → with `pad` = 1, a split
//!   span's last value at the key ([`Role::Split`]); with `pad` = 0, the open starts
//!   themselves (0: none open; keys are never deleted during a measurement) where the
//!   kernel refuses the table's atomic claim ([`Maps::opens`] `None`, before Linux 5.12);
//! - `spans`, an array indexed by span, whose value is [`SLOTS`] u64s: the histogram
//!   buckets ([`hist`]) then the counters at [`Slot`]. Per CPU as a rule (plain adds, no
//!   cache line shared between CPUs); one shared copy updated with atomic adds where
//!   [`Maps::shared`] (a set whose events come from a few CPUs, see
//!   [`super::plan::shared_histograms`]): its size then does not grow with the machine.
//!
//! Registers: r6 the record, r7 the bitmask of spans this event ended (for `after`),
//! r8/r9 kept across helper calls. Stack: `now` at -8, the start key at -24..-8, the
//! span index for `spans` at -32, a start time to insert at -40, a member read by a raw
//! program at -48, a string read by one at -80..-48, a start-map value pointer kept
//! across the clock's call at -88, the bucket index for `opens` at -92.
//!
//! Everything is loop-free and every map pointer is checked against NULL, so the verifier
//! accepts the program as it is (the bucket index is bounded before it is used).

use super::hist;
use super::insn::*;
use super::plan::{Action, Check, EventPlan, Role, Source};
use super::raw::Read;
use crate::trace::spans::MAX_SPLIT;

/// Counters after the buckets, per span and CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    /// Spans matched (each also in a bucket).
    Count = 0,
    /// Sum of their durations, ns.
    Sum,
    /// Longest duration, ns.
    Max,
    /// Ends with no open start on their key (or stamped before it).
    Unmatched,
    /// Starts that replaced an open start on the same key (its end never came).
    LostStarts,
    /// Starts dropped because the `starts` map was full.
    Full,
    /// Start events that passed the filters.
    StartEvents,
    /// End events that passed the filters.
    EndEvents,
    /// A span keyed by CPU on every side: this CPU's open start (ns, 0 = none).
    OpenStart,
}

pub const COUNTERS: usize = 9;
/// u64s per span in the `spans` map.
pub const SLOTS: usize = hist::BUCKETS + COUNTERS;
// The kernel caps a per-CPU map value at 32 KiB, and a load's offset is an i16.
const _: () = assert!(SLOTS * 8 <= 32 * 1024 && SLOTS * 8 <= i16::MAX as usize);

impl Slot {
    fn off(self) -> i16 {
        ((hist::BUCKETS + self as usize) * 8) as i16
    }
}

const NOW: i16 = -8;
const KEY: i16 = -24;
const SPAN_IX: i16 = -32;
const NEW_START: i16 = -40;
const MEMBER: i16 = -48;
const TEXT: i16 = -80;
/// A map value pointer kept across a helper call (the verifier tracks a spilled pointer).
const SLOT_PTR: i16 = -88;
/// The index of a key's bucket in `opens`.
const BUCKET_IX: i16 = -92;
/// The longest string prefix a raw program compares (the stack it reads it into).
pub const MAX_TEXT: u32 = 32;
/// BPF_NOEXIST: insert only where the key is absent.
const NOEXIST: i32 = 1;

/// Ways per bucket of the open-start table: one 64-byte value, four keys compared.
pub const WAYS: usize = 4;
/// Buckets per span: with [`WAYS`], the text matcher's open starts per span.
pub const TABLE_BUCKETS: u32 = 1 << BUCKET_BITS;
const BUCKET_BITS: i32 = 12;
const _: () = assert!(TABLE_BUCKETS as usize * WAYS == crate::trace::matcher::MAX_OPEN);
/// Bytes of one bucket.
pub const BUCKET_BYTES: u32 = (WAYS * 16) as u32;
/// The multiplier of the bucket hash (2^64 / golden ratio): consecutive keys, such as
/// pids, spread over the buckets by the product's high bits.
const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;

/// The fds of the maps a program refers to.
#[derive(Clone, Copy, Debug)]
pub struct Maps {
    /// The open-start table; `None`: the open starts are kept in `starts` instead.
    pub opens: Option<i32>,
    pub starts: i32,
    pub spans: i32,
    /// `spans` is one copy for every CPU: adds are atomic, the longest duration is raised
    /// by compare-and-exchange, and no start is kept in a CPU's own slots.
    pub shared: bool,
}

/// Where a program's context holds the record's fields.
#[derive(Clone, Copy, Debug)]
pub enum Fields<'a> {
    /// A classic tracepoint: the record itself.
    Record,
    /// A raw tracepoint or fexit: each record offset the plan reads, mapped.
    Args(&'a [(u32, Read)]),
    /// A BTF raw tracepoint: mapped the same, and a member is loaded straight from the
    /// typed pointer (the verifier makes the load fault-safe), no helper call.
    Btf(&'a [(u32, Read)]),
}

impl Fields<'_> {
    fn at(&self, offset: u32) -> Result<Option<Read>, String> {
        match self {
            Fields::Record => Ok(None),
            Fields::Args(list) | Fields::Btf(list) => list
                .iter()
                .find(|(o, _)| *o == offset)
                .map(|(_, r)| Some(*r))
                .ok_or_else(|| format!("no raw argument for record offset {offset}")),
        }
    }
}

/// Where an event's time comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Clock {
    /// `bpf_ktime_get_ns`, as shipped.
    Kernel,
    /// A constant, read where the clock would be: the matching without its clock reads
    /// (every duration 0), so that what the reads cost is the difference (a diagnostic,
    /// [`super::CONSTANT_CLOCK_VAR`]).
    Constant,
}

/// The constant of [`Clock::Constant`]: not 0, which means "no time read" and "none open".
const CONSTANT_TIME: u64 = 1 << 40;

/// What every part of a program refers to: the maps, where the fields are, the clock.
#[derive(Clone, Copy, Debug)]
struct Env<'a> {
    maps: Maps,
    fields: Fields<'a>,
    clock: Clock,
}

pub fn program(
    plan: &EventPlan,
    maps: Maps,
    fields: Fields<'_>,
    clock: Clock,
) -> Result<Vec<Insn>, String> {
    let env = Env {
        maps,
        fields,
        clock,
    };
    let mut a = Asm::new();
    a.mov(R6, R1);
    a.mov_imm(R7, 0);
    // The clock is read when an action first needs it: most events pass no filter.
    a.store_imm(Size::DW, FP, NOW, 0);
    for act in &plan.actions {
        let done = a.label();
        // A shared map has no slots of a CPU's own: a CPU-keyed span's start goes to the
        // start map under its CPU like any other key.
        match (act.role, act.local && !maps.shared) {
            (Role::End, false) => end(&mut a, act, env, done)?,
            (Role::Cancel, false) => cancel(&mut a, act, env, done)?,
            (Role::Start, false) => start(&mut a, act, env, done)?,
            (Role::End, true) => end_local(&mut a, act, env, done)?,
            (Role::Cancel, true) => cancel_local(&mut a, act, env, done)?,
            (Role::Start, true) => start_local(&mut a, act, env, done)?,
            (Role::Split, _) => split_store(&mut a, act, env, done)?,
        }
        a.bind(done);
    }
    // 0: no perf sample is written for the event (nothing reads one).
    a.mov_imm(R0, 0);
    a.exit();
    a.finish()
}

/// `dst` = the value of `s` (r0–r5 clobbered).
fn value(a: &mut Asm, dst: Reg, s: Source, fields: Fields<'_>) -> Result<(), String> {
    match s {
        Source::Field {
            offset,
            size,
            signed,
        } => {
            let sz = Size::of(size).ok_or("the plan keeps 1, 2, 4 or 8-byte fields")?;
            match fields.at(offset)? {
                None => a.load(sz, dst, R6, offset as i16),
                // The argument as the tracepoint was called with it: a u64 whose low
                // `size` bytes are the record's field.
                Some(Read::Arg(n)) => {
                    a.load(Size::DW, dst, R6, arg_offset(n)?);
                    if size < 8 {
                        let bits = (64 - 8 * size) as i32;
                        a.alu_imm(Alu::Lsh, dst, bits);
                        a.alu_imm(Alu::Rsh, dst, bits);
                    }
                }
                Some(Read::Member { arg, offset }) if matches!(fields, Fields::Btf(_)) => {
                    a.load(Size::DW, R3, R6, arg_offset(arg)?);
                    a.load(sz, dst, R3, member_offset(offset)?);
                }
                Some(Read::Member { arg, offset, .. }) => {
                    probe_read(a, arg, offset, size, MEMBER)?;
                    a.load(sz, dst, FP, MEMBER);
                }
            }
            if signed && size < 8 {
                // Sign-extend, so that an int -1 and a long -1 are the same key.
                let bits = (64 - 8 * size) as i32;
                a.alu_imm(Alu::Lsh, dst, bits);
                a.alu_imm(Alu::Arsh, dst, bits);
            }
        }
        Source::Cpu => {
            a.call(Helper::GetSmpProcessorId);
            a.mov(dst, R0);
        }
        Source::Pid => {
            // The low half is the task's pid (the thread id), as `common_pid` records.
            a.call(Helper::GetCurrentPidTgid);
            a.alu_imm(Alu::Lsh, R0, 32);
            a.alu_imm(Alu::Rsh, R0, 32);
            a.mov(dst, R0);
        }
        Source::Zero => a.mov_imm(dst, 0),
    }
    Ok(())
}

/// Where argument `n` is in a raw program's context (a u64 array; the kernel allows only
/// whole u64 reads of it).
fn arg_offset(n: u32) -> Result<i16, String> {
    // MAX_BPF_FUNC_ARGS
    if n >= 12 {
        return Err(format!("a raw tracepoint has no argument {n}"));
    }
    Ok((n * 8) as i16)
}

/// A struct member's offset as a load's (an i16).
fn member_offset(offset: u32) -> Result<i16, String> {
    i16::try_from(offset).map_err(|_| format!("member offset {offset} too large for a load"))
}

/// `bytes` bytes at `offset` into the struct argument `arg` points to, copied to the
/// stack at `to` (r1–r5 clobbered). A failed read leaves zeros, which match nothing a
/// live task would hold.
fn probe_read(a: &mut Asm, arg: u32, offset: u32, bytes: u32, to: i16) -> Result<(), String> {
    let off = i32::try_from(offset).map_err(|_| format!("member offset {offset} too large"))?;
    a.load(Size::DW, R3, R6, arg_offset(arg)?);
    a.alu_imm(Alu::Add, R3, off);
    a.mov(R1, FP);
    a.alu_imm(Alu::Add, R1, i32::from(to));
    a.mov_imm(R2, bytes as i32);
    a.call(Helper::ProbeReadKernel);
    Ok(())
}

/// Jumps to `ok` when r1 is one of `values`, else falls through (r2 clobbered).
///
/// The values go as runs of consecutive numbers, each one or two compares: a set's
/// `cpus = "workload"` on 128 CPUs `0-127` is one range instead of 128 compares on every
/// event, and idlewake's idle states `0|1|…|9` one instead of ten.
pub(super) fn one_of(a: &mut Asm, values: &[u64], ok: Label) {
    for (lo, hi) in runs(values) {
        if lo == hi {
            compare(a, Cond::Eq, lo, ok);
        } else {
            let next = a.label();
            compare(a, Cond::Lt, lo, next);
            compare(a, Cond::Le, hi, ok);
            a.bind(next);
        }
    }
}

/// `if r1 cond n goto to`, unsigned: an immediate where n fits one unchanged (the
/// kernel sign-extends it), else through r2.
fn compare(a: &mut Asm, cond: Cond, n: u64, to: Label) {
    match i32::try_from(n) {
        Ok(imm) => a.jmp_imm(cond, R1, imm, to),
        Err(_) => {
            a.ld_imm64(R2, n);
            a.jmp_reg(cond, R1, R2, to);
        }
    }
}

/// The values sorted and deduplicated as runs of consecutive numbers `(first, last)`.
pub(super) fn runs(values: &[u64]) -> Vec<(u64, u64)> {
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut out: Vec<(u64, u64)> = Vec::new();
    for v in sorted {
        match out.last_mut() {
            Some((_, hi)) if hi.checked_add(1) == Some(v) => *hi = v,
            _ => out.push((v, v)),
        }
    }
    out
}

/// Falls through when every check holds, else jumps to `fail`.
fn checks(a: &mut Asm, list: &[Check], fields: Fields<'_>, fail: Label) -> Result<(), String> {
    for c in list {
        let ok = a.label();
        match c {
            Check::Num { source, any_of } => {
                value(a, R1, *source, fields)?;
                one_of(a, any_of, ok);
            }
            Check::Text {
                offset,
                size,
                any_of,
            } => {
                // An exact value also needs the NUL after it, where there is room.
                let need = |bytes: &[u8], prefix: bool| {
                    bytes.len() + usize::from(!prefix && bytes.len() < *size as usize)
                };
                // A raw program copies the bytes every pattern needs to the stack once.
                let (base, at) = match fields.at(*offset)? {
                    None => (R6, *offset as i32),
                    Some(Read::Member { arg, offset }) if matches!(fields, Fields::Btf(_)) => {
                        // Every byte compared must be within a load's reach.
                        member_offset(offset + *size)?;
                        a.load(Size::DW, R2, R6, arg_offset(arg)?);
                        (R2, offset as i32)
                    }
                    Some(Read::Member { arg, offset, .. }) => {
                        let most = any_of
                            .iter()
                            .filter(|(b, _)| b.len() <= *size as usize)
                            .map(|(b, p)| need(b, *p))
                            .max()
                            .unwrap_or(0) as u32;
                        if most > MAX_TEXT {
                            return Err(format!("a text filter longer than {MAX_TEXT} bytes"));
                        }
                        if most > 0 {
                            probe_read(a, arg, offset, most, TEXT)?;
                        }
                        (FP, i32::from(TEXT))
                    }
                    Some(Read::Arg(_)) => return Err("a text filter on a number argument".into()),
                };
                for (bytes, prefix) in any_of {
                    if bytes.len() > *size as usize {
                        continue; // cannot match
                    }
                    let next = a.label();
                    for k in 0..need(bytes, *prefix) {
                        let b = bytes.get(k).copied().unwrap_or(0);
                        a.load(Size::B, R1, base, (at + k as i32) as i16);
                        a.jmp_imm(Cond::Ne, R1, i32::from(b), next);
                    }
                    a.ja(ok);
                    a.bind(next);
                }
            }
        }
        a.ja(fail);
        a.bind(ok);
    }
    Ok(())
}

/// `dst` = this event's time: read once, by the first action that needs it (r0–r5
/// clobbered).
fn now(a: &mut Asm, dst: Reg, clock: Clock) {
    let have = a.label();
    a.load(Size::DW, dst, FP, NOW);
    a.jmp_imm(Cond::Ne, dst, 0, have);
    match clock {
        Clock::Kernel => a.call(Helper::KtimeGetNs),
        Clock::Constant => a.ld_imm64(R0, CONSTANT_TIME),
    }
    a.store(Size::DW, FP, NOW, R0);
    a.mov(dst, R0);
    a.bind(have);
}

/// Writes the start-map key of `act` to the stack.
fn key(a: &mut Asm, act: &Action, fields: Fields<'_>) -> Result<(), String> {
    value(a, R1, act.key, fields)?;
    a.store(Size::DW, FP, KEY + 8, R1);
    a.store_imm(Size::W, FP, KEY, act.span as i32);
    a.store_imm(Size::W, FP, KEY + 4, 0);
    Ok(())
}

/// `r0` = this span's per-CPU slots, or a jump to `missing` (r1–r5 clobbered).
fn span_slots(a: &mut Asm, span: u32, maps: Maps, missing: Label) {
    a.store_imm(Size::W, FP, SPAN_IX, span as i32);
    a.ld_map_fd(R1, maps.spans);
    a.mov(R2, FP);
    a.alu_imm(Alu::Add, R2, SPAN_IX as i32);
    a.call(Helper::MapLookupElem);
    a.jmp_imm(Cond::Eq, R0, 0, missing);
}

fn bump(a: &mut Asm, span: u32, slot: Slot, maps: Maps) {
    let skip = a.label();
    span_slots(a, span, maps, skip);
    inc(a, R0, slot.off(), maps.shared);
    a.bind(skip);
}

fn start_map_call(a: &mut Asm, maps: Maps, h: Helper) {
    a.ld_map_fd(R1, maps.starts);
    a.mov(R2, FP);
    a.alu_imm(Alu::Add, R2, KEY as i32);
    if h == Helper::MapUpdateElem {
        a.mov(R3, FP);
        a.alu_imm(Alu::Add, R3, NEW_START as i32);
        a.mov_imm(R4, NOEXIST);
    }
    a.call(h);
}

fn end(a: &mut Asm, act: &Action, env: Env<'_>, done: Label) -> Result<(), String> {
    let maps = env.maps;
    let unmatched = a.label();
    checks(a, &act.checks, env.fields, done)?;
    key(a, act, env.fields)?;
    bump(a, act.span, Slot::EndEvents, maps);
    // The clock is read only once a start is found open: the clock is the dearest part
    // of a program (35-40 of its ~65 ns on the KVM guest here), and most ends find no
    // start (a switch to a task nobody traced waking). `start` reads it after its hash
    // map lookup too, so both ends of a span are stamped at the same point of their
    // programs; through the table (an inlined lookup, a few ns) it reads it before.
    find(a, act.span, maps, unmatched);
    a.load(Size::DW, R8, R0, 0);
    // 0: the key's start was ended or cancelled (keys stay, see `start`); 1: a way of
    // the table being taken by a start on another CPU.
    a.jmp_imm(Cond::Lt, R8, 2, unmatched);
    a.store(Size::DW, FP, SLOT_PTR, R0);
    now(a, R9, env.clock);
    a.load(Size::DW, R0, FP, SLOT_PTR);
    // A start stamped after this end (another CPU's clock read later) stays open.
    a.jmp_reg(Cond::Lt, R9, R8, unmatched);
    a.alu_reg(Alu::Sub, R9, R8);
    a.store_imm(Size::DW, R0, 0, 0);
    a.ld_imm64(R1, 1u64 << act.span);
    a.alu_reg(Alu::Or, R7, R1);
    record(a, act.span, maps, done);
    if let Some(first) = act.split {
        tag(a, first, maps, done);
    }
    a.ja(done);
    a.bind(unmatched);
    bump(a, act.span, Slot::Unmatched, maps);
    Ok(())
}

/// Adds the duration in r9 to the span's counters and histogram.
fn record(a: &mut Asm, span: u32, maps: Maps, done: Label) {
    span_slots(a, span, maps, done);
    record_at(a, maps.shared);
}

/// How many times a shared map's longest duration is tried before it is left: each
/// failure means another CPU raised it in between, which with the few CPUs a shared map
/// serves is already rare.
const MAX_TRIES: usize = 3;

/// [`record`] with the span's slots already in r0.
fn record_at(a: &mut Asm, shared: bool) {
    inc(a, R0, Slot::Count.off(), shared);
    add(a, R0, Slot::Sum.off(), R9, shared);
    let kept = a.label();
    if shared {
        a.mov(R3, R0);
        a.load(Size::DW, R0, R3, Slot::Max.off());
        for _ in 0..MAX_TRIES {
            a.jmp_reg(Cond::Ge, R0, R9, kept);
            a.mov(R4, R0);
            a.atomic_cmpxchg(R3, Slot::Max.off(), R9);
            a.jmp_reg(Cond::Eq, R0, R4, kept);
        }
        a.bind(kept);
        a.mov(R0, R3);
    } else {
        a.load(Size::DW, R1, R0, Slot::Max.off());
        a.jmp_reg(Cond::Ge, R1, R9, kept);
        a.store(Size::DW, R0, Slot::Max.off(), R9);
        a.bind(kept);
    }
    bucket_index(a);
    a.alu_imm(Alu::Lsh, R1, 3);
    a.alu_reg(Alu::Add, R0, R1);
    inc(a, R0, 0, shared);
}

/// `*(u64 *)(base + off) += src`, atomically in a shared map (r1 clobbered).
fn add(a: &mut Asm, base: Reg, off: i16, src: Reg, shared: bool) {
    if shared {
        a.atomic_add(base, off, src);
    } else {
        a.load(Size::DW, R1, base, off);
        a.alu_reg(Alu::Add, R1, src);
        a.store(Size::DW, base, off, R1);
    }
}

/// r1 = [`hist::index`] of r9, with r2–r5 as scratch: a binary search for the highest set
/// bit unrolled into six steps (no loop for the verifier to bound), then the mantissa.
pub(super) fn bucket_index(a: &mut Asm) {
    let m = hist::MANTISSA_BITS as i32;
    let have = a.label();
    a.mov(R1, R9);
    a.jmp_imm(Cond::Lt, R9, 1 << m, have);
    a.mov(R2, R9); // x, shifted down
    a.mov_imm(R3, 0); // e, the highest set bit
    for k in [32, 16, 8, 4, 2, 1] {
        let zero = a.label();
        a.mov(R4, R2);
        a.alu_imm(Alu::Rsh, R4, k);
        a.jmp_imm(Cond::Eq, R4, 0, zero);
        a.mov(R2, R4);
        a.alu_imm(Alu::Add, R3, k);
        a.bind(zero);
    }
    // ((e - M + 1) << M) | ((v >> (e - M)) & (2^M - 1))
    a.mov(R4, R3);
    a.alu_imm(Alu::Sub, R4, m);
    a.mov(R1, R9);
    a.alu_reg(Alu::Rsh, R1, R4);
    a.alu_imm(Alu::And, R1, (1 << m) - 1);
    a.mov(R5, R3);
    a.alu_imm(Alu::Sub, R5, m - 1);
    a.alu_imm(Alu::Lsh, R5, m);
    a.alu_reg(Alu::Or, R1, R5);
    a.bind(have);
    // The verifier sees the index bounded here, and the access in the value's range.
    let inside = a.label();
    a.jmp_imm(Cond::Le, R1, hist::OVERFLOW as i32, inside);
    a.mov_imm(R1, hist::OVERFLOW as i32);
    a.bind(inside);
}

/// `*(u64 *)(base + off) += 1`, atomically in a shared map (r1 clobbered).
fn inc(a: &mut Asm, base: Reg, off: i16, shared: bool) {
    if shared {
        a.mov_imm(R1, 1);
        a.atomic_add(base, off, R1);
    } else {
        a.load(Size::DW, R1, base, off);
        a.alu_imm(Alu::Add, R1, 1);
        a.store(Size::DW, base, off, R1);
    }
}

/// The after-check shared by both kinds of start.
fn chained(a: &mut Asm, act: &Action, done: Label) {
    if let Some(j) = act.after {
        a.ld_imm64(R1, 1u64 << j);
        a.alu_reg(Alu::And, R1, R7);
        a.jmp_imm(Cond::Eq, R1, 0, done);
    }
}

// A span keyed by CPU on every side keeps its open start in its own per-CPU slots: one
// inlined array lookup instead of hash map operations under a bucket lock. Classic
// tracepoint programs do not nest on a CPU. Raw ones may (a hard interrupt's program
// inside softirq_entry's, which runs with interrupts on): a start written in the few
// instructions between an end's read and clear of the slot is lost, one span uncounted.

fn start_local(a: &mut Asm, act: &Action, env: Env<'_>, done: Label) -> Result<(), String> {
    let maps = env.maps;
    chained(a, act, done);
    checks(a, &act.checks, env.fields, done)?;
    span_slots(a, act.span, maps, done);
    a.mov(R8, R0);
    inc(a, R8, Slot::StartEvents.off(), false);
    let fresh = a.label();
    a.load(Size::DW, R1, R8, Slot::OpenStart.off());
    a.jmp_imm(Cond::Eq, R1, 0, fresh);
    inc(a, R8, Slot::LostStarts.off(), false);
    a.bind(fresh);
    now(a, R1, env.clock);
    a.store(Size::DW, R8, Slot::OpenStart.off(), R1);
    Ok(())
}

fn end_local(a: &mut Asm, act: &Action, env: Env<'_>, done: Label) -> Result<(), String> {
    let maps = env.maps;
    let unmatched = a.label();
    checks(a, &act.checks, env.fields, done)?;
    span_slots(a, act.span, maps, done);
    a.mov(R8, R0);
    inc(a, R8, Slot::EndEvents.off(), false);
    // The clock only where a start is open: most ends find none (see `end`).
    a.load(Size::DW, R1, R8, Slot::OpenStart.off());
    a.jmp_imm(Cond::Eq, R1, 0, unmatched);
    now(a, R9, env.clock);
    a.load(Size::DW, R1, R8, Slot::OpenStart.off());
    a.jmp_reg(Cond::Lt, R9, R1, unmatched);
    a.alu_reg(Alu::Sub, R9, R1);
    a.store_imm(Size::DW, R8, Slot::OpenStart.off(), 0);
    a.ld_imm64(R1, 1u64 << act.span);
    a.alu_reg(Alu::Or, R7, R1);
    a.mov(R0, R8);
    record_at(a, false);
    if let Some(first) = act.split {
        key(a, act, env.fields)?;
        tag(a, first, maps, done);
    }
    a.ja(done);
    a.bind(unmatched);
    inc(a, R8, Slot::Unmatched.off(), false);
    Ok(())
}

// Splits: the value remembered at a key shares the start map, under the span's own index
// with `pad` = 1, so a split needs no map of its own; its histograms are span-map entries
// after the spans' (`first` + value).

/// Adds the duration in r9 to the histogram of the value remembered at the start key on
/// the stack, if any and below [`MAX_SPLIT`].
fn tag(a: &mut Asm, first: u32, maps: Maps, done: Label) {
    a.store_imm(Size::W, FP, KEY + 4, 1);
    start_map_call(a, maps, Helper::MapLookupElem);
    a.jmp_imm(Cond::Eq, R0, 0, done);
    a.load(Size::DW, R1, R0, 0);
    a.jmp_imm(Cond::Ge, R1, MAX_SPLIT as i32, done);
    a.alu_imm(Alu::Add, R1, first as i32);
    a.store(Size::W, FP, SPAN_IX, R1);
    a.ld_map_fd(R1, maps.spans);
    a.mov(R2, FP);
    a.alu_imm(Alu::Add, R2, SPAN_IX as i32);
    a.call(Helper::MapLookupElem);
    a.jmp_imm(Cond::Eq, R0, 0, done);
    record_at(a, maps.shared);
}

/// Remembers the split's value at its key (any earlier one replaced).
fn split_store(a: &mut Asm, act: &Action, env: Env<'_>, done: Label) -> Result<(), String> {
    let Some(v) = act.value else { return Ok(()) };
    checks(a, &act.checks, env.fields, done)?;
    key(a, act, env.fields)?;
    a.store_imm(Size::W, FP, KEY + 4, 1);
    value(a, R1, v, env.fields)?;
    a.store(Size::DW, FP, NEW_START, R1);
    a.ld_map_fd(R1, env.maps.starts);
    a.mov(R2, FP);
    a.alu_imm(Alu::Add, R2, KEY as i32);
    a.mov(R3, FP);
    a.alu_imm(Alu::Add, R3, NEW_START as i32);
    a.mov_imm(R4, 0); // BPF_ANY
    a.call(Helper::MapUpdateElem);
    Ok(())
}

fn cancel_local(a: &mut Asm, act: &Action, env: Env<'_>, done: Label) -> Result<(), String> {
    let maps = env.maps;
    checks(a, &act.checks, env.fields, done)?;
    span_slots(a, act.span, maps, done);
    a.store_imm(Size::DW, R0, Slot::OpenStart.off(), 0);
    Ok(())
}

fn cancel(a: &mut Asm, act: &Action, env: Env<'_>, done: Label) -> Result<(), String> {
    let maps = env.maps;
    checks(a, &act.checks, env.fields, done)?;
    key(a, act, env.fields)?;
    find(a, act.span, maps, done);
    // Only an open start: a way being taken (1) is another key's by now.
    a.load(Size::DW, R1, R0, 0);
    a.jmp_imm(Cond::Lt, R1, 2, done);
    a.store_imm(Size::DW, R0, 0, 0);
    Ok(())
}

fn start(a: &mut Asm, act: &Action, env: Env<'_>, done: Label) -> Result<(), String> {
    let maps = env.maps;
    chained(a, act, done);
    checks(a, &act.checks, env.fields, done)?;
    key(a, act, env.fields)?;
    bump(a, act.span, Slot::StartEvents, maps);
    if let Some(fd) = maps.opens {
        start_table(a, act.span, env, fd, done);
        return Ok(());
    }
    let insert = a.label();
    // A key once inserted stays, its value 0 when no start is open: an end or a cancel
    // writes 0 through the looked-up value instead of deleting, and a later start on the
    // key writes its time there, so the common case is one lookup each, without the
    // bucket lock and element churn of a delete and an insert. The clock is read after
    // the lookup, as `end` reads it.
    start_map_call(a, maps, Helper::MapLookupElem);
    a.jmp_imm(Cond::Eq, R0, 0, insert);
    a.store(Size::DW, FP, SLOT_PTR, R0);
    now(a, R9, env.clock);
    a.load(Size::DW, R0, FP, SLOT_PTR);
    a.load(Size::DW, R8, R0, 0);
    a.store(Size::DW, R0, 0, R9);
    a.jmp_imm(Cond::Eq, R8, 0, done);
    bump(a, act.span, Slot::LostStarts, maps);
    a.ja(done);
    a.bind(insert);
    now(a, R9, env.clock);
    a.store(Size::DW, FP, NEW_START, R9);
    start_map_call(a, maps, Helper::MapUpdateElem);
    a.jmp_imm(Cond::Eq, R0, 0, done);
    bump(a, act.span, Slot::Full, maps);
    Ok(())
}

// The open-start table. A bucket's ways are taken by cmpxchg of their start from 0 to 1
// (so two CPUs never take one way), then written key first, start last: a reader that
// sees the new key sees 1 or the start, never the way's previous start (x86 keeps stores
// in order). A way whose start is 0 is free for any key: an end or a cancel frees it by
// writing 0, as the hash map's value is cleared in place. A key is always in the first
// way that holds it; a bucket whose four ways hold open starts of other keys drops the
// start, counted as the hash map's full map was ([`Slot::Full`]).

/// `r0` = the address of the start of the key on the stack, or a jump to `missing`
/// (r1–r5 clobbered).
fn find(a: &mut Asm, span: u32, maps: Maps, missing: Label) {
    let Some(fd) = maps.opens else {
        start_map_call(a, maps, Helper::MapLookupElem);
        a.jmp_imm(Cond::Eq, R0, 0, missing);
        return;
    };
    bucket(a, span, fd, missing);
    a.load(Size::DW, R1, FP, KEY + 8);
    scan(a, missing);
}

/// `r0` = the key's bucket (the key on the stack), or a jump to `missing` (r1–r5
/// clobbered): an inlined array lookup, no call.
fn bucket(a: &mut Asm, span: u32, fd: i32, missing: Label) {
    a.load(Size::DW, R2, FP, KEY + 8);
    a.ld_imm64(R3, GOLDEN);
    a.alu_reg(Alu::Mul, R2, R3);
    a.alu_imm(Alu::Rsh, R2, 64 - BUCKET_BITS);
    a.alu_imm(Alu::Add, R2, (span * TABLE_BUCKETS) as i32);
    a.store(Size::W, FP, BUCKET_IX, R2);
    a.ld_map_fd(R1, fd);
    a.mov(R2, FP);
    a.alu_imm(Alu::Add, R2, BUCKET_IX as i32);
    a.call(Helper::MapLookupElem);
    a.jmp_imm(Cond::Eq, R0, 0, missing);
}

/// With r0 a bucket and r1 a key: r0 = the start of the first way holding the key, or a
/// jump to `missing` with r0 unchanged (r2 clobbered).
pub(super) fn scan(a: &mut Asm, missing: Label) {
    let hits: Vec<Label> = (0..WAYS).map(|_| a.label()).collect();
    for (w, hit) in hits.iter().enumerate() {
        a.load(Size::DW, R2, R0, (16 * w) as i16);
        a.jmp_reg(Cond::Eq, R2, R1, *hit);
    }
    a.ja(missing);
    let found = a.label();
    for (w, hit) in hits.into_iter().enumerate() {
        a.bind(hit);
        a.alu_imm(Alu::Add, R0, (16 * w + 8) as i32);
        a.ja(found);
    }
    a.bind(found);
}

/// With r0 a bucket holding no way of the key in r1: takes the first free way for it,
/// its start r9, or jumps to `full` (r0, r2, r3, r8 clobbered).
pub(super) fn claim(a: &mut Asm, full: Label) {
    let taken = a.label();
    a.mov(R8, R0);
    a.mov_imm(R3, 1);
    for w in 0..WAYS {
        let start = (16 * w + 8) as i16;
        let next = a.label();
        // A plain look first: a locked cmpxchg only on a way that looks free.
        a.load(Size::DW, R2, R8, start);
        a.jmp_imm(Cond::Ne, R2, 0, next);
        a.mov_imm(R0, 0);
        a.atomic_cmpxchg(R8, start, R3);
        a.jmp_imm(Cond::Ne, R0, 0, next);
        a.store(Size::DW, R8, start - 8, R1);
        a.store(Size::DW, R8, start, R9);
        a.ja(taken);
        a.bind(next);
    }
    a.ja(full);
    a.bind(taken);
}

/// A start through the table: the clock first, so that the way is written a few
/// instructions after it is found (a way another CPU frees and takes meanwhile would get
/// this start's time), then the key's way, or a free one.
fn start_table(a: &mut Asm, span: u32, env: Env<'_>, fd: i32, done: Label) {
    let maps = env.maps;
    now(a, R9, env.clock);
    bucket(a, span, fd, done);
    a.load(Size::DW, R1, FP, KEY + 8);
    let missing = a.label();
    scan(a, missing);
    a.load(Size::DW, R8, R0, 0);
    a.store(Size::DW, R0, 0, R9);
    a.jmp_imm(Cond::Lt, R8, 2, done);
    bump(a, span, Slot::LostStarts, maps);
    a.ja(done);
    a.bind(missing);
    let full = a.label();
    claim(a, full);
    a.ja(done);
    a.bind(full);
    bump(a, span, Slot::Full, maps);
}

#[cfg(test)]
mod tests;
