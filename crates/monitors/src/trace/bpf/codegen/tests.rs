//! The generated code: the bucket index computed by the emitted instructions equals
//! [`hist::index`] (run on a tiny interpreter of the ALU, jump and 64-bit memory
//! instructions), a shared map's atomic recording leaves what a per-CPU map's plain one
//! does, and the programs of the built-in sets assemble.

use super::*;
use crate::trace::bpf::insn::Insn;
use proptest::prelude::*;

/// Where the interpreter's one memory region (a map value) starts: a register holding
/// `MEM + 8k` points at its u64 number k.
const MEM: u64 = 0x1000_0000;

/// Runs ALU64/JMP code and 64-bit loads, stores and atomics on `mem` (no calls) and
/// returns r0 at `exit`.
fn interpret(p: &[Insn], regs: &mut [u64; 11], mem: &mut [u64]) -> u64 {
    let mut pc = 0usize;
    let at = |base: u64, off: i16| ((base as i64 + i64::from(off)) as u64 - MEM) as usize / 8;
    for _ in 0..10_000 {
        let i = p[pc];
        let class = i.code & 0x07;
        let src = if i.code & 0x08 != 0 {
            regs[i.src as usize]
        } else {
            i.imm as i64 as u64
        };
        let d = i.dst as usize;
        pc += 1;
        match class {
            0x07 => {
                regs[d] = match i.code & 0xf0 {
                    0x00 => regs[d].wrapping_add(src),
                    0x10 => regs[d].wrapping_sub(src),
                    0x40 => regs[d] | src,
                    0x50 => regs[d] & src,
                    0x60 => regs[d] << (src & 63),
                    0x70 => regs[d] >> (src & 63),
                    0xb0 => src,
                    0xc0 => ((regs[d] as i64) >> (src & 63)) as u64,
                    op => panic!("ALU op {op:#x} not interpreted"),
                }
            }
            0x05 => {
                let taken = match i.code & 0xf0 {
                    0x00 => true,
                    0x10 => regs[d] == src,
                    0x20 => regs[d] > src,
                    0x30 => regs[d] >= src,
                    0x50 => regs[d] != src,
                    0xa0 => regs[d] < src,
                    0xb0 => regs[d] <= src,
                    0x90 => return regs[0],
                    op => panic!("JMP op {op:#x} not interpreted"),
                };
                if taken {
                    pc = (pc as i64 + i64::from(i.off)) as usize;
                }
            }
            // ld_imm64: the high half in the next slot's immediate
            0x00 if i.code == 0x18 => {
                regs[d] = u64::from(i.imm as u32) | u64::from(p[pc].imm as u32) << 32;
                pc += 1;
            }
            // ldx dw
            0x01 if i.code == 0x79 => regs[d] = mem[at(regs[i.src as usize], i.off)],
            // st dw (an immediate)
            0x02 if i.code == 0x7a => mem[at(regs[d], i.off)] = i.imm as i64 as u64,
            // stx dw, and the atomics: add, and cmpxchg (compared with r0, r0 = the old)
            0x03 => {
                let k = at(regs[d], i.off);
                let v = regs[i.src as usize];
                match (i.code, i.imm) {
                    (0x7b, _) => mem[k] = v,
                    (0xdb, 0x00) => mem[k] = mem[k].wrapping_add(v),
                    (0xdb, 0xf1) => {
                        let old = mem[k];
                        if old == regs[0] {
                            mem[k] = v;
                        }
                        regs[0] = old;
                    }
                    other => panic!("store {other:?} not interpreted"),
                }
            }
            c => panic!("class {c:#x} (code {:#x}) not interpreted", i.code),
        }
    }
    panic!("no exit")
}

fn bucket_program() -> Vec<Insn> {
    let mut a = Asm::new();
    bucket_index(&mut a);
    a.mov(R0, R1);
    a.exit();
    a.finish().unwrap()
}

fn emitted_index(p: &[Insn], v: u64) -> u64 {
    let mut regs = [0u64; 11];
    regs[9] = v;
    interpret(p, &mut regs, &mut [])
}

/// `record_at` as a program: r0 the span's slots, r9 the duration.
fn record_program(shared: bool) -> Vec<Insn> {
    let mut a = Asm::new();
    record_at(&mut a, shared);
    a.mov_imm(R0, 0);
    a.exit();
    a.finish().unwrap()
}

/// The slots after recording `durations` one after the other with `p`.
fn recorded(p: &[Insn], durations: &[u64]) -> Vec<u64> {
    let mut slots = vec![0u64; SLOTS];
    for &d in durations {
        let mut regs = [0u64; 11];
        regs[0] = MEM;
        regs[9] = d;
        interpret(p, &mut regs, &mut slots);
    }
    slots
}

#[test]
fn shared_recording_uses_atomics_and_per_cpu_plain_adds() {
    let atomics = |p: &[Insn]| p.iter().filter(|i| i.code == 0xdb).count();
    // Count, sum, bucket, and the longest duration's tries.
    assert_eq!(atomics(&record_program(true)), 3 + MAX_TRIES);
    assert_eq!(atomics(&record_program(false)), 0);
    let r = recorded(&record_program(true), &[1_500, 40_000, 90]);
    let c = |s: Slot| r[hist::BUCKETS + s as usize];
    assert_eq!(
        (c(Slot::Count), c(Slot::Sum), c(Slot::Max)),
        (3, 41_590, 40_000)
    );
    assert_eq!(r[hist::index(1_500) as usize], 1);
    assert_eq!(r[hist::index(90) as usize], 1);
}

#[test]
fn emitted_bucket_index_matches_at_the_edges() {
    let p = bucket_program();
    let mut values = vec![0, 1, 127, 128, 129, 255, 256, 1000, u64::MAX, 1 << 34];
    for e in 7..64 {
        values.extend([(1u64 << e) - 1, 1u64 << e, (1u64 << e) + 1]);
    }
    for v in values {
        assert_eq!(emitted_index(&p, v), u64::from(hist::index(v)), "v = {v}");
    }
}

/// `one_of` as a program: r0 = 1 where r1 is one of `values`, else 0.
fn one_of_program(values: &[u64]) -> Vec<Insn> {
    let mut a = Asm::new();
    let ok = a.label();
    one_of(&mut a, values, ok);
    a.mov_imm(R0, 0);
    a.exit();
    a.bind(ok);
    a.mov_imm(R0, 1);
    a.exit();
    a.finish().unwrap()
}

fn is_one_of(p: &[Insn], v: u64) -> bool {
    let mut regs = [0u64; 11];
    regs[1] = v;
    interpret(p, &mut regs, &mut []) == 1
}

#[test]
fn numbers_are_compared_as_runs() {
    assert_eq!(
        runs(&[3, 1, 2, 2, 7, 9, 8, u64::MAX]),
        [(1, 3), (7, 9), (u64::MAX, u64::MAX)]
    );
    assert_eq!(runs(&[]), []);
    // 128 CPUs in one range: two compares, not 128.
    let cpus: Vec<u64> = (0..128).collect();
    let p = one_of_program(&cpus);
    let jumps = p
        .iter()
        .filter(|i| i.code & 0x07 == 0x05 && i.code & 0xf0 != 0x90)
        .count();
    assert_eq!(jumps, 2);
    assert!(is_one_of(&p, 0) && is_one_of(&p, 127) && !is_one_of(&p, 128));
    // cpu_idle's exit state, 4294967295, cannot be an immediate (sign-extended to 2^64 - 1).
    let exit = one_of_program(&[4_294_967_295]);
    assert!(is_one_of(&exit, 4_294_967_295) && !is_one_of(&exit, u64::MAX));
    // Nothing listed: nothing is one of them.
    assert!(!is_one_of(&one_of_program(&[]), 0));
}

proptest! {
    /// Whatever the numbers, the emitted compares accept exactly those.
    #[test]
    fn one_of_accepts_exactly_the_listed_numbers(
        small in proptest::collection::vec(0u64..300, 0..40),
        edges in proptest::collection::vec(
            prop_oneof![
                Just(i32::MAX as u64), Just(i32::MAX as u64 + 1), Just(u32::MAX as u64),
                Just(u64::MAX), Just(u64::MAX - 1), Just((-1i64) as u64 - 5), any::<u64>()
            ],
            0..6
        ),
        probes in proptest::collection::vec(any::<u64>(), 0..20),
    ) {
        let values: Vec<u64> = small.iter().chain(&edges).copied().collect();
        let p = one_of_program(&values);
        let mut tried: Vec<u64> = probes;
        for v in &values {
            tried.extend([*v, v.wrapping_sub(1), v.wrapping_add(1)]);
        }
        for v in tried {
            prop_assert_eq!(is_one_of(&p, v), values.contains(&v), "v = {}", v);
        }
    }

    /// One CPU's sequence of durations leaves the same buckets and counters in a shared
    /// map as in a CPU's own slots (what atomics add is only safety across CPUs).
    #[test]
    fn shared_recording_leaves_what_per_cpu_recording_does(
        durations in proptest::collection::vec(0u64..(1 << 36), 0..60)
    ) {
        prop_assert_eq!(
            recorded(&record_program(true), &durations),
            recorded(&record_program(false), &durations)
        );
    }

    /// With at most four keys (a bucket's ways), the table does what the hash map did:
    /// an end finds the key's open start, a start over an open one loses it.
    #[test]
    fn a_table_bucket_matches_as_a_hash_map_does(
        ops in proptest::collection::vec((any::<bool>(), 0u64..4), 1..60),
        base in 0u64..4,
    ) {
        let mut b = vec![0u64; WAYS * 2];
        let mut open = std::collections::HashMap::new();
        for (t, (start, k)) in ops.into_iter().enumerate() {
            let key = k * 1_000_003 + base;
            let now = 2 + t as u64;
            let got = table_op(&mut b, start, key, now);
            if start {
                let lost = open.insert(key, now).is_some();
                prop_assert_eq!(got == 2, lost, "start of {} at {}", key, now);
            } else {
                prop_assert_eq!(got, open.remove(&key).unwrap_or(0), "end of {}", key);
            }
        }
    }

    #[test]
    fn emitted_bucket_index_matches_everywhere(v in any::<u64>(), small in 0u64..20_000_000_000) {
        let p = bucket_program();
        prop_assert_eq!(emitted_index(&p, v), u64::from(hist::index(v)));
        prop_assert_eq!(emitted_index(&p, small), u64::from(hist::index(small)));
    }
}

#[test]
fn slots_fit_one_per_cpu_map_value() {
    assert_eq!(Slot::OpenStart as usize, COUNTERS - 1);
}

fn switch_plan() -> EventPlan {
    use crate::trace::bpf::plan::{Action, Check, Source};
    EventPlan {
        system: "sched".into(),
        event: "sched_switch".into(),
        id: 372,
        actions: vec![
            Action {
                span: 0,
                role: Role::End,
                after: None,
                key: Source::Field {
                    offset: 56,
                    size: 4,
                    signed: true,
                },
                checks: vec![Check::Text {
                    offset: 40,
                    size: 16,
                    any_of: vec![(b"vhost".to_vec(), true), (b"x".to_vec(), false)],
                }],
                local: false,
                value: None,
                split: None,
            },
            Action {
                span: 1,
                role: Role::Start,
                after: Some(0),
                key: Source::Pid,
                checks: vec![Check::Num {
                    source: Source::Cpu,
                    any_of: vec![1, 3],
                }],
                local: false,
                value: None,
                split: None,
            },
            Action {
                span: 2,
                role: Role::Cancel,
                after: None,
                key: Source::Cpu,
                checks: vec![],
                local: true,
                value: None,
                split: None,
            },
            Action {
                span: 2,
                role: Role::End,
                after: None,
                key: Source::Cpu,
                checks: vec![],
                local: true,
                value: None,
                split: None,
            },
            Action {
                span: 2,
                role: Role::Start,
                after: Some(1),
                key: Source::Cpu,
                checks: vec![],
                local: true,
                value: None,
                split: None,
            },
        ],
    }
}

const MAPS: Maps = Maps {
    opens: Some(5),
    starts: 7,
    spans: 9,
    shared: false,
};

#[test]
fn programs_of_the_built_in_sets_assemble() {
    let p = program(&switch_plan(), MAPS, Fields::Record, Clock::Kernel).unwrap();
    // Starts with r6 = ctx and ends with `r0 = 0; exit`.
    assert_eq!((p[0].code, p[0].dst, p[0].src), (0xbf, 6, 1));
    assert_eq!(p[p.len() - 1].code, 0x95);
    assert_eq!((p[p.len() - 2].code, p[p.len() - 2].imm), (0xb7, 0));
    // Every map reference is one of the two fds, marked as a map fd.
    let fds: Vec<i32> = p
        .iter()
        .filter(|i| i.code == 0x18 && i.src == 1)
        .map(|i| i.imm)
        .collect();
    // The open starts in the table (no split: the hash map is not referred to), or,
    // where the kernel refuses the table, in the hash map.
    assert!(fds.contains(&5) && fds.contains(&9));
    assert!(fds.iter().all(|f| *f == 5 || *f == 9));
    let hashed = program(
        &switch_plan(),
        Maps {
            opens: None,
            ..MAPS
        },
        Fields::Record,
        Clock::Kernel,
    )
    .unwrap();
    let fds: Vec<i32> = hashed
        .iter()
        .filter(|i| i.code == 0x18 && i.src == 1)
        .map(|i| i.imm)
        .collect();
    assert!(fds.contains(&7) && fds.contains(&9));
    assert!(fds.iter().all(|f| *f == 7 || *f == 9));
    // The sign extension of next_pid, and the "x" exact match checks its NUL.
    assert!(p
        .iter()
        .any(|i| i.code == 0xc7 && i.dst == 1 && i.imm == 32));
    assert!(p.iter().any(|i| i.code == 0x71 && i.off == 41)); // byte after "x"
                                                              // Well under the kernel's limit, no loop: every jump goes forward.
    assert!(p.len() < 4096);
    assert!(p
        .iter()
        .filter(|i| i.code & 0x07 == 0x05 && i.code & 0xf0 != 0x80 && i.code & 0xf0 != 0x90)
        .all(|i| i.off >= 0));
}

/// The same plan as a raw tracepoint's program: next_pid and next_comm are members of the
/// third argument, read with bpf_probe_read_kernel into the stack, never from r6 as bytes.
#[test]
fn a_raw_program_reads_members_through_the_argument_pointer() {
    let reads = [
        (
            56,
            Read::Member {
                arg: 2,
                offset: 1234,
            },
        ),
        (
            40,
            Read::Member {
                arg: 2,
                offset: 2000,
            },
        ),
    ];
    let p = program(&switch_plan(), MAPS, Fields::Args(&reads), Clock::Kernel).unwrap();
    // r3 = ctx[2]; r3 += member offset; call bpf_probe_read_kernel.
    assert!(p
        .iter()
        .any(|i| i.code == 0x79 && i.dst == 3 && i.src == 6 && i.off == 16));
    assert!(p
        .iter()
        .any(|i| i.code == 0x07 && i.dst == 3 && i.imm == 1234));
    assert!(p
        .iter()
        .any(|i| i.code == 0x07 && i.dst == 3 && i.imm == 2000));
    assert!(p.iter().any(|i| i.code == 0x85 && i.imm == 113));
    // No load from the context narrower than a u64 (the kernel refuses them).
    assert!(p
        .iter()
        .filter(|i| i.code & 0x07 == 0x01 && i.src == 6)
        .all(|i| i.code == 0x79));
    // The text is compared from the stack copy; the "x" exact match checks its NUL.
    assert!(p
        .iter()
        .any(|i| i.code == 0x71 && i.src == 10 && i.off == -80 + 1));
    // A number argument: loaded whole and cut to the field's 4 bytes, then sign-extended.
    let args = [(56, Read::Arg(0)), (40, Read::Member { arg: 2, offset: 8 })];
    let q = program(&switch_plan(), MAPS, Fields::Args(&args), Clock::Kernel).unwrap();
    assert!(q.iter().any(|i| i.code == 0x79 && i.src == 6 && i.off == 0));
    assert!(q.iter().any(|i| i.code == 0x77 && i.imm == 32));
    // A record offset without a raw source is an error, not a wrong load.
    let missing = [(40, Read::Member { arg: 2, offset: 8 })];
    assert!(
        program(&switch_plan(), MAPS, Fields::Args(&missing), Clock::Kernel)
            .unwrap_err()
            .contains("offset 56")
    );
}

/// In a shared map a CPU-keyed span has no slots of a CPU's own: its start, end and
/// cancel go through the start map like any other key, and every count is atomic.
#[test]
fn a_shared_map_keeps_cpu_keyed_starts_in_the_start_map() {
    let shared = Maps {
        shared: true,
        ..MAPS
    };
    let p = program(&switch_plan(), shared, Fields::Record, Clock::Kernel).unwrap();
    let q = program(&switch_plan(), MAPS, Fields::Record, Clock::Kernel).unwrap();
    let open_start = |p: &[Insn]| p.iter().any(|i| i.off == Slot::OpenStart.off());
    assert!(open_start(&q) && !open_start(&p));
    // Plain read-modify-write of a span-map value: none left in the shared program
    // (the only plain stores to memory are to the stack, r10, and the start map's value).
    let lookups = |p: &[Insn]| p.iter().filter(|i| i.code == 0x85 && i.imm == 1).count();
    assert!(lookups(&p) > lookups(&q), "span 2 now looks its key up");
    // Atomic adds (imm 0) only in the shared program; both claim table ways by cmpxchg.
    let atomic_add = |p: &[Insn]| p.iter().any(|i| i.code == 0xdb && i.imm == 0);
    assert!(atomic_add(&p) && !atomic_add(&q));
}

/// The table's code on one bucket at `MEM` (r1 the key, r9 the time), as `start` and
/// `end` use it: a start returns 0 when it took a way, 1 when it wrote over a closed
/// start of its key, 2 over an open one (a lost start), 3 when the bucket is full; an
/// end returns the start it ended and frees it (0: none open).
fn table_program(start: bool) -> Vec<Insn> {
    let mut a = Asm::new();
    let missing = a.label();
    scan(&mut a, missing);
    a.load(Size::DW, R8, R0, 0);
    if start {
        let lost = a.label();
        a.store(Size::DW, R0, 0, R9);
        a.jmp_imm(Cond::Ge, R8, 2, lost);
        a.mov_imm(R0, 1);
        a.exit();
        a.bind(lost);
        a.mov_imm(R0, 2);
        a.exit();
        a.bind(missing);
        let full = a.label();
        claim(&mut a, full);
        a.mov_imm(R0, 0);
        a.exit();
        a.bind(full);
        a.mov_imm(R0, 3);
    } else {
        a.jmp_imm(Cond::Lt, R8, 2, missing);
        a.store_imm(Size::DW, R0, 0, 0);
        a.mov(R0, R8);
        a.exit();
        a.bind(missing);
        a.mov_imm(R0, 0);
    }
    a.exit();
    a.finish().unwrap()
}

/// Runs a start (at `now`) or an end of `key` on `bucket`.
fn table_op(bucket: &mut [u64], start: bool, key: u64, now: u64) -> u64 {
    let mut regs = [0u64; 11];
    regs[0] = MEM;
    regs[1] = key;
    regs[9] = now;
    interpret(&table_program(start), &mut regs, bucket)
}

#[test]
fn a_table_bucket_holds_four_open_keys_and_frees_ended_ones() {
    let mut b = vec![0u64; WAYS * 2];
    // Key 0 is a key like any other (CPU 0, pid 0), though the empty ways read 0.
    assert_eq!(table_op(&mut b, false, 0, 5), 0);
    for k in 0..4u64 {
        assert_eq!(
            table_op(&mut b, true, k, 10 + k),
            u64::from(k == 0),
            "key {k}"
        );
    }
    assert_eq!(table_op(&mut b, true, 9, 20), 3, "a fifth open key: full");
    assert_eq!(table_op(&mut b, false, 9, 21), 0);
    assert_eq!(table_op(&mut b, false, 2, 22), 12);
    assert_eq!(table_op(&mut b, false, 2, 23), 0, "ended once");
    // The freed way takes the new key; the others keep theirs.
    assert_eq!(table_op(&mut b, true, 9, 24), 0);
    assert_eq!(table_op(&mut b, true, 3, 25), 2, "key 3's start lost");
    assert_eq!(table_op(&mut b, false, 9, 26), 24);
    assert_eq!(table_op(&mut b, false, 3, 27), 25);
    assert_eq!(table_op(&mut b, false, 0, 28), 10);
    assert_eq!(table_op(&mut b, false, 1, 29), 11);
    // A way being taken on another CPU (start 1) is no open start of its key.
    b[0] = 77;
    b[1] = 1;
    assert_eq!(table_op(&mut b, false, 77, 30), 0);
    assert_eq!(b[1], 1);
}

#[test]
fn a_constant_clock_reads_no_clock_where_the_kernel_one_does() {
    let clock_calls = |clock| {
        program(&switch_plan(), MAPS, Fields::Record, clock)
            .unwrap()
            .iter()
            .filter(|i| i.code == 0x85 && i.imm == Helper::KtimeGetNs as i32)
            .count()
    };
    assert!(clock_calls(Clock::Kernel) >= 1);
    assert_eq!(clock_calls(Clock::Constant), 0);
}
