//! One tracepoint's program, generated from its [`EventPlan`].
//!
//! Maps (created by the loader, their fds baked into `ld_imm64`):
//! - `starts`, a hash map `{span: u32, pad: u32, key: u64}` → start time in ns; with
//!   `pad` = 1, a split span's last value at the key ([`Role::Split`]);
//! - `spans`, a per-CPU array indexed by span, whose value is [`SLOTS`] u64s: the
//!   histogram buckets ([`hist`]) then the counters at [`Slot`].
//!
//! Registers: r6 the record, r7 the bitmask of spans this event ended (for `after`),
//! r8/r9 kept across helper calls. Stack: `now` at -8, the start key at -24..-8, the
//! span index for `spans` at -32, a start time to insert at -40.
//!
//! Everything is loop-free and every map pointer is checked against NULL, so the verifier
//! accepts the program as it is (the bucket index is bounded before it is used).

use super::hist;
use super::insn::*;
use super::plan::{Action, Check, EventPlan, Role, Source};
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
/// BPF_NOEXIST: insert only where the key is absent.
const NOEXIST: i32 = 1;

/// The fds of the maps a program refers to.
#[derive(Clone, Copy, Debug)]
pub struct Maps {
    pub starts: i32,
    pub spans: i32,
}

pub fn program(plan: &EventPlan, maps: Maps) -> Result<Vec<Insn>, String> {
    let mut a = Asm::new();
    a.mov(R6, R1);
    a.mov_imm(R7, 0);
    a.call(Helper::KtimeGetNs);
    a.store(Size::DW, FP, NOW, R0);
    for act in &plan.actions {
        let done = a.label();
        match (act.role, act.local) {
            (Role::End, false) => end(&mut a, act, maps, done),
            (Role::Cancel, false) => cancel(&mut a, act, maps, done),
            (Role::Start, false) => start(&mut a, act, maps, done),
            (Role::End, true) => end_local(&mut a, act, maps, done),
            (Role::Cancel, true) => cancel_local(&mut a, act, maps, done),
            (Role::Start, true) => start_local(&mut a, act, maps, done),
            (Role::Split, _) => split_store(&mut a, act, maps, done),
        }
        a.bind(done);
    }
    // 0: no perf sample is written for the event (nothing reads one).
    a.mov_imm(R0, 0);
    a.exit();
    a.finish()
}

/// `dst` = the value of `s` (r0–r5 clobbered).
fn value(a: &mut Asm, dst: Reg, s: Source) {
    match s {
        Source::Field {
            offset,
            size,
            signed,
        } => {
            let sz = Size::of(size).expect("the plan keeps 1, 2, 4 or 8-byte fields");
            a.load(sz, dst, R6, offset as i16);
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
}

/// Falls through when every check holds, else jumps to `fail`.
fn checks(a: &mut Asm, list: &[Check], fail: Label) {
    for c in list {
        let ok = a.label();
        match c {
            Check::Num { source, any_of } => {
                value(a, R1, *source);
                for n in any_of {
                    a.ld_imm64(R2, *n);
                    a.jmp_reg(Cond::Eq, R1, R2, ok);
                }
            }
            Check::Text {
                offset,
                size,
                any_of,
            } => {
                for (bytes, prefix) in any_of {
                    // An exact value also needs the NUL after it, where there is room.
                    let need = bytes.len() + usize::from(!prefix && bytes.len() < *size as usize);
                    if bytes.len() > *size as usize {
                        continue; // cannot match
                    }
                    let next = a.label();
                    for k in 0..need {
                        let b = bytes.get(k).copied().unwrap_or(0);
                        a.load(Size::B, R1, R6, (*offset as usize + k) as i16);
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
}

/// Writes the start-map key of `act` to the stack.
fn key(a: &mut Asm, act: &Action) {
    value(a, R1, act.key);
    a.store(Size::DW, FP, KEY + 8, R1);
    a.store_imm(Size::W, FP, KEY, act.span as i32);
    a.store_imm(Size::W, FP, KEY + 4, 0);
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
    a.load(Size::DW, R1, R0, slot.off());
    a.alu_imm(Alu::Add, R1, 1);
    a.store(Size::DW, R0, slot.off(), R1);
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

fn end(a: &mut Asm, act: &Action, maps: Maps, done: Label) {
    let unmatched = a.label();
    checks(a, &act.checks, done);
    key(a, act);
    bump(a, act.span, Slot::EndEvents, maps);
    start_map_call(a, maps, Helper::MapLookupElem);
    a.jmp_imm(Cond::Eq, R0, 0, unmatched);
    a.load(Size::DW, R8, R0, 0);
    a.load(Size::DW, R9, FP, NOW);
    // A start stamped after this end (another CPU's clock read later) stays open.
    a.jmp_reg(Cond::Lt, R9, R8, unmatched);
    a.alu_reg(Alu::Sub, R9, R8);
    start_map_call(a, maps, Helper::MapDeleteElem);
    a.ld_imm64(R1, 1u64 << act.span);
    a.alu_reg(Alu::Or, R7, R1);
    record(a, act.span, maps, done);
    if let Some(first) = act.split {
        tag(a, first, maps, done);
    }
    a.ja(done);
    a.bind(unmatched);
    bump(a, act.span, Slot::Unmatched, maps);
}

/// Adds the duration in r9 to the span's counters and histogram.
fn record(a: &mut Asm, span: u32, maps: Maps, done: Label) {
    span_slots(a, span, maps, done);
    record_at(a);
}

/// [`record`] with the span's slots already in r0.
fn record_at(a: &mut Asm) {
    for (slot, op) in [(Slot::Count, None), (Slot::Sum, Some(R9))] {
        a.load(Size::DW, R1, R0, slot.off());
        match op {
            None => a.alu_imm(Alu::Add, R1, 1),
            Some(r) => a.alu_reg(Alu::Add, R1, r),
        }
        a.store(Size::DW, R0, slot.off(), R1);
    }
    let kept = a.label();
    a.load(Size::DW, R1, R0, Slot::Max.off());
    a.jmp_reg(Cond::Ge, R1, R9, kept);
    a.store(Size::DW, R0, Slot::Max.off(), R9);
    a.bind(kept);
    bucket_index(a);
    a.alu_imm(Alu::Lsh, R1, 3);
    a.alu_reg(Alu::Add, R0, R1);
    a.load(Size::DW, R2, R0, 0);
    a.alu_imm(Alu::Add, R2, 1);
    a.store(Size::DW, R0, 0, R2);
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

/// `*(slot of r8) += 1`.
fn add_one(a: &mut Asm, base: Reg, slot: Slot) {
    a.load(Size::DW, R1, base, slot.off());
    a.alu_imm(Alu::Add, R1, 1);
    a.store(Size::DW, base, slot.off(), R1);
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
// inlined array lookup instead of hash map operations under a bucket lock. Tracepoint
// programs do not nest on a CPU, so nothing else writes the slot meanwhile.

fn start_local(a: &mut Asm, act: &Action, maps: Maps, done: Label) {
    chained(a, act, done);
    checks(a, &act.checks, done);
    span_slots(a, act.span, maps, done);
    a.mov(R8, R0);
    add_one(a, R8, Slot::StartEvents);
    let fresh = a.label();
    a.load(Size::DW, R1, R8, Slot::OpenStart.off());
    a.jmp_imm(Cond::Eq, R1, 0, fresh);
    add_one(a, R8, Slot::LostStarts);
    a.bind(fresh);
    a.load(Size::DW, R1, FP, NOW);
    a.store(Size::DW, R8, Slot::OpenStart.off(), R1);
}

fn end_local(a: &mut Asm, act: &Action, maps: Maps, done: Label) {
    let unmatched = a.label();
    checks(a, &act.checks, done);
    span_slots(a, act.span, maps, done);
    a.mov(R8, R0);
    add_one(a, R8, Slot::EndEvents);
    a.load(Size::DW, R1, R8, Slot::OpenStart.off());
    a.jmp_imm(Cond::Eq, R1, 0, unmatched);
    a.load(Size::DW, R9, FP, NOW);
    a.jmp_reg(Cond::Lt, R9, R1, unmatched);
    a.alu_reg(Alu::Sub, R9, R1);
    a.store_imm(Size::DW, R8, Slot::OpenStart.off(), 0);
    a.ld_imm64(R1, 1u64 << act.span);
    a.alu_reg(Alu::Or, R7, R1);
    a.mov(R0, R8);
    record_at(a);
    if let Some(first) = act.split {
        key(a, act);
        tag(a, first, maps, done);
    }
    a.ja(done);
    a.bind(unmatched);
    add_one(a, R8, Slot::Unmatched);
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
    record_at(a);
}

/// Remembers the split's value at its key (any earlier one replaced).
fn split_store(a: &mut Asm, act: &Action, maps: Maps, done: Label) {
    let Some(v) = act.value else { return };
    checks(a, &act.checks, done);
    key(a, act);
    a.store_imm(Size::W, FP, KEY + 4, 1);
    value(a, R1, v);
    a.store(Size::DW, FP, NEW_START, R1);
    a.ld_map_fd(R1, maps.starts);
    a.mov(R2, FP);
    a.alu_imm(Alu::Add, R2, KEY as i32);
    a.mov(R3, FP);
    a.alu_imm(Alu::Add, R3, NEW_START as i32);
    a.mov_imm(R4, 0); // BPF_ANY
    a.call(Helper::MapUpdateElem);
}

fn cancel_local(a: &mut Asm, act: &Action, maps: Maps, done: Label) {
    checks(a, &act.checks, done);
    span_slots(a, act.span, maps, done);
    a.store_imm(Size::DW, R0, Slot::OpenStart.off(), 0);
}

fn cancel(a: &mut Asm, act: &Action, maps: Maps, done: Label) {
    checks(a, &act.checks, done);
    key(a, act);
    start_map_call(a, maps, Helper::MapDeleteElem);
}

fn start(a: &mut Asm, act: &Action, maps: Maps, done: Label) {
    chained(a, act, done);
    checks(a, &act.checks, done);
    key(a, act);
    bump(a, act.span, Slot::StartEvents, maps);
    let insert = a.label();
    start_map_call(a, maps, Helper::MapLookupElem);
    a.jmp_imm(Cond::Eq, R0, 0, insert);
    a.load(Size::DW, R1, FP, NOW);
    a.store(Size::DW, R0, 0, R1);
    bump(a, act.span, Slot::LostStarts, maps);
    a.ja(done);
    a.bind(insert);
    a.load(Size::DW, R1, FP, NOW);
    a.store(Size::DW, FP, NEW_START, R1);
    start_map_call(a, maps, Helper::MapUpdateElem);
    a.jmp_imm(Cond::Eq, R0, 0, done);
    bump(a, act.span, Slot::Full, maps);
}

#[cfg(test)]
mod tests;
