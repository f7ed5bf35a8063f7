//! The doctor's line for `trace`: which backend `trace` will use for each built-in set,
//! with how many of its spans' tracepoints this kernel has and how its programs attach
//! (raw tracepoint, fexit, or classic tracepoint, with why). Whether BPF programs load
//! and the kernel has BTF is the `bpf` line, from `perflab_sys::probe::bpf`, the probe
//! `trace` asks before it picks the BPF backend. Live only, so nothing on a fixture tree.

use perflab_sys::doctor::Check;
use perflab_sys::SysRoot;

use super::bpf;
use super::spans::{self, Span};
use super::tracefs::{self, Tracefs};

const BACKEND: &str = "trace backend";
/// The lines `checks` gives on the host.
pub const NAMES: &[&str] = &[BACKEND];

pub fn checks(sys: &SysRoot) -> Vec<Check> {
    if !sys.is_host() {
        return Vec::new();
    }
    let probe = bpf::probe();
    vec![match Tracefs::open(sys) {
        Ok(fs) => backend_check(sys, &fs, &probe),
        Err(e) => Check::missing(
            BACKEND,
            format!("none: {e} (both backends read event ids and layouts there)"),
            tracefs::HOW,
        ),
    }]
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
