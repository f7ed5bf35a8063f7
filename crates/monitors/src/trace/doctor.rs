//! The doctor's lines for `trace`: whether BPF programs can be loaded here (and whether
//! the kernel has BTF, which raw tracepoint programs need to read struct fields), and
//! which backend `trace` will use for each built-in set, with how many of its spans'
//! tracepoints this kernel has and how its programs attach (raw tracepoint, fexit, or
//! classic tracepoint, with why). Live checks, so nothing on a fixture tree.

use perflab_sys::doctor::Check;
use perflab_sys::SysRoot;

use super::bpf;
use super::spans::{self, Span};
use super::tracefs::{self, Tracefs};

const BPF: &str = "bpf";
const BACKEND: &str = "trace backend";
/// The lines `checks` gives on the host.
pub const NAMES: &[&str] = &[BPF, BACKEND];

pub fn checks(sys: &SysRoot) -> Vec<Check> {
    if !sys.is_host() {
        return Vec::new();
    }
    let probe = bpf::probe();
    let mut out = vec![bpf_check(sys, &probe)];
    out.push(match Tracefs::open(sys) {
        Ok(fs) => backend_check(sys, &fs, &probe),
        Err(e) => Check::missing(
            BACKEND,
            format!("none: {e} (both backends read event ids and layouts there)"),
            tracefs::HOW,
        ),
    });
    out
}

/// Whether programs load here, and whether raw tracepoints can read struct fields (BTF).
fn bpf_check(sys: &SysRoot, probe: &Result<(), String>) -> Check {
    let btf = match bpf::vmlinux_btf(sys) {
        Ok(_) => "BTF at /sys/kernel/btf/vmlinux (raw tracepoints read struct fields at its \
                  offsets)"
            .to_string(),
        Err(e) => {
            format!("no BTF ({e}): events whose spans read struct fields use classic tracepoints")
        }
    };
    match probe {
        Ok(()) => Check::ok(BPF, format!("programs can be loaded; {btf}")),
        Err(e) => Check::missing(
            BPF,
            format!("{e}; {btf}"),
            "run perflab as root on a kernel with CONFIG_BPF_SYSCALL and CONFIG_BPF_EVENTS; \
             without them `--monitors trace` measures from tracefs text",
        ),
    }
}

/// Which backend each built-in set gets here, and how its programs attach.
fn backend_check(sys: &SysRoot, fs: &Tracefs, probe: &Result<(), String>) -> Check {
    let mut bpf_sets = Vec::new();
    let mut text_sets = Vec::new();
    for (name, _) in spans::BUILT_IN {
        let Some(set) = spans::built_in(name) else {
            continue;
        };
        let total = set.spans.len();
        let has = |a: &str, b: &str| fs.has_event(a, b);
        let here: Vec<Span> = set
            .spans
            .into_iter()
            .map(|s| s.with_fallbacks(&has))
            .filter(|s| s.events().iter().all(|(a, b)| has(a, b)))
            .collect();
        let what = format!("{name} ({} of {total} spans' tracepoints here)", here.len());
        let planned = match probe {
            Err(e) => Err(e.clone()),
            Ok(()) => bpf::attach_here(&fs.fs, sys, &here),
        };
        match planned {
            Ok((plans, attach)) => {
                bpf_sets.push(format!("{what} [{}]", bpf::describe(&plans, &attach)));
            }
            Err(e) => text_sets.push(format!("{what}: {e}")),
        }
    }
    if text_sets.is_empty() {
        return Check::ok(
            BACKEND,
            format!(
                "bpf, in the kernel (ns, nothing lost): {}",
                bpf_sets.join(", ")
            ),
        );
    }
    Check::partial(
        BACKEND,
        format!(
            "tracefs text (whole µs; events can be lost) for {}{}",
            text_sets.join("; "),
            if bpf_sets.is_empty() {
                String::new()
            } else {
                format!("; bpf for {}", bpf_sets.join(", "))
            }
        ),
        "the BPF backend needs root and bpf() (see the bpf line)",
    )
}
