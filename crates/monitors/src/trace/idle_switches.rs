//! Switches to and from the idle task per CPU, as the text backend received them.
//!
//! On some kernels (this project's 2-vCPU guest, 6.18) the ftrace ring buffer records a
//! CPU's switches to the idle task but never its switches away from it: a pinned sleep loop
//! on CPU 1 left 334 switches to idle and none from it, while CPU 0 recorded both and BPF
//! programs on the same tracepoint saw every one. Every span that ends at a switch from idle
//! on such a CPU (a wake-up from idle) is then silently missing from the text backend, so
//! it says so.

use std::collections::BTreeMap;

use super::parse::Event;

/// Switches to idle below this many on a CPU say nothing either way.
const ENOUGH: u64 = 100;

/// Per CPU: (switches to idle, switches from idle).
#[derive(Debug, Default)]
pub struct IdleSwitches(BTreeMap<u32, (u64, u64)>);

impl IdleSwitches {
    pub fn see(&mut self, e: &Event<'_>) {
        if e.name != "sched_switch" {
            return;
        }
        let is_idle = |f: &str| e.field(f).is_some_and(|v| v.trim() == "0");
        let (to, from) = (is_idle("next_pid"), is_idle("prev_pid"));
        if to || from {
            let c = self.0.entry(e.cpu).or_default();
            c.0 += u64::from(to);
            c.1 += u64::from(from);
        }
    }

    /// One note per CPU that went idle often and was never seen leaving it.
    pub fn notes(&self) -> Vec<String> {
        self.0
            .iter()
            .filter(|(_, &(to, from))| to >= ENOUGH && from == 0)
            .map(|(cpu, (to, _))| {
                format!(
                    "trace: tracefs recorded {to} switches to idle on CPU {cpu} and none away \
                     from it: this kernel's ring buffer drops them, so spans ending at a \
                     wake-up from idle there are missing (the BPF backend sees them)"
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::parse::{parse_line, Line};

    fn switch(cpu: u32, prev: u32, next: u32) -> String {
        format!(
            "          task-1   [{cpu:03}] d..2. 100.000001: sched_switch: prev_comm=a \
             prev_pid={prev} prev_prio=120 prev_state=S ==> next_comm=b next_pid={next} \
             next_prio=120"
        )
    }

    fn fed(lines: &[String]) -> IdleSwitches {
        let mut s = IdleSwitches::default();
        for l in lines {
            if let Line::Event(e) = parse_line(l) {
                s.see(&e);
            }
        }
        s
    }

    #[test]
    fn a_cpu_never_seen_leaving_idle_is_named() {
        let mut lines: Vec<String> = (0..150).map(|_| switch(1, 7, 0)).collect();
        lines.extend((0..150).flat_map(|_| [switch(0, 7, 0), switch(0, 0, 7)]));
        let notes = fed(&lines).notes();
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].contains("150 switches to idle on CPU 1"),
            "{notes:?}"
        );
    }

    #[test]
    fn few_switches_or_both_directions_say_nothing() {
        let few: Vec<String> = (0..20).map(|_| switch(1, 7, 0)).collect();
        assert!(fed(&few).notes().is_empty());
        let both: Vec<String> = (0..200)
            .flat_map(|_| [switch(1, 7, 0), switch(1, 0, 7)])
            .collect();
        assert!(fed(&both).notes().is_empty());
    }
}
