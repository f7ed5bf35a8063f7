//! `perflab doctor`: what this machine offers perflab, one line per capability, each ok,
//! partial or missing with the reason and how to enable it, and for each capability the
//! registered plug-ins that need it, so a missing one says what it blocks.
//!
//! Each line renders a probe's answer: those of /proc, /sys and the system tools are
//! `perflab_sys::probe`'s (rendered in `perflab_sys::doctor`), the same probes the knobs
//! and monitors ask before they run; the guest's (QEMU, KVM) in [`vm`] because they are
//! the netpath knob's own, the GPU's in [`gpu`], and `trace`'s backend line in the
//! monitor's `trace::doctor`. This crate runs them and walks the registries: every
//! workload, monitor, knob and parser declares its needs in its descriptor
//! ([`perflab_core::Need`]), each line names the need it answers, and no check here
//! names a plug-in.

use perflab_core::Descriptor;
use perflab_sys::doctor::{Check, Status};
use perflab_sys::SysRoot;
use serde::Serialize;

pub mod gpu;
pub mod vm;

/// One capability's verdict and the plug-ins that need it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding {
    #[serde(flatten)]
    pub check: Check,
    /// `knob cpuidle`, `monitor cpuidle`: the registered plug-ins that need the capability
    /// for everything they do, by kind (workloads, monitors, knobs, parsers) then registry
    /// order. Without it they cannot run.
    pub needed_by: Vec<String>,
    /// The plug-ins that need it for some of their values only (`knob netpath` for
    /// netpath=ovs): without it they run, with less.
    pub partly_needed_by: Vec<String>,
}

/// Every registered plug-in's descriptor: workloads, monitors, knobs, parsers.
pub fn plugins() -> Vec<&'static Descriptor> {
    let mut out: Vec<&'static Descriptor> = Vec::new();
    out.extend(perflab_workloads::registry().iter().map(|w| w.info()));
    out.extend(perflab_monitors::registry().iter().map(|m| m.descriptor));
    out.extend(perflab_knobs::registry().iter().map(|k| k.descriptor));
    out.extend(perflab_parsers::registry().iter().map(|p| p.descriptor));
    out
}

/// Runs every check on `sys` and names, for each, the plug-ins of `plugins` that need it.
pub fn examine(sys: &SysRoot, plugins: &[&Descriptor]) -> Vec<Finding> {
    let mut checks = perflab_sys::doctor::probe(sys);
    checks.extend(vm::checks(sys));
    checks.push(gpu::check(sys));
    checks.extend(perflab_sys::doctor::bpf(sys));
    checks.extend(perflab_monitors::trace::doctor::checks(sys));
    checks
        .into_iter()
        .map(|check| {
            let (mut needed_by, mut partly_needed_by) = (Vec::new(), Vec::new());
            for d in plugins {
                let blocks = check.need.and_then(|n| d.needs.blocks(n));
                let who = format!("{} {}", d.kind.as_str(), d.name);
                match blocks {
                    Some(true) => needed_by.push(who),
                    Some(false) => partly_needed_by.push(who),
                    None => {}
                }
            }
            Finding {
                check,
                needed_by,
                partly_needed_by,
            }
        })
        .collect()
}

/// The doctor's text: one line per check; under a check that is not ok, how to enable it,
/// and what a missing one blocks or limits, or which plug-ins need a partial one.
pub fn render_text(findings: &[Finding]) -> String {
    let width = findings
        .iter()
        .map(|f| f.check.name.len())
        .max()
        .unwrap_or(10);
    let mut out = String::new();
    for f in findings {
        let c = &f.check;
        let tag = match c.status {
            Status::Ok => "ok     ",
            Status::Partial => "partial",
            Status::Missing => "missing",
        };
        out.push_str(&format!("{tag}  {:<width$}  {}\n", c.name, c.detail));
        if c.status == Status::Ok {
            continue;
        }
        if let Some(h) = &c.hint {
            out.push_str(&format!("         {:<width$}  -> {h}\n", ""));
        }
        // A missing capability blocks what needs it throughout and limits the rest; a
        // partial one (or one not checkable here) is needed by them all.
        let all = [&f.needed_by[..], &f.partly_needed_by[..]].concat();
        let lines: [(&str, &[String]); 2] = match c.status {
            Status::Missing => [("blocks", &f.needed_by), ("limits", &f.partly_needed_by)],
            _ => [("needed by", &all), ("", &[])],
        };
        for (verb, who) in lines {
            if !who.is_empty() {
                out.push_str(&format!(
                    "         {:<width$}  {verb}: {}\n",
                    "",
                    grouped(who)
                ));
            }
        }
    }
    out
}

/// `knobs cpuidle, pmqos; monitor cpuidle`: the plug-ins by kind, in kind order.
fn grouped(needed_by: &[String]) -> String {
    let mut groups: Vec<(&str, Vec<&str>)> = Vec::new();
    for entry in needed_by {
        let (kind, name) = entry.split_once(' ').unwrap_or(("", entry));
        match groups.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, names)) => names.push(name),
            None => groups.push((kind, vec![name])),
        }
    }
    groups
        .iter()
        .map(|(kind, names)| {
            let s = if names.len() == 1 { "" } else { "s" };
            format!("{kind}{s} {}", names.join(", "))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests;
