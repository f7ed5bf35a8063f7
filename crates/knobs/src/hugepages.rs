//! `hugepages=SIZE:COUNT`: reserves COUNT more pages of SIZE in the hugetlb pool
//! (`kernel/mm/hugepages/hugepages-<kB>kB/nr_hugepages`), on top of what the pool held, so
//! pages that others reserved stay theirs; restore writes the pool's original size back.

use perflab_core::{format_size, parse_size, Needs, Unavailable, WorkloadOutput};
use perflab_core::{Descriptor, Kind, Need, ParamKind, ParamSpec, ReportHints};
use perflab_sys::hugepages::{pools, HugePool};
use perflab_sys::{meminfo, SysError, SysRoot};

use crate::compaction::grow_pool;
use crate::effect::{ReadBack, Verified};
use crate::error::KnobError;
use crate::files::{FileGuard, Form};
use crate::journal::Journal;
use crate::knob::{EffectProbe, Knob, KnobGuard};

pub static DESCRIPTOR: Descriptor = Descriptor {
    kind: Kind::Knob,
    name: "hugepages",
    help:
        "reserve COUNT more huge pages of SIZE in the hugetlb pool: SIZE:COUNT, e.g. 2M:512, 1G:2",
    params: &[ParamSpec {
        name: "value",
        role: perflab_core::ParamRole::Plain,
        help: "SIZE:COUNT, e.g. 2M:512",
        kind: ParamKind::Text { max_len: 64 },
        default: None,
    }],
    needs: Needs::all(&[Need::Privileges, Need::HugePages]),
    report: ReportHints::None,
};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HugePagesKnob {
    pub size_kb: u64,
    pub count: u64,
}

const VALID: &str =
    "SIZE:COUNT, e.g. 2M:512 or 1G:2 (SIZE such as 2M, 2048K, 1G, 1048576K; COUNT an integer >= 0)";

impl HugePagesKnob {
    pub fn parse(value: &str) -> Result<Self, KnobError> {
        let invalid = |reason: String| KnobError::InvalidValue {
            knob: "hugepages".into(),
            value: value.into(),
            reason,
        };
        let Some((size, count)) = value.trim().split_once(':') else {
            return Err(invalid(format!("expected {VALID}")));
        };
        let bytes = parse_size(size).map_err(|e| invalid(format!("{e}; expected {VALID}")))?;
        if bytes == 0 || !bytes.is_multiple_of(1024) {
            return Err(invalid(format!(
                "a page size is a whole number of kilobytes above 0; expected {VALID}"
            )));
        }
        let count = count.trim();
        if count.eq_ignore_ascii_case("auto") {
            return Err(invalid(
                "`auto` must be resolved to a page count before the knob is built (an \
                 experiment resolves it from the workload's memory size)"
                    .into(),
            ));
        }
        let count: u64 = count
            .parse()
            .map_err(|_| invalid(format!("{count:?} is not a page count; expected {VALID}")))?;
        if bytes.checked_mul(count).is_none() {
            return Err(invalid(format!("{count} pages of {size} overflow 64 bits")));
        }
        Ok(Self {
            size_kb: bytes / 1024,
            count,
        })
    }

    fn page_bytes(&self) -> u64 {
        self.size_kb * 1024
    }

    /// The page size as a person writes it: `2M`, `1G`.
    pub fn page(&self) -> String {
        format_size(self.page_bytes())
    }

    /// `nr_hugepages` of the pool, relative to the root.
    pub fn nr_path(&self) -> String {
        format!("{}/nr_hugepages", HugePool::dir(self.size_kb))
    }

    fn no_pool(&self, sys: &SysRoot) -> Unavailable {
        let why = format!("no {}kB huge page pool on this machine", self.size_kb);
        let have: Vec<String> = pools(sys)
            .unwrap_or_default()
            .iter()
            .map(|p| format!("{}kB ({})", p.size_kb, format_size(p.size_kb * 1024)))
            .collect();
        let hint = if have.is_empty() {
            "the kernel has no hugetlb pools (built without CONFIG_HUGETLBFS)".to_string()
        } else {
            format!(
                "its pools are {}; other sizes need CPU support and hugepagesz= on the kernel \
                 command line",
                have.join(", ")
            )
        };
        Unavailable::new(why).with_hint(hint)
    }

    /// Journals the pool size, grows it, and reads back what the kernel allocated through
    /// `observe`: a test tree takes any number, so a test makes `observe` see a short one.
    pub(crate) fn apply_observing(
        &self,
        sys: &SysRoot,
        journal: &Journal,
        observe: impl Fn(&SysRoot, &str) -> Result<u64, SysError>,
    ) -> Result<FileGuard, KnobError> {
        if !sys.exists(&HugePool::dir(self.size_kb)) {
            return Err(KnobError::unavailable(self.name(), self.no_pool(sys)));
        }
        let mut guard = FileGuard::new(sys, journal);
        if self.count == 0 {
            return Ok(guard);
        }
        let rel = self.nr_path();
        let saved = journal.save_original(sys, &rel, &self.name())?;
        let original = match parse_count(&saved.original) {
            Some(n) => n,
            None => {
                let bad = KnobError::Sys(SysError::Parse {
                    path: sys.path(&rel),
                    line: 1,
                    reason: format!(
                        "cannot parse {:?} as a page count",
                        String::from_utf8_lossy(&saved.original).trim()
                    ),
                });
                return Err(forget_then(journal, saved.id, bad));
            }
        };
        let Some(target) = original.checked_add(self.count) else {
            let bad = KnobError::InvalidValue {
                knob: "hugepages".into(),
                value: format!("{}:{}", self.page(), self.count),
                reason: format!("the pool holds {original} pages already; adding overflows"),
            };
            return Err(forget_then(journal, saved.id, bad));
        };
        guard.track(saved, Form::Plain);
        // Fragmented free memory yields fewer pages than asked: compact and ask again
        // before giving up (see crate::compaction).
        let outcome = grow_pool(sys, &rel, target, observe)
            .map_err(KnobError::from)
            .and_then(|grown| {
                short_allocation(original, self.count, grown.now).map_or(Ok(()), |got| {
                    Err(KnobError::ShortAllocation {
                        path: sys.path(&rel),
                        page: self.page(),
                        got,
                        asked: self.count,
                        compactions: grown.compactions,
                    })
                })
            });
        match outcome {
            Ok(()) => Ok(guard),
            Err(apply) => Err(match guard.restore_all() {
                Ok(()) => apply,
                Err(restore) => KnobError::ApplyAndRestore {
                    apply: Box::new(apply),
                    restore: Box::new(restore),
                },
            }),
        }
    }
}

fn parse_count(bytes: &[u8]) -> Option<u64> {
    std::str::from_utf8(bytes).ok()?.trim().parse().ok()
}

/// How many pages the kernel added, when that is fewer than asked for; `None` when it
/// allocated them all. The pool may read more than asked (another process grew it
/// meanwhile), which is no shortfall.
pub(crate) fn short_allocation(original: u64, asked: u64, now: u64) -> Option<u64> {
    let got = now.saturating_sub(original);
    (got < asked).then_some(got)
}

/// Drops a journal entry whose file was never written, returning the error that stopped it.
fn forget_then(journal: &Journal, id: crate::journal::EntryId, apply: KnobError) -> KnobError {
    match journal.forget(id) {
        Ok(()) => apply,
        Err(restore) => KnobError::ApplyAndRestore {
            apply: Box::new(apply),
            restore: Box::new(restore),
        },
    }
}

impl Knob for HugePagesKnob {
    fn name(&self) -> String {
        format!("hugepages={}:{}", self.page(), self.count)
    }

    fn check(&self, sys: &SysRoot) -> Result<(), Unavailable> {
        if !sys.exists(&HugePool::dir(self.size_kb)) {
            return Err(self.no_pool(sys));
        }
        let rel = self.nr_path();
        if !sys.writable(&rel) {
            return Err(Unavailable::new(format!(
                "{} is not writable: needs root",
                sys.path(&rel).display()
            ))
            .with_hint("run perflab as root"));
        }
        // Without a readable meminfo (a partial test tree) the kernel's own refusal,
        // seen as a short allocation on apply, is the check.
        if let Ok(available) = meminfo::available_bytes(sys) {
            let need = self.page_bytes().saturating_mul(self.count);
            if need > available {
                return Err(Unavailable::new(format!(
                    "{} pages of {} need {}, more than the {} MemAvailable",
                    self.count,
                    self.page(),
                    mib(need.div_ceil(1 << 20)),
                    mib(available >> 20)
                ))
                .with_hint("ask for fewer pages, or free memory first"));
            }
        }
        Ok(())
    }

    fn targets(&self, _sys: &SysRoot) -> Vec<String> {
        // A pool of 0 pages asks for nothing and claims nothing (see apply_observing).
        match self.count {
            0 => Vec::new(),
            _ => vec![self.nr_path()],
        }
    }

    fn apply(&self, sys: &SysRoot, journal: &Journal) -> Result<Box<dyn KnobGuard>, KnobError> {
        let guard = self.apply_observing(sys, journal, |sys, rel| sys.read_parsed(rel))?;
        // What the pool holds once reserved: it must not shrink under a measurement.
        let rel = self.nr_path();
        let target: Option<u64> = sys.read_parsed(&rel).ok();
        Ok(Box::new(Verified::new(Box::new(guard), move |_| {
            let rel = rel.clone();
            Some(
                Box::new(ReadBack(move |sys: &SysRoot, out: &WorkloadOutput| {
                    pool_and_pages_held(sys, &rel, target, out)
                })) as Box<dyn EffectProbe>,
            )
        })))
    }
}

/// The pool still holds what was reserved, and the workload's buffers were on huge pages
/// where it says (`huge_fraction`, share of its buffers found on huge pages in smaps).
fn pool_and_pages_held(
    sys: &SysRoot,
    rel: &str,
    target: Option<u64>,
    out: &WorkloadOutput,
) -> Result<(), String> {
    let mut why = Vec::new();
    if let Some(target) = target {
        match sys.read_parsed::<u64>(rel) {
            Ok(now) if now < target => why.push(format!(
                "the pool shrank from {target} to {now} pages during the measurement ({})",
                sys.path(rel).display()
            )),
            Ok(_) => {}
            Err(e) => why.push(format!("cannot read the pool back: {e}")),
        }
    }
    if let Some(f) = out.metric("huge_fraction") {
        // Whole pages or nothing: a hugetlb mapping is all huge; a fraction below 1 means
        // part of the buffers fell back to 4 KiB pages.
        if f.value.is_finite() && f.value < 0.999 {
            why.push(format!(
                "only {:.1}% of the workload's buffers were on huge pages (huge_fraction {:.3})",
                f.value * 100.0,
                f.value
            ));
        }
    }
    if why.is_empty() {
        Ok(())
    } else {
        Err(why.join("; "))
    }
}

/// Need is rounded up and what is available down, so the figures never look as if they fit.
fn mib(mib: u64) -> String {
    format!("{mib} MiB")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::fs;

    fn pool_tree(nr: &str) -> (tempfile::TempDir, SysRoot, Journal) {
        let dir = tempfile::tempdir().unwrap();
        let pool = dir
            .path()
            .join("root/sys/kernel/mm/hugepages/hugepages-2048kB");
        fs::create_dir_all(&pool).unwrap();
        fs::write(pool.join("nr_hugepages"), nr).unwrap();
        let sys = SysRoot::at(dir.path().join("root"));
        let journal = Journal::open(dir.path().join("journal.json")).unwrap();
        (dir, sys, journal)
    }

    #[test]
    fn sizes_and_counts_parse_to_kilobytes_and_back_to_a_name() {
        for (value, kb, count, name) in [
            ("2M:512", 2048, 512, "hugepages=2M:512"),
            ("2048K:3", 2048, 3, "hugepages=2M:3"),
            ("1G:2", 1_048_576, 2, "hugepages=1G:2"),
            ("1048576K:0", 1_048_576, 0, "hugepages=1G:0"),
            (" 64K : 7 ", 64, 7, "hugepages=64K:7"),
        ] {
            let k = HugePagesKnob::parse(value).unwrap();
            assert_eq!((k.size_kb, k.count), (kb, count), "{value}");
            assert_eq!(k.name(), name);
        }
    }

    #[test]
    fn shortfall_is_what_the_kernel_added_below_what_was_asked() {
        assert_eq!(short_allocation(10, 512, 522), None);
        assert_eq!(short_allocation(10, 512, 600), None);
        assert_eq!(short_allocation(10, 512, 110), Some(100));
        assert_eq!(short_allocation(10, 512, 10), Some(0));
        assert_eq!(short_allocation(10, 512, 3), Some(0));
    }

    #[test]
    fn a_short_allocation_gives_the_pages_back_and_says_how_many_it_got() {
        let (_dir, sys, journal) = pool_tree("6\n");
        let knob = HugePagesKnob::parse("2M:512").unwrap();
        // The kernel found 100 of the 512 pages: the pool reads 6 + 100.
        let err = knob
            .apply_observing(&sys, &journal, |_, _| Ok(106))
            .unwrap_err();
        let msg = err.to_string();
        assert!(matches!(err, KnobError::ShortAllocation { .. }), "{msg}");
        assert!(
            msg.contains("allocated 100 of the 512 2M huge pages"),
            "{msg}"
        );
        // This tree has no compact_memory trigger: the message says to compact by hand.
        assert!(
            msg.contains("echo 1 > /proc/sys/vm/compact_memory"),
            "{msg}"
        );
        assert!(msg.contains("hugepages-2048kB/nr_hugepages"), "{msg}");
        assert!(!msg.contains('\n'), "{msg}");
        assert_eq!(
            fs::read(sys.path(&knob.nr_path())).unwrap(),
            b"6\n",
            "the pool is back to its original size"
        );
        assert!(journal.entries().unwrap().is_empty());
    }

    /// A fragmented machine: the kernel finds 3 of the 4 pages until memory is compacted
    /// through the tree's compact_memory; the knob then holds all 4, journaled as usual.
    #[test]
    fn a_short_pool_is_compacted_and_retried_before_the_knob_gives_up() {
        let (dir, sys, journal) = pool_tree("6\n");
        fs::create_dir_all(dir.path().join("root/proc/sys/vm")).unwrap();
        fs::write(sys.path(crate::compaction::COMPACT_MEMORY), "").unwrap();
        let knob = HugePagesKnob::parse("2M:4").unwrap();
        let compacted =
            |sys: &SysRoot| fs::read(sys.path(crate::compaction::COMPACT_MEMORY)).unwrap() == b"1";
        let guard = knob
            .apply_observing(&sys, &journal, |sys, _| {
                Ok(if compacted(sys) { 10 } else { 9 })
            })
            .unwrap();
        assert_eq!(fs::read(sys.path(&knob.nr_path())).unwrap(), b"10");
        assert_eq!(journal.entries().unwrap().len(), 1);
        drop(guard);
        assert_eq!(fs::read(sys.path(&knob.nr_path())).unwrap(), b"6\n");

        // Where compaction never helps, the error says how many pages it got and that
        // memory was compacted, and the pool is given back.
        let err = knob
            .apply_observing(&sys, &journal, |_, _| Ok(9))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("allocated 3 of the 4 2M huge pages asked for, even after compacting memory 3 times"),
            "{err}"
        );
        assert_eq!(fs::read(sys.path(&knob.nr_path())).unwrap(), b"6\n");
        assert!(journal.entries().unwrap().is_empty());
    }

    #[test]
    fn an_unparsable_pool_size_changes_nothing_and_leaves_no_entry() {
        let (_dir, sys, journal) = pool_tree("many\n");
        let err = HugePagesKnob::parse("2M:1")
            .unwrap()
            .apply(&sys, &journal)
            .err()
            .unwrap();
        assert!(err.to_string().contains("\"many\""), "{err}");
        assert_eq!(
            fs::read(sys.path("sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages")).unwrap(),
            b"many\n"
        );
        assert!(journal.entries().unwrap().is_empty());
    }

    proptest! {
        #[test]
        fn parse_never_panics(s in "\\PC{0,30}") {
            let _ = HugePagesKnob::parse(&s);
        }

        #[test]
        fn parse_never_panics_on_near_forms(s in "[0-9]{0,22}[kKmMgGtT]?(i?B)?:[0-9a-z]{0,22}") {
            let _ = HugePagesKnob::parse(&s);
        }
    }
}
