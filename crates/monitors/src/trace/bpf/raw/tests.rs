//! Choosing each event's attach method against a hand-made BTF (a task_struct-like struct
//! and `btf_trace_sched_waking`, see btf's tests).

use super::*;
use crate::trace::bpf::format::Field;
use crate::trace::bpf::plan::{Action, Role};

fn field(name: &str, offset: u32, size: u32, kind: Kind) -> Field {
    Field {
        name: name.into(),
        offset,
        size,
        signed: kind == Kind::Int,
        kind,
    }
}

/// sched_waking's tracefs layout (offsets as 6.x prints them).
fn waking_format(pid_size: u32) -> Format {
    Format {
        id: 375,
        fields: vec![
            field("common_pid", 4, 4, Kind::Int),
            field("comm", 8, 16, Kind::Chars),
            field("pid", 24, pid_size, Kind::Int),
            field("prio", 28, 4, Kind::Int),
            field("target_cpu", 32, 4, Kind::Int),
            field("foo", 36, 4, Kind::Int),
        ],
    }
}

fn plan(system: &str, event: &str, key: Source, checks: Vec<Check>) -> EventPlan {
    EventPlan {
        system: system.into(),
        event: event.into(),
        id: 1,
        actions: vec![Action {
            span: 0,
            role: Role::Start,
            after: None,
            key,
            checks,
            local: false,
            split: None,
            value: None,
        }],
    }
}

fn num(offset: u32, size: u32) -> Source {
    Source::Field {
        offset,
        size,
        signed: true,
    }
}

fn btf() -> Btf {
    Btf::parse(&crate::trace::bpf::btf::tests::tiny()).unwrap()
}

#[test]
fn task_fields_become_members_of_the_argument() {
    let comm = Check::Text {
        offset: 8,
        size: 16,
        any_of: vec![(b"vhost".to_vec(), true)],
    };
    let p = plan("sched", "sched_waking", num(24, 4), vec![comm]);
    // Members are read through the typed pointer: a BTF raw tracepoint on the typedef.
    let btf_id = btf().find(btf::TYPEDEF, "btf_trace_sched_waking").unwrap();
    let reads = vec![
        (8, Read::Member { arg: 0, offset: 32 }),
        (24, Read::Member { arg: 0, offset: 24 }),
    ];
    let chosen = choose(&p, &waking_format(4), Some(&btf()));
    assert_eq!(
        chosen,
        Attach::BtfRaw {
            tp: "sched_waking".into(),
            btf_id,
            reads: reads.clone(),
        }
    );
    // Refused, it becomes the plain raw tracepoint with the same reads, then classic.
    let raw = chosen.fallback("EINVAL").unwrap();
    assert_eq!(
        raw,
        Attach::Raw {
            tp: "sched_waking".into(),
            reads
        }
    );
    assert_eq!(
        raw.fallback("EPERM"),
        Some(Attach::Classic("raw tracepoint refused: EPERM".into()))
    );
    assert_eq!(Attach::Classic("x".into()).fallback("EPERM"), None);
    // task_cpu(p) through the nested thread_info, and prio in an anonymous union.
    let p = plan("sched", "sched_waking", num(32, 4), vec![]);
    let Attach::BtfRaw { reads, .. } = choose(&p, &waking_format(4), Some(&btf())) else {
        panic!("not BTF raw")
    };
    assert_eq!(reads, vec![(32, Read::Member { arg: 0, offset: 4 })]);
}

#[test]
fn an_event_without_fields_is_raw_even_without_btf() {
    let p = plan("sched", "sched_switch", Source::Cpu, vec![]);
    assert_eq!(
        choose(&p, &waking_format(4), None),
        Attach::Raw {
            tp: "sched_switch".into(),
            reads: vec![]
        }
    );
}

#[test]
fn what_cannot_be_checked_stays_classic_with_the_reason() {
    let why = |a: Attach| match a {
        Attach::Classic(why) => why,
        other => panic!("{other:?}"),
    };
    let f = waking_format(4);
    let pid = plan("sched", "sched_waking", num(24, 4), vec![]);
    assert!(why(choose(&pid, &f, None)).contains("BTF"));
    // A field the table does not know.
    let foo = plan("sched", "sched_waking", num(36, 4), vec![]);
    assert!(why(choose(&foo, &f, Some(&btf()))).contains("table"));
    // The record's pid is 8 bytes, the struct's 4: not the same field.
    assert!(why(choose(&pid, &waking_format(8), Some(&btf()))).contains("8-byte"));
    // A tracepoint the BTF lacks.
    let switch = plan("sched", "sched_switch", num(24, 4), vec![]);
    assert!(why(choose(&switch, &f, Some(&btf()))).contains("btf_trace_sched_switch"));
    // A syscall event with no known function, or whose fields are read.
    let futex = plan("syscalls", "sys_exit_futex", Source::Pid, vec![]);
    assert!(why(choose(&futex, &f, Some(&btf()))).contains("fexit"));
    let ret = plan("syscalls", "sys_exit_recvfrom", num(16, 8), vec![]);
    assert!(why(choose(&ret, &f, Some(&btf()))).contains("record"));
}

#[test]
fn a_syscall_exit_is_fexit_on_its_function() {
    let p = plan("syscalls", "sys_exit_recvfrom", Source::Pid, vec![]);
    assert_eq!(
        choose(&p, &waking_format(4), Some(&btf())),
        Attach::Fexit {
            func: "__sys_recvfrom".into(),
            btf_id: 12
        }
    );
    // Not in this BTF: classic.
    let m = plan("syscalls", "sys_exit_recvmsg", Source::Pid, vec![]);
    assert!(matches!(
        choose(&m, &waking_format(4), Some(&btf())),
        Attach::Classic(_)
    ));
}

#[test]
fn every_table_entry_names_a_known_event_once() {
    for (i, (s, e, f, _)) in FIELDS.iter().enumerate() {
        assert!(
            !FIELDS[i + 1..]
                .iter()
                .any(|(s2, e2, f2, _)| (s2, e2, f2) == (s, e, f)),
            "{s}:{e}.{f} twice"
        );
    }
}
