use super::*;

/// (kind, name, vlen, kind_flag, size_or_type, extra words)
type Spec<'a> = (u32, &'a str, u32, bool, u32, Vec<u32>);

/// Builds a BTF blob from type specs, the strings appended as they are named.
fn blob(types: &[Spec<'_>]) -> Vec<u8> {
    let mut strings = vec![0u8];
    let mut words: Vec<u32> = Vec::new();
    let name = |s: &str, strings: &mut Vec<u8>| -> u32 {
        if s.is_empty() {
            return 0;
        }
        let at = strings.len() as u32;
        strings.extend_from_slice(s.as_bytes());
        strings.push(0);
        at
    };
    for (kind, n, vlen, flag, sot, extra) in types {
        let off = name(n, &mut strings);
        words.push(off);
        words.push((u32::from(*flag) << 31) | (kind << 24) | vlen);
        words.push(*sot);
        words.extend(extra);
    }
    let type_bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let mut out = Vec::new();
    out.extend_from_slice(&MAGIC.to_le_bytes());
    out.push(1); // version
    out.push(0); // flags
    for w in [
        24u32,
        0,
        type_bytes.len() as u32,
        type_bytes.len() as u32,
        strings.len() as u32,
    ] {
        out.extend_from_slice(&w.to_le_bytes());
    }
    out.extend_from_slice(&type_bytes);
    out.extend_from_slice(&strings);
    out
}

/// A task_struct-like struct and a tracepoint's prototype, the string table by hand so
/// members can name their strings.
pub(crate) fn tiny() -> Vec<u8> {
    // Strings first, by hand, so members can refer to them.
    let names = [
        "",
        "int",
        "char",
        "thread_info",
        "flags",
        "cpu",
        "task_struct",
        "pid",
        "comm",
        "prio",
        "p",
        "btf_trace_sched_waking",
        "__sys_recvfrom",
    ];
    let mut strings = Vec::new();
    let mut at = std::collections::HashMap::new();
    for n in names {
        at.insert(n, strings.len() as u32);
        strings.extend_from_slice(n.as_bytes());
        strings.push(0);
    }
    let s = |n: &str| at[n];
    let info = |kind: u32, vlen: u32, flag: bool| (u32::from(flag) << 31) | (kind << 24) | vlen;
    let types: Vec<Vec<u32>> = vec![
        vec![s("int"), info(INT, 0, false), 4, (1 << 24) | 32], // 1
        vec![s("char"), info(INT, 0, false), 1, 8],             // 2
        vec![0, info(ARRAY, 0, false), 0, 2, 1, 16],            // 3: char[16]
        // 4: struct thread_info { int flags; int cpu; }
        vec![
            s("thread_info"),
            info(STRUCT, 2, false),
            8,
            s("flags"),
            1,
            0,
            s("cpu"),
            1,
            32,
        ],
        // 5: struct task_struct { thread_info; union { int prio; }; int pid; char comm[16]; }
        vec![
            s("task_struct"),
            info(STRUCT, 4, false),
            48,
            s("thread_info"),
            4,
            0,
            0,
            6,
            64,
            s("pid"),
            1,
            192,
            s("comm"),
            3,
            256,
        ],
        vec![0, info(UNION, 1, false), 4, s("prio"), 1, 0], // 6
        vec![0, info(PTR, 0, false), 5],                    // 7: task_struct *
        // 8: void (void *, task_struct *p)
        vec![0, info(FUNC_PROTO, 2, false), 0, 0, 9, s("p"), 7],
        vec![0, info(PTR, 0, false), 0], // 9: void *
        vec![0, info(PTR, 0, false), 8], // 10
        vec![s("btf_trace_sched_waking"), info(TYPEDEF, 0, false), 10], // 11
        vec![s("__sys_recvfrom"), info(FUNC, 1, false), 8], // 12
        vec![0, info(CONST, 0, false), 7], // 13
    ];
    let words: Vec<u8> = types
        .concat()
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .collect();
    let mut out = Vec::new();
    out.extend_from_slice(&MAGIC.to_le_bytes());
    out.extend_from_slice(&[1, 0]);
    for w in [
        24u32,
        0,
        words.len() as u32,
        words.len() as u32,
        strings.len() as u32,
    ] {
        out.extend_from_slice(&w.to_le_bytes());
    }
    out.extend_from_slice(&words);
    out.extend_from_slice(&strings);
    out
}

#[test]
fn reads_a_tracepoint_prototype_and_struct_members() {
    let btf = Btf::read(&tiny()[..]).unwrap();
    assert_eq!(btf.tracepoint_args("sched_waking"), Some(vec![7]));
    assert_eq!(btf.tracepoint_args("sched_switch"), None);
    let task = btf.pointee_struct(7).unwrap();
    assert_eq!(task, 5);
    // Through a const qualifier too.
    assert_eq!(btf.pointee_struct(13), Some(5));
    let pid = btf.member(task, "pid").unwrap();
    assert_eq!(pid.offset, 24);
    assert_eq!(
        btf.scalar(pid.type_id),
        Some(Scalar {
            size: 4,
            signed: true
        })
    );
    // A nested path, and a member of an anonymous union.
    assert_eq!(btf.member(task, "thread_info.cpu").unwrap().offset, 4);
    assert_eq!(btf.member(task, "prio").unwrap().offset, 8);
    let comm = btf.member(task, "comm").unwrap();
    assert_eq!((comm.offset, btf.char_array(comm.type_id)), (32, Some(16)));
    assert_eq!(btf.size_of(comm.type_id), Some(16));
    assert_eq!(btf.member(task, "nope"), None);
    assert_eq!(btf.member(task, "pid.x"), None);
    assert_eq!(btf.find(FUNC, "__sys_recvfrom"), Some(12));
    assert_eq!(btf.params(12).map(|p| p.len()), Some(2));
    assert_eq!(btf.size_of(5), Some(48));
    assert_eq!(
        btf.scalar(7),
        Some(Scalar {
            size: 8,
            signed: false
        })
    );
}

#[test]
fn bad_input_is_an_error_never_a_panic() {
    let good = tiny();
    // Every truncation is refused or parses fewer types; none panics.
    for n in 0..good.len() {
        let _ = Btf::parse(&good[..n]);
    }
    assert!(Btf::parse(&good[..good.len() - 1]).is_err());
    assert!(Btf::parse(b"").unwrap_err().contains("truncated"));
    assert!(Btf::parse(&[0u8; 32]).unwrap_err().contains("magic"));
    // Every single-byte corruption parses or is refused, and queries stay in bounds.
    for i in 0..good.len() {
        for v in [0u8, 0x7f, 0xff] {
            let mut bad = good.clone();
            bad[i] = v;
            if let Ok(btf) = Btf::parse(&bad) {
                let _ = btf.tracepoint_args("sched_waking");
                for id in 0..16 {
                    let _ = (btf.member(id, "thread_info.cpu"), btf.size_of(id));
                    let _ = (btf.char_array(id), btf.scalar(id), btf.pointee_struct(id));
                }
            }
        }
    }
}

#[test]
fn an_unknown_kind_and_a_typedef_loop_are_refused() {
    let unknown = blob(&[(31, "x", 0, false, 0, vec![])]);
    assert!(Btf::parse(&unknown).unwrap_err().contains("unknown kind"));
    // Type 1 is a typedef of itself.
    let looped = Btf::parse(&blob(&[(TYPEDEF, "loop", 0, false, 1, vec![])])).unwrap();
    assert_eq!(looped.resolve(1), None);
    assert_eq!(looped.size_of(1), None);
}
