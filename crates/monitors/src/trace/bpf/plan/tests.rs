//! Span declarations → program actions, on event layouts of this project's guest kernel.

use super::*;
use crate::trace::bpf::format::parse;
use crate::trace::spans::{built_in, parse_set};

/// `(system, event, format text)` as tracefs of kernel 6.18 gives them (common fields cut).
const FORMATS: &[(&str, &str, &str)] = &[
    ("sched", "sched_waking", "ID: 375\n\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n\tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;\n\tfield:int target_cpu;\toffset:32;\tsize:4;\tsigned:1;\n"),
    ("sched", "sched_switch", "ID: 372\n\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"),
    ("ipi", "ipi_send_cpu", "ID: 354\n\tfield:unsigned int cpu;\toffset:8;\tsize:4;\tsigned:0;\n\tfield:void * callback;\toffset:24;\tsize:8;\tsigned:0;\n"),
    ("irq_vectors", "reschedule_entry", "ID: 155\n\tfield:int vector;\toffset:8;\tsize:4;\tsigned:1;\n"),
    ("irq_vectors", "call_function_single_entry", "ID: 149\n\tfield:int vector;\toffset:8;\tsize:4;\tsigned:1;\n"),
    ("power", "cpu_idle", "ID: 568\n\tfield:u32 state;\toffset:8;\tsize:4;\tsigned:0;\n\tfield:u32 cpu_id;\toffset:12;\tsize:4;\tsigned:0;\n"),
    ("irq", "irq_handler_entry", "ID: 225\n\tfield:int irq;\toffset:8;\tsize:4;\tsigned:1;\n\tfield:__data_loc char[] name;\toffset:12;\tsize:4;\tsigned:0;\n"),
    ("irq", "irq_handler_exit", "ID: 224\n\tfield:int irq;\toffset:8;\tsize:4;\tsigned:1;\n\tfield:int ret;\toffset:12;\tsize:4;\tsigned:1;\n"),
    ("irq", "softirq_raise", "ID: 221\n\tfield:unsigned int vec;\toffset:8;\tsize:4;\tsigned:0;\n"),
    ("irq", "softirq_entry", "ID: 223\n\tfield:unsigned int vec;\toffset:8;\tsize:4;\tsigned:0;\n"),
    ("irq", "softirq_exit", "ID: 222\n\tfield:unsigned int vec;\toffset:8;\tsize:4;\tsigned:0;\n"),
    ("syscalls", "sys_exit_recvfrom", "ID: 2221\n\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n\tfield:long ret;\toffset:16;\tsize:8;\tsigned:1;\n"),
    ("syscalls", "sys_exit_recvmsg", "ID: 2209\n\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n\tfield:long ret;\toffset:16;\tsize:8;\tsigned:1;\n"),
    ("sock", "sock_recv_length", "ID: 2283\n\tfield:void * sk;\toffset:8;\tsize:8;\tsigned:0;\n\tfield:__u16 family;\toffset:16;\tsize:2;\tsigned:0;\n\tfield:__u16 protocol;\toffset:18;\tsize:2;\tsigned:0;\n\tfield:int ret;\toffset:20;\tsize:4;\tsigned:1;\n\tfield:int flags;\toffset:24;\tsize:4;\tsigned:1;\n"),
    // x86 KVM's, as include/trace/events/kvm.h and arch/x86/kvm/trace.h declare them.
    ("kvm", "kvm_set_irq", "ID: 1402\n\tfield:unsigned int gsi;\toffset:8;\tsize:4;\tsigned:0;\n\tfield:int level;\toffset:12;\tsize:4;\tsigned:1;\n\tfield:int irq_source_id;\toffset:16;\tsize:4;\tsigned:1;\n"),
    ("kvm", "kvm_msi_set_irq", "ID: 1440\n\tfield:__u64 address;\toffset:8;\tsize:8;\tsigned:0;\n\tfield:__u64 data;\toffset:16;\tsize:8;\tsigned:0;\n"),
    ("kvm", "kvm_entry", "ID: 1463\n\tfield:unsigned int vcpu_id;\toffset:8;\tsize:4;\tsigned:0;\n\tfield:unsigned long rip;\toffset:16;\tsize:8;\tsigned:0;\n\tfield:bool immediate_exit;\toffset:24;\tsize:1;\tsigned:0;\n"),
];

const CALL_FUNCTION: u64 = 0xffff_ffff_8100_1000;

pub(super) fn fake_format(system: &str, event: &str) -> Result<Format, String> {
    FORMATS
        .iter()
        .find(|(s, e, _)| *s == system && *e == event)
        .ok_or_else(|| "no such event".to_string())
        .and_then(|(_, _, t)| parse(t.as_bytes()))
}

fn fake_symbols(name: &str, prefix: bool) -> Vec<u64> {
    let known = "generic_smp_call_function_single_interrupt";
    let hit = if prefix {
        known.starts_with(name)
    } else {
        known == name
    };
    if hit {
        vec![CALL_FUNCTION]
    } else {
        Vec::new()
    }
}

fn plan_of(spans: &[Span]) -> Result<Vec<EventPlan>, PlanError> {
    plan(spans, &fake_format, &fake_symbols)
}

fn pid_at(offset: u32) -> Source {
    Source::Field {
        offset,
        size: 4,
        signed: true,
    }
}

#[test]
fn the_wakeup_set_becomes_one_program_per_event() {
    let plans = plan_of(&built_in("wakeup").unwrap().spans).unwrap();
    let events: Vec<(&str, u64)> = plans.iter().map(|p| (p.event.as_str(), p.id)).collect();
    assert_eq!(
        events,
        [
            ("sched_waking", 375),
            ("sched_switch", 372),
            ("ipi_send_cpu", 354),
            ("reschedule_entry", 155),
            ("call_function_single_entry", 149),
        ]
    );
    assert_eq!(
        plans[0].actions[..1],
        [Action {
            span: 0,
            role: Role::Start,
            after: None,
            key: pid_at(24),
            checks: vec![],
            local: false,
            value: None,
            split: None,
        }]
    );
    assert_eq!(plans[1].actions[0].role, Role::End);
    assert_eq!(plans[1].actions[0].key, pid_at(56));
    // Both IPI spans start at ipi_send_cpu, keyed by the target CPU, told apart by the
    // callback: NULL for a reschedule, the function's address for a call.
    let ipi = &plans[2].actions;
    assert_eq!(ipi.len(), 2);
    let cpu = Source::Field {
        offset: 8,
        size: 4,
        signed: false,
    };
    let callback = Source::Field {
        offset: 24,
        size: 8,
        signed: false,
    };
    assert_eq!((ipi[0].span, ipi[0].key), (1, cpu));
    assert_eq!(
        ipi[0].checks,
        [Check::Num {
            source: callback,
            any_of: vec![0]
        }]
    );
    assert_eq!(
        ipi[1].checks,
        [Check::Num {
            source: callback,
            any_of: vec![CALL_FUNCTION]
        }]
    );
    assert_eq!(plans[3].actions[0].key, Source::Cpu);
}

#[test]
fn idlewake_keeps_idle_spans_per_cpu_and_splits_by_idle_state() {
    let set = built_in("idlewake").unwrap();
    let plans = plan_of(&set.spans).unwrap();
    let idle = plans.iter().find(|p| p.event == "cpu_idle").unwrap();
    let name = |i: u32| set.spans[i as usize].name.as_str();
    // Every idle span is keyed by CPU alone; the IPI part follows the target CPU.
    for a in &idle.actions {
        let local = !matches!(name(a.span), "ipi_idle_exit");
        assert_eq!(a.local, local, "{}", name(a.span));
    }
    let state = Source::Field {
        offset: 8,
        size: 4,
        signed: false,
    };
    // Per split span, after its end, cancel and start: remember the state entered (0-9),
    // keyed by CPU, in the order the text matcher applies them.
    let on_idle: Vec<(&str, Role)> = idle
        .actions
        .iter()
        .map(|a| (name(a.span), a.role))
        .collect();
    assert_eq!(
        on_idle,
        [
            ("ipi_idle_exit", Role::End),
            ("ipi_idle_exit", Role::Split),
            ("idle_exit_run", Role::Cancel),
            ("idle_exit_run", Role::Start),
            ("idle_exit_run", Role::Split),
            ("residency", Role::End),
            ("residency", Role::Start),
            ("residency", Role::Split),
        ]
    );
    let split = &idle.actions[1];
    assert_eq!((split.key, split.value), (Source::Cpu, Some(state)));
    assert_eq!(
        split.checks,
        [Check::Num {
            source: state,
            any_of: (0..10).collect()
        }]
    );
    // Each split span's end tags its value's histogram: entries after the 5 spans', ten
    // per split span, in declaration order.
    let n = set.spans.len() as u32;
    assert_eq!(map_entries(&set.spans), n + 30);
    assert_eq!(
        split_entries(&set.spans),
        [(2, n), (3, n + 10), (4, n + 20)]
    );
    assert_eq!(idle.actions[0].split, Some(n));
    assert_eq!(idle.actions[5].split, Some(n + 20));
    let switch = plans.iter().find(|p| p.event == "sched_switch").unwrap();
    let run_end = switch
        .actions
        .iter()
        .find(|a| name(a.span) == "idle_exit_run" && a.role == Role::End)
        .unwrap();
    assert_eq!(run_end.split, Some(n + 10));
    // Only ends carry the entry; a split names a number field the event has.
    assert!(plans
        .iter()
        .flat_map(|p| &p.actions)
        .all(|a| a.split.is_none() || a.role == Role::End));
    let bad = set.spans[2..3].to_vec();
    let mut bad = bad;
    bad[0].split.as_mut().unwrap().field = "states".into();
    let e = plan_of(&bad).unwrap_err();
    assert!(
        matches!(&e, PlanError::Bad(m) if m.contains("span \"ipi_idle_exit\", event power:cpu_idle: split: the event has no field \"states\"")),
        "{e:?}"
    );
}

#[test]
fn netrx_orders_end_cancel_start_and_chains_after() {
    let set = built_in("netrx").unwrap();
    let host: Vec<Span> = set.spans.into_iter().take(5).collect();
    let plans = plan_of(&host).unwrap();
    let on = |ev: &str| -> Vec<(u32, Role, Option<u32>)> {
        plans
            .iter()
            .find(|p| p.event == ev)
            .unwrap()
            .actions
            .iter()
            .map(|a| (a.span, a.role, a.after))
            .collect()
    };
    // sched_switch ends (c) `sched`, then starts (d) `syscall` only where it ended (c).
    assert_eq!(
        on("sched_switch"),
        [(3, Role::End, None), (4, Role::Start, Some(3))]
    );
    assert_eq!(
        on("softirq_raise"),
        [(0, Role::End, None), (1, Role::Start, None)]
    );
    assert_eq!(on("softirq_exit"), [(2, Role::Cancel, None)]);
    // (a) and (b) begin and end on one CPU: per-CPU slots; (c) and (d) follow a task.
    let local: Vec<(u32, bool)> = plans
        .iter()
        .flat_map(|p| p.actions.iter().map(|a| (a.span, a.local)))
        .collect();
    assert!(local.iter().all(|(s, l)| *l == (*s < 3)), "{local:?}");
    let entry = plans.iter().find(|p| p.event == "softirq_entry").unwrap();
    assert_eq!(
        entry.actions[0].checks,
        [Check::Num {
            source: Source::Field {
                offset: 8,
                size: 4,
                signed: false
            },
            any_of: vec![3]
        }]
    );
}

const ONE: &str = r#"
name = "t"
[[span]]
name = "s"
label = "S"
from = { events = ["sched:sched_waking"], key = "field:pid" }
to = { events = ["sched:sched_switch"], key = "field:next_pid" }
"#;

fn plan_text(text: &str) -> Result<Vec<EventPlan>, PlanError> {
    plan_of(&parse_set(text, "f.toml").unwrap().spans)
}

#[test]
fn char_filters_compare_bytes_numbers_compare_as_numbers() {
    let p = plan_text(&ONE.replace(
        "key = \"field:next_pid\"",
        "key = \"field:next_pid\", where = { next_comm = \"vhost*|ksoftirqd/0\" }",
    ))
    .unwrap();
    assert_eq!(
        p[1].actions[0].checks,
        [Check::Text {
            offset: 40,
            size: 16,
            any_of: vec![(b"vhost".to_vec(), true), (b"ksoftirqd/0".to_vec(), false)]
        }]
    );
    let p = plan_text(&ONE.replace(
        "key = \"field:pid\"",
        "key = \"field:pid\", where = { pid = \"0x10|-1\", cpu = \"1\" }",
    ))
    .unwrap();
    assert_eq!(
        p[0].actions[0].checks,
        [
            Check::Num {
                source: Source::Cpu,
                any_of: vec![1]
            },
            Check::Num {
                source: pid_at(24),
                any_of: vec![16, u64::MAX]
            },
        ]
    );
}

#[test]
fn a_missing_event_or_field_is_the_users_mistake() {
    let e = plan_text(&ONE.replace("sched:sched_waking", "sched:sched_wakeup_new")).unwrap_err();
    assert!(
        matches!(&e, PlanError::Bad(m) if m.contains("sched:sched_wakeup_new, which this kernel does not have")),
        "{e:?}"
    );
    let e = plan_text(&ONE.replace("field:next_pid", "field:nextpid")).unwrap_err();
    assert!(
        matches!(&e, PlanError::Bad(m) if m.contains("span \"s\", event sched:sched_switch: key: the event has no field \"nextpid\" (its fields: prev_comm, prev_pid, prev_state, next_comm, next_pid)")),
        "{e:?}"
    );
    let e = plan_text(&ONE.replace(
        "key = \"field:pid\"",
        "key = \"cpu\", where = { prio = \"1\" }",
    ))
    .unwrap_err();
    assert!(
        matches!(&e, PlanError::Bad(m) if m.contains("where: the event has no field \"prio\"")),
        "{e:?}"
    );
}

#[test]
fn what_bpf_cannot_express_falls_back() {
    for (from, to, why) in [
        // A state printed as a letter by the print format.
        (
            "key = \"field:next_pid\"",
            "key = \"field:next_pid\", where = { prev_state = \"S\" }",
            "compares number fields as numbers",
        ),
        (
            "key = \"field:next_pid\"",
            "key = \"field:next_comm\"",
            "not a number",
        ),
        (
            "key = \"field:pid\"",
            "key = \"field:pid\", where = { pid = \"1*\" }",
            "compares number fields as numbers",
        ),
    ] {
        let e = plan_text(&ONE.replace(from, to)).unwrap_err();
        assert!(
            matches!(&e, PlanError::Unsupported(m) if m.contains(why)),
            "{e:?}"
        );
    }
    let irq = r#"
name = "t"
[[span]]
name = "s"
label = "S"
from = { events = ["irq:irq_handler_entry"], key = "cpu", where = { name = "virtio*" } }
to = { events = ["irq:irq_handler_exit"], key = "cpu" }
"#;
    assert!(matches!(plan_text(irq), Err(PlanError::Unsupported(m)) if m.contains("not a number")));
    let sym = ONE.replace(
        "key = \"field:pid\"",
        "key = \"field:pid\", where = { comm = \"x\" }",
    );
    assert!(plan_text(&sym).is_ok());
}

#[test]
fn numbers_parse_as_the_loads_give_them() {
    assert_eq!(number("3"), Some(3));
    assert_eq!(number("0x89"), Some(0x89));
    assert_eq!(number("-1"), Some(u64::MAX));
    assert_eq!(number("S"), None);
    assert_eq!(number("0x"), None);
}

#[test]
fn the_workloads_cpus_are_one_more_check_on_every_action() {
    let spans = crate::trace::spans::on_cpus(built_in("idlewake").unwrap().spans, &[0, 2]);
    let plans = plan_of(&spans).unwrap();
    for p in &plans {
        for a in &p.actions {
            // ipi_send_cpu's own `cpu` field is the IPI's target; elsewhere the CPU that
            // logged the event.
            let source = match p.event.as_str() {
                "ipi_send_cpu" => Source::Field {
                    offset: 8,
                    size: 4,
                    signed: false,
                },
                _ => Source::Cpu,
            };
            let want = Check::Num {
                source,
                any_of: vec![0, 2],
            };
            assert!(a.checks.contains(&want), "{}: {a:?}", p.event);
        }
    }
}

/// A set restricted to a few listed CPUs (idlewake on idle-ipi's pair) shares one copy
/// of its histograms; a set that traces the whole machine, or a restriction to many CPUs,
/// keeps them per CPU. At 256 CPUs that is the difference between 1 MiB and 250 MiB.
#[test]
fn histograms_are_shared_only_where_a_few_cpus_write_them() {
    use crate::trace::spans::on_cpus;
    let idlewake = built_in("idlewake").unwrap().spans;
    assert!(
        !shared_histograms(&idlewake),
        "no CPUs named: the whole machine"
    );
    let pair = on_cpus(idlewake.clone(), &[2, 3]);
    assert!(shared_histograms(&pair));
    let many = on_cpus(
        idlewake.clone(),
        &(0..=SHARED_MAX_CPUS as u32).collect::<Vec<_>>(),
    );
    assert!(!shared_histograms(&many), "{} CPUs", SHARED_MAX_CPUS + 1);
    assert!(!shared_histograms(&built_in("netrx").unwrap().spans));
    assert!(!shared_histograms(&[]));
    // One side without the restriction (a user set that filters only its starts) is enough
    // to keep them per CPU.
    let mut partial = pair.clone();
    partial[0].to.filters.clear();
    assert!(!shared_histograms(&partial));

    let entries = map_entries(&pair);
    assert_eq!(entries, 5 + 3 * MAX_SPLIT as u32);
    let value = crate::trace::bpf::codegen::SLOTS * 8;
    let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
    let shared = span_map_bytes(entries, value, 256, true);
    let per_cpu = span_map_bytes(entries, value, 256, false);
    assert!(mib(shared) < 1.0, "{} MiB", mib(shared));
    assert!(mib(per_cpu) > 240.0, "{} MiB", mib(per_cpu));
    assert_eq!(per_cpu, shared * 256);
}
