//! Cheaper attachment than a classic tracepoint, per event, where the kernel allows it.
//!
//! A classic (perf) tracepoint program runs after the kernel assembled the event's record
//! in a per-CPU buffer: every field is computed and copied whether the program reads it or
//! not. A raw tracepoint program (BPF_PROG_TYPE_RAW_TRACEPOINT, BPF_RAW_TRACEPOINT_OPEN)
//! runs on the tracepoint's own arguments (its TP_PROTO, as an array of u64) with no record
//! at all; typed by BTF (`tp_btf`, [`Attach::BtfRaw`]) it also reads a struct member an
//! argument points to with one load instead of a helper call. A syscall exit is better
//! taken by `fexit` on the function behind it than by
//! a syscall tracepoint, whose mere enabling puts every syscall of every task on the slow
//! path (TIF_SYSCALL_TRACEPOINT).
//!
//! The span declarations name tracefs fields (`sched_switch.next_pid`); how a field is
//! computed from the tracepoint's arguments is each event's `TP_fast_assign`, which is
//! kernel source, not data the kernel exports. So [`FIELDS`] is a table for the events the
//! built-in sets use, each entry checked against the kernel's BTF before it is trusted: the
//! argument's position and type in `btf_trace_<event>`, the struct member's offset and size
//! in vmlinux. An event reading a field the table lacks, or any field without BTF, keeps its
//! classic program ([`Attach::Classic`], with the reason), so nothing a set declares is lost.

use super::btf::{self, Btf};
use super::format::{Format, Kind};
use super::plan::{Check, EventPlan, Source};

/// How a raw program reads what the classic one reads at a record offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Read {
    /// The tracepoint's argument `n` (a number or a pointer, as the record stores it).
    Arg(u32),
    /// `offset` bytes into the struct that argument `arg` points to, read with
    /// `bpf_probe_read_kernel` (as many bytes as the record's field has).
    Member { arg: u32, offset: u32 },
}

/// How one event's program is attached.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Attach {
    /// A perf tracepoint program reading the record (why not raw: the reason).
    Classic(String),
    /// A raw tracepoint program on tracepoint `tp`, each record offset the plan reads
    /// mapped to where the arguments hold it.
    Raw { tp: String, reads: Vec<(u32, Read)> },
    /// The same program typed by BTF (`tp_btf`: BPF_PROG_TYPE_TRACING, BPF_TRACE_RAW_TP,
    /// attached to `btf_trace_<tp>`, the typedef `btf_id`): the verifier knows what each
    /// pointer argument points to, so a struct member is one load instead of a
    /// `bpf_probe_read_kernel` call. Chosen where the program reads a member.
    BtfRaw {
        tp: String,
        btf_id: u32,
        reads: Vec<(u32, Read)>,
    },
    /// An `fexit` program on kernel function `func` (its BTF id), for a syscall's exit.
    Fexit { func: String, btf_id: u32 },
}

impl Attach {
    /// A short name for notes and the doctor.
    pub fn method(&self) -> &'static str {
        match self {
            Attach::Classic(_) => "tracepoint",
            Attach::Raw { .. } => "raw tracepoint",
            Attach::BtfRaw { .. } => "BTF raw tracepoint",
            Attach::Fexit { .. } => "fexit",
        }
    }

    /// What to load instead where the kernel refuses this method (`why`): a BTF raw
    /// tracepoint becomes a plain one, a raw tracepoint or fexit the classic program.
    pub fn fallback(&self, why: &str) -> Option<Attach> {
        match self {
            Attach::Classic(_) => None,
            Attach::BtfRaw { tp, reads, .. } => Some(Attach::Raw {
                tp: tp.clone(),
                reads: reads.clone(),
            }),
            _ => Some(Attach::Classic(format!("{} refused: {why}", self.method()))),
        }
    }
}

/// Where a field comes from: argument `n`, or member `path` of the struct `name` that
/// argument `n` points to (alternatives in order, for members kernels moved).
#[derive(Clone, Copy, Debug)]
pub enum Expr {
    Arg(u32),
    Member(u32, &'static str, &'static [&'static str]),
}

use Expr::{Arg, Member};

const TASK: &str = "task_struct";
/// `task_cpu(p)`: in `thread_info` where it lives in the task (x86, arm64), else `cpu`.
const TASK_CPU: &[&str] = &["thread_info.cpu", "cpu"];

/// (system, event, field, where the raw arguments hold it): each event's `TP_PROTO` and
/// `TP_fast_assign` as the kernel's include/trace/events/*.h have them since 6.1.
pub const FIELDS: &[(&str, &str, &str, Expr)] = &[
    // sched_switch(bool preempt, struct task_struct *prev, *next, unsigned int prev_state)
    (
        "sched",
        "sched_switch",
        "prev_pid",
        Member(1, TASK, &["pid"]),
    ),
    (
        "sched",
        "sched_switch",
        "next_pid",
        Member(2, TASK, &["pid"]),
    ),
    (
        "sched",
        "sched_switch",
        "prev_comm",
        Member(1, TASK, &["comm"]),
    ),
    (
        "sched",
        "sched_switch",
        "next_comm",
        Member(2, TASK, &["comm"]),
    ),
    (
        "sched",
        "sched_switch",
        "prev_prio",
        Member(1, TASK, &["prio"]),
    ),
    (
        "sched",
        "sched_switch",
        "next_prio",
        Member(2, TASK, &["prio"]),
    ),
    // sched_wakeup_template(struct task_struct *p)
    ("sched", "sched_waking", "pid", Member(0, TASK, &["pid"])),
    ("sched", "sched_waking", "comm", Member(0, TASK, &["comm"])),
    ("sched", "sched_waking", "prio", Member(0, TASK, &["prio"])),
    (
        "sched",
        "sched_waking",
        "target_cpu",
        Member(0, TASK, TASK_CPU),
    ),
    ("sched", "sched_wakeup", "pid", Member(0, TASK, &["pid"])),
    ("sched", "sched_wakeup", "comm", Member(0, TASK, &["comm"])),
    (
        "sched",
        "sched_wakeup",
        "target_cpu",
        Member(0, TASK, TASK_CPU),
    ),
    // ipi_send_cpu(const unsigned int cpu, unsigned long callsite, void *callback)
    ("ipi", "ipi_send_cpu", "cpu", Arg(0)),
    ("ipi", "ipi_send_cpu", "callsite", Arg(1)),
    ("ipi", "ipi_send_cpu", "callback", Arg(2)),
    // cpu(unsigned int state, unsigned int cpu_id)
    ("power", "cpu_idle", "state", Arg(0)),
    ("power", "cpu_idle", "cpu_id", Arg(1)),
    // irq_handler_entry(int irq, struct irqaction *action); _exit(.., int ret)
    ("irq", "irq_handler_entry", "irq", Arg(0)),
    ("irq", "irq_handler_exit", "irq", Arg(0)),
    ("irq", "irq_handler_exit", "ret", Arg(2)),
    // softirq(unsigned int vec_nr)
    ("irq", "softirq_raise", "vec", Arg(0)),
    ("irq", "softirq_entry", "vec", Arg(0)),
    ("irq", "softirq_exit", "vec", Arg(0)),
    // x86_irq_vector(int vector)
    ("irq_vectors", "reschedule_entry", "vector", Arg(0)),
    ("irq_vectors", "reschedule_exit", "vector", Arg(0)),
    ("irq_vectors", "call_function_entry", "vector", Arg(0)),
    (
        "irq_vectors",
        "call_function_single_entry",
        "vector",
        Arg(0),
    ),
    ("irq_vectors", "call_function_single_exit", "vector", Arg(0)),
    // kvm_set_irq(unsigned int gsi, int level, int irq_source_id)
    ("kvm", "kvm_set_irq", "gsi", Arg(0)),
    ("kvm", "kvm_set_irq", "level", Arg(1)),
    ("kvm", "kvm_set_irq", "irq_source_id", Arg(2)),
    // kvm_msi_set_irq(__u64 address, __u64 data)
    ("kvm", "kvm_msi_set_irq", "address", Arg(0)),
    ("kvm", "kvm_msi_set_irq", "data", Arg(1)),
    // kvm_entry(struct kvm_vcpu *vcpu, ...)
    (
        "kvm",
        "kvm_entry",
        "vcpu_id",
        Member(0, "kvm_vcpu", &["vcpu_id"]),
    ),
    // net_dev_template(struct sk_buff *skb)
    ("net", "netif_receive_skb", "skbaddr", Arg(0)),
    (
        "net",
        "netif_receive_skb",
        "len",
        Member(0, "sk_buff", &["len"]),
    ),
    ("net", "net_dev_queue", "skbaddr", Arg(0)),
    (
        "net",
        "net_dev_queue",
        "len",
        Member(0, "sk_buff", &["len"]),
    ),
    // napi_poll(struct napi_struct *napi, int work, int budget)
    ("napi", "napi_poll", "work", Arg(1)),
    ("napi", "napi_poll", "budget", Arg(2)),
    // contention_begin(void *lock, unsigned int flags); contention_end(void *lock, int ret)
    ("lock", "contention_begin", "lock_addr", Arg(0)),
    ("lock", "contention_begin", "flags", Arg(1)),
    ("lock", "contention_end", "lock_addr", Arg(0)),
    ("lock", "contention_end", "ret", Arg(1)),
];

/// Syscall exits taken at the return of the kernel function that does the work (every
/// entry point, the compat ones included, goes through it).
pub const SYSCALL_EXITS: &[(&str, &str)] = &[
    ("sys_exit_recvfrom", "__sys_recvfrom"),
    ("sys_exit_recvmsg", "__sys_recvmsg"),
    ("sys_exit_sendto", "__sys_sendto"),
    ("sys_exit_sendmsg", "__sys_sendmsg"),
];

/// The variable that keeps every event on classic tracepoint programs (`classic`), or
/// raw ones on plain raw tracepoints, members read by helper calls (`raw`), for comparing
/// the methods and for kernels where one misbehaves.
pub const ATTACH_VAR: &str = "PERFLAB_TRACE_ATTACH";

/// Whether the user asked for classic programs only.
pub fn classic_forced() -> bool {
    std::env::var(ATTACH_VAR).as_deref() == Ok("classic")
}

/// Whether the user asked for plain raw tracepoints, not BTF-typed ones.
fn untyped_forced() -> bool {
    std::env::var(ATTACH_VAR).as_deref() == Ok("raw")
}

/// The record offsets a plan's program reads (keys, number filters, text filters).
fn offsets(plan: &EventPlan) -> Vec<u32> {
    let field = |s: &Source| match s {
        Source::Field { offset, .. } => Some(*offset),
        _ => None,
    };
    let mut out = Vec::new();
    for a in &plan.actions {
        out.extend(field(&a.key));
        for c in &a.checks {
            out.extend(match c {
                Check::Num { source, .. } => field(source),
                Check::Text { offset, .. } => Some(*offset),
            });
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// How the program of `plan` is attached on this kernel (`btf`: vmlinux's, if any).
pub fn choose(plan: &EventPlan, format: &Format, btf: Option<&Btf>) -> Attach {
    let classic = |why: String| Attach::Classic(why);
    let offsets = offsets(plan);
    if plan.system == "syscalls" {
        let Some((_, func)) = SYSCALL_EXITS.iter().find(|(e, _)| *e == plan.event) else {
            return classic("no fexit function known for this syscall event".into());
        };
        if !offsets.is_empty() {
            return classic("a syscall event's fields are read from its record".into());
        }
        let Some(btf) = btf else {
            return classic("fexit needs the kernel's BTF".into());
        };
        return match btf.find(btf::FUNC, func) {
            Some(btf_id) => Attach::Fexit {
                func: func.to_string(),
                btf_id,
            },
            None => classic(format!("the kernel's BTF has no function {func}")),
        };
    }
    let mut reads = Vec::new();
    if !offsets.is_empty() {
        let Some(btf) = btf else {
            return classic("raw tracepoint fields need the kernel's BTF".into());
        };
        let Some(args) = btf.tracepoint_args(&plan.event) else {
            return classic(format!("the kernel's BTF has no btf_trace_{}", plan.event));
        };
        for off in offsets {
            let Some(field) = format.fields.iter().find(|f| f.offset == off) else {
                return classic(format!("no field at record offset {off}"));
            };
            match read(btf, &args, plan, &field.name, field.size, field.kind) {
                Ok(r) => reads.push((off, r)),
                Err(why) => return classic(format!("field {}: {why}", field.name)),
            }
        }
    }
    let typed = reads.iter().any(|(_, r)| matches!(r, Read::Member { .. }));
    let btf_id = btf
        .filter(|_| typed && !untyped_forced())
        .and_then(|b| b.find(btf::TYPEDEF, &format!("btf_trace_{}", plan.event)));
    match btf_id {
        Some(btf_id) => Attach::BtfRaw {
            tp: plan.event.clone(),
            btf_id,
            reads,
        },
        None => Attach::Raw {
            tp: plan.event.clone(),
            reads,
        },
    }
}

/// Where the raw arguments hold `field` (of `size` bytes in the record), checked in BTF.
fn read(
    btf: &Btf,
    args: &[u32],
    plan: &EventPlan,
    field: &str,
    size: u32,
    kind: Kind,
) -> Result<Read, String> {
    let (_, _, _, expr) = FIELDS
        .iter()
        .find(|(s, e, f, _)| *s == plan.system && *e == plan.event && *f == field)
        .ok_or("not in the raw tracepoint table")?;
    let arg_type = |n: u32| {
        args.get(n as usize)
            .copied()
            .ok_or_else(|| format!("the tracepoint has {} arguments, not {}", args.len(), n + 1))
    };
    match *expr {
        Arg(n) => {
            let t = arg_type(n)?;
            if kind == Kind::Chars || btf.scalar(t).is_none() {
                return Err(format!("argument {n} is not a number"));
            }
            Ok(Read::Arg(n))
        }
        Member(n, want, paths) => {
            let t = arg_type(n)?;
            let s = btf
                .pointee_struct(t)
                .ok_or_else(|| format!("argument {n} is not a struct pointer"))?;
            let name = btf.get(s).map(|t| btf.name(t.name_off)).unwrap_or_default();
            if name != want.as_bytes() {
                return Err(format!("argument {n} is not a struct {want}"));
            }
            let m = paths
                .iter()
                .find_map(|p| btf.member(s, p))
                .ok_or_else(|| format!("struct {want} has no {}", paths.join(" or ")))?;
            let fits = match kind {
                Kind::Chars => btf.char_array(m.type_id) == Some(size),
                _ => btf.scalar(m.type_id).is_some_and(|x| x.size == size),
            };
            if !fits {
                return Err(format!(
                    "{want}.{} is not the record's {size}-byte field",
                    paths[0]
                ));
            }
            Ok(Read::Member {
                arg: n,
                offset: m.offset,
            })
        }
    }
}

#[cfg(test)]
mod tests;
