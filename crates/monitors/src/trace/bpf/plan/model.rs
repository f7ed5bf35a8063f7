//! A user-space model of what [`super::super::codegen`] makes of a plan, run over
//! trace_pipe text: the same actions in the same order, the start map as a hash map,
//! values read from the text by the field at each load's offset. It proves a plan means
//! what the text matcher does on recorded event sequences, where no kernel runs the
//! programs (no root, no BPF, no idle CPUs, no KVM host).

use std::collections::HashMap;

use super::tests::fake_format;
use super::*;
use crate::trace::parse::{parse_line, Event, Line};
use crate::trace::spans::{split_name, MAX_SPLIT};

/// One span's figures, as the maps would hold them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Figures {
    pub count: u64,
    pub sum: u64,
    pub max: u64,
    pub unmatched: u64,
}

impl Figures {
    fn record(&mut self, d: u64) {
        self.count += 1;
        self.sum += d;
        self.max = self.max.max(d);
    }
}

pub struct Model {
    plans: Vec<EventPlan>,
    formats: HashMap<String, Format>,
    /// (span, pad, key) → start ns, or with pad 1 a split span's value.
    starts: HashMap<(u32, u32, u64), u64>,
    spans: Vec<Figures>,
    /// (span, value) → figures.
    split: HashMap<(u32, u64), Figures>,
}

impl Model {
    pub fn new(plans: Vec<EventPlan>, n_spans: usize) -> Self {
        let formats = plans
            .iter()
            .map(|p| (p.event.clone(), fake_format(&p.system, &p.event).unwrap()))
            .collect();
        Self {
            plans,
            formats,
            starts: HashMap::new(),
            spans: vec![Figures::default(); n_spans],
            split: HashMap::new(),
        }
    }

    pub fn feed_text(&mut self, text: &str) {
        for l in text.lines() {
            if let Line::Event(e) = parse_line(l) {
                self.feed(&e);
            }
        }
    }

    /// The figures by span name, a split span's values as `SPAN@N` (non-empty only).
    pub fn results(&self, names: &[String]) -> Vec<(String, Figures)> {
        let mut out = Vec::new();
        for (i, f) in self.spans.iter().enumerate() {
            out.push((names[i].clone(), f.clone()));
            for v in 0..MAX_SPLIT {
                if let Some(s) = self.split.get(&(i as u32, v)) {
                    out.push((split_name(&names[i], v), s.clone()));
                }
            }
        }
        out
    }

    fn field_text<'a>(&self, e: &Event<'a>, offset: u32) -> Option<&'a str> {
        let f = self.formats.get(e.name.as_ref())?;
        let name = &f.fields.iter().find(|x| x.offset == offset)?.name;
        e.field(name)
    }

    fn value(&self, e: &Event<'_>, s: Source) -> Option<u64> {
        match s {
            Source::Field { offset, .. } => {
                let t = self.field_text(e, offset)?.trim();
                t.parse::<u64>()
                    .ok()
                    .or_else(|| t.parse::<i64>().ok().map(|n| n as u64))
                    .or_else(|| u64::from_str_radix(t.strip_prefix("0x")?, 16).ok())
            }
            Source::Cpu => Some(u64::from(e.cpu)),
            Source::Pid => u64::try_from(e.pid).ok(),
            Source::Zero => Some(0),
        }
    }

    fn holds(&self, e: &Event<'_>, checks: &[Check]) -> bool {
        checks.iter().all(|c| match c {
            Check::Num { source, any_of } => {
                self.value(e, *source).is_some_and(|v| any_of.contains(&v))
            }
            Check::Text { offset, any_of, .. } => self.field_text(e, *offset).is_some_and(|t| {
                any_of.iter().any(|(b, prefix)| {
                    let b = std::str::from_utf8(b).unwrap_or("");
                    if *prefix {
                        t.starts_with(b)
                    } else {
                        t == b
                    }
                })
            }),
        })
    }

    fn feed(&mut self, e: &Event<'_>) {
        let Some(plan) = self.plans.iter().find(|p| p.event == e.name) else {
            return;
        };
        let now = e.ts_ns;
        let mut ended: u64 = 0;
        for a in plan.actions.clone() {
            if a.role == Role::Start && a.after.is_some_and(|j| ended & (1 << j) == 0) {
                continue;
            }
            if !self.holds(e, &a.checks) {
                continue;
            }
            let Some(key) = self.value(e, a.key) else {
                continue;
            };
            let k = (a.span, 0, key);
            match a.role {
                Role::End => match self.starts.get(&k).copied() {
                    Some(t0) if now >= t0 => {
                        self.starts.remove(&k);
                        let d = now - t0;
                        ended |= 1 << a.span;
                        self.spans[a.span as usize].record(d);
                        if a.split.is_some() {
                            if let Some(&v) = self.starts.get(&(a.span, 1, key)) {
                                if v < MAX_SPLIT {
                                    self.split.entry((a.span, v)).or_default().record(d);
                                }
                            }
                        }
                    }
                    _ => self.spans[a.span as usize].unmatched += 1,
                },
                Role::Cancel => {
                    self.starts.remove(&k);
                }
                Role::Start => {
                    self.starts.insert(k, now);
                }
                Role::Split => {
                    if let Some(v) = a.value.and_then(|s| self.value(e, s)) {
                        self.starts.insert((a.span, 1, key), v);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod proofs {
    use super::*;
    use crate::trace::matcher::Matcher;
    use crate::trace::spans::built_in;

    /// A span's (name, count, sum, max).
    type Row = (String, u64, u64, u64);

    /// The text matcher's rows and the model's, side by side.
    fn both(spans: Vec<Span>, text: &str) -> (Vec<Row>, Vec<Row>) {
        let names: Vec<String> = spans.iter().map(|s| s.name.clone()).collect();
        let mut m = Matcher::new(spans.clone());
        for l in text.lines() {
            m.feed_line(parse_line(l));
        }
        let text_side = m
            .results()
            .into_iter()
            .map(|r| (r.name.clone(), r.count(), r.sum_ns as u64, r.max_ns))
            .collect();
        let mut model = Model::new(
            plan(&spans, &fake_format, &|_, _| Vec::new()).unwrap(),
            spans.len(),
        );
        model.feed_text(text);
        let model_side = model
            .results(&names)
            .into_iter()
            .filter(|(n, f)| !n.contains('@') || f.count > 0)
            .map(|(n, f)| (n, f.count, f.sum, f.max))
            .collect();
        (text_side, model_side)
    }

    #[test]
    fn the_netrx_plan_measures_the_kvm_vhost_fixture_as_the_text_matcher_does() {
        let text =
            std::fs::read_to_string(perflab_testkit::fixture("trace/kvm-vhost-rx.txt")).unwrap();
        let (t, m) = both(built_in("netrx").unwrap().spans, &text);
        assert_eq!(t, m);
        let d = m.iter().find(|s| s.0 == "guest_entry").unwrap();
        assert_eq!((d.1, d.3), (4, 8_000));
    }

    #[test]
    fn the_idlewake_plan_splits_by_idle_state_as_the_text_matcher_does() {
        let text = crate::trace::tests::idle_wakeups().join("\n");
        let (t, m) = both(built_in("idlewake").unwrap().spans, &text);
        assert_eq!(t, m);
        let names: Vec<&str> = m.iter().map(|s| s.0.as_str()).collect();
        assert!(
            names.contains(&"ipi_idle_exit@1") && names.contains(&"residency@0"),
            "{names:?}"
        );
        // Restricted to the pair's CPUs, as idle-ipi runs it: the same, in both.
        let pair = crate::trace::spans::on_cpus(built_in("idlewake").unwrap().spans, &[0, 1]);
        let (tp, mp) = both(pair, &text);
        assert_eq!((&tp, &mp), (&t, &m));
    }
}
