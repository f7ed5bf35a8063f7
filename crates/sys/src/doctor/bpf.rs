//! The `bpf` line: the `trace` monitor's BPF backend loads programs with bpf(), and its
//! raw tracepoint programs read struct fields at the offsets the kernel's BTF gives.

use super::check::Check;
use crate::probe::bpf::{bpf as probe_bpf, btf};
use crate::root::SysRoot;

const NAME: &str = "bpf";

pub(super) fn bpf(sys: &SysRoot) -> Option<Check> {
    if !sys.is_host() {
        return None;
    }
    let loadable = probe_bpf();
    let btf = match btf(sys) {
        Ok(()) => "BTF at /sys/kernel/btf/vmlinux (raw tracepoints read struct fields at its \
                   offsets)"
            .to_string(),
        Err(e) => {
            format!("no BTF ({e}): events whose spans read struct fields use classic tracepoints")
        }
    };
    Some(match loadable.refusal() {
        None => Check::ok(NAME, format!("programs can be loaded; {btf}")),
        Some(e) => Check::missing(
            NAME,
            format!("{e}; {btf}"),
            "run perflab as root on a kernel with CONFIG_BPF_SYSCALL and CONFIG_BPF_EVENTS; \
             without them `--monitors trace` measures from tracefs text",
        ),
    })
}
