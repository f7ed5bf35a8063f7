//! `pressure`: how long tasks were stalled waiting for CPU, memory and I/O during the
//! measurement, from the kernel's pressure stall information (PSI, /proc/pressure/cpu,
//! memory and io). `some` is the time at least one runnable task waited for the resource,
//! `full` the time all non-idle tasks did at once. It answers the question a platform
//! engineer asks of a surprising number: was the machine contended while it was measured?
//! The kernel's `avg10`/`avg60` are windows that do not line up with a measurement, so
//! the rows are the difference of the cumulative `total` (µs) between start and finish,
//! in milliseconds, and as a share of the measurement's wall time. Machine totals only.

use std::io::BufRead;
use std::time::Instant;

use perflab_core::{
    Descriptor, KeyMatch, Kind, MeasureCtx, MonitorError, Needs, ReportHints, RowHints,
    TelemetryRow, Unavailable, Unit, Wording,
};
use perflab_sys::ParseError;

use crate::snapshot::{Snapshot, SnapshotMonitor};

const NAME: &str = "pressure";
/// The resources PSI reports on every kernel that has it (4.20+, CONFIG_PSI).
const RESOURCES: [&str; 3] = ["cpu", "memory", "io"];

pub static DESCRIPTOR: Descriptor = Descriptor {
    kind: Kind::Monitor,
    name: NAME,
    help: "time tasks stalled waiting for CPU, memory and I/O during the measurement \
           (pressure stall information, /proc/pressure): was the machine contended?",
    params: &[],
    needs: Needs::NONE,
    report: ReportHints::Rows(RowHints {
        wording: &[
            Wording::new(KeyMatch::Suffix(":pct"), "{head} stall share"),
            Wording::new(KeyMatch::Split('.'), "{head} pressure ({tail}) stall time"),
        ],
        // Machine-wide: "what changed" looks at them whatever CPUs a point uses.
        cpu_free: true,
        ..RowHints::PLAIN
    }),
};

pub type PressureMonitor = SnapshotMonitor<PressureTotals>;

/// The cumulative stall times (µs) of one PSI file: `None` where the line is absent
/// (`full` of cpu before Linux 5.13).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pressure {
    pub some_us: Option<u64>,
    pub full_us: Option<u64>,
}

/// Reads one PSI file (`some avg10=0.00 avg60=0.00 avg300=0.00 total=12345`, then the
/// same for `full`). Lines of other kinds are skipped, for kernels yet to come; a `some`
/// or `full` line without a readable `total` is an error naming its line.
pub fn parse_pressure(reader: impl BufRead) -> Result<Pressure, ParseError> {
    let mut out = Pressure::default();
    for (i, line) in reader.lines().enumerate() {
        let n = i + 1;
        let line = line.map_err(|e| ParseError::new(n, e.to_string()))?;
        let mut words = line.split_whitespace();
        let slot = match words.next() {
            Some("some") => &mut out.some_us,
            Some("full") => &mut out.full_us,
            _ => continue,
        };
        let total = words
            .find_map(|w| w.strip_prefix("total="))
            .ok_or_else(|| ParseError::new(n, format!("no total= in {line:?}")))?;
        let total = total
            .parse()
            .map_err(|e| ParseError::new(n, format!("total={total}: {e}")))?;
        *slot = Some(total);
    }
    Ok(out)
}

/// One read of every resource's PSI file, and when it was taken.
#[derive(Clone, Debug)]
pub struct PressureTotals {
    at: Instant,
    by_resource: Vec<(&'static str, Pressure)>,
}

fn unavailable(what: String) -> MonitorError {
    MonitorError::Unavailable(Unavailable::new(what).with_hint(
        "use a kernel with CONFIG_PSI=y, booted without psi=0 (psi=1 where \
         CONFIG_PSI_DEFAULT_DISABLED=y)",
    ))
}

impl Snapshot for PressureTotals {
    const NAME: &'static str = NAME;

    fn read(ctx: &MeasureCtx) -> Result<Self, MonitorError> {
        let at = Instant::now();
        let mut by_resource = Vec::with_capacity(RESOURCES.len());
        for resource in RESOURCES {
            let rel = format!("proc/pressure/{resource}");
            // Without CONFIG_PSI there is no /proc/pressure; with psi=0 reads fail with
            // EOPNOTSUPP. Either way the machine lacks the source.
            let reader = ctx
                .sys
                .open(&rel)
                .map_err(|e| unavailable(format!("no pressure stall information: {e}")))?;
            let p = parse_pressure(reader)
                .map_err(|e| MonitorError::Failed(e.at(ctx.sys.path(&rel)).to_string()))?;
            by_resource.push((resource, p));
        }
        Ok(Self { at, by_resource })
    }

    fn deltas(_ctx: &MeasureCtx, before: &Self, after: &Self) -> Vec<TelemetryRow> {
        let wall_us = after.at.duration_since(before.at).as_secs_f64() * 1e6;
        let mut rows = Vec::new();
        for ((resource, then), (_, now)) in before.by_resource.iter().zip(&after.by_resource) {
            for (kind, b, a) in [
                ("some", then.some_us, now.some_us),
                ("full", then.full_us, now.full_us),
            ] {
                let (Some(b), Some(a)) = (b, a) else {
                    continue;
                };
                let stalled_us = a.saturating_sub(b) as f64;
                let key = format!("{resource}.{kind}");
                let row =
                    |key: String, value, unit| TelemetryRow::new(NAME, key, "", None, value, unit);
                rows.push(row(key.clone(), stalled_us / 1e3, Unit::Milliseconds));
                if wall_us > 0.0 {
                    let share = 100.0 * stalled_us / wall_us;
                    rows.push(row(format!("{key}:pct"), share, Unit::Percent));
                }
            }
        }
        rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use perflab_core::{Monitor, SysRoot};
    use proptest::prelude::*;

    /// /proc/pressure of a 2-CPU KVM guest (Linux 6.1) while two compilers shared it.
    const CPU: &str = "some avg10=99.34 avg60=99.18 avg300=91.33 total=12430336039\n\
                       full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n";
    const MEMORY: &str = "some avg10=0.00 avg60=0.00 avg300=0.00 total=6477142\n\
                          full avg10=0.00 avg60=0.00 avg300=0.00 total=2598069\n";
    const IO: &str = "some avg10=0.06 avg60=0.73 avg300=1.14 total=450976875\n\
                      full avg10=0.00 avg60=0.00 avg300=0.34 total=211174491\n";
    /// cpu before Linux 5.13: no `full` line.
    const OLD_CPU: &str = "some avg10=0.00 avg60=0.00 avg300=0.00 total=5000\n";

    fn tree(files: [&str; 3]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("proc/pressure")).unwrap();
        write(&dir, files);
        dir
    }

    fn write(dir: &tempfile::TempDir, files: [&str; 3]) {
        for (resource, text) in RESOURCES.iter().zip(files) {
            std::fs::write(dir.path().join("proc/pressure").join(resource), text).unwrap();
        }
    }

    #[test]
    fn the_captured_files_parse() {
        let cpu = parse_pressure(CPU.as_bytes()).unwrap();
        assert_eq!((cpu.some_us, cpu.full_us), (Some(12_430_336_039), Some(0)));
        let io = parse_pressure(IO.as_bytes()).unwrap();
        assert_eq!(
            (io.some_us, io.full_us),
            (Some(450_976_875), Some(211_174_491))
        );
        let old = parse_pressure(OLD_CPU.as_bytes()).unwrap();
        assert_eq!((old.some_us, old.full_us), (Some(5000), None));
    }

    #[test]
    fn a_line_without_a_total_names_its_line() {
        let e = parse_pressure("some avg10=0.00 total=1\nfull avg10=0.00\n".as_bytes())
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("line 2: no total="), "{e}");
        let e = parse_pressure("some total=-3\n".as_bytes()).unwrap_err();
        assert!(e.to_string().contains("total=-3"), "{e}");
        let future = parse_pressure("both total=9\nsome total=4\n".as_bytes()).unwrap();
        assert_eq!(future.some_us, Some(4));
    }

    /// Start and finish on a captured tree whose totals then grow: each stall time is the
    /// growth in ms, with its share of the wall time, machine totals only; cpu's `full`
    /// is reported where the kernel has it and left out where it does not.
    #[test]
    fn reports_the_stall_time_of_the_measurement() {
        let dir = tree([OLD_CPU, MEMORY, IO]);
        let ctx = MeasureCtx::new(SysRoot::at(dir.path()), vec![0]);
        let mut m = PressureMonitor::default();
        m.start(&ctx).unwrap();
        let io_later = IO.replace("total=450976875", "total=451226875");
        write(&dir, [&OLD_CPU.replace("5000", "7000"), MEMORY, &io_later]);
        let rows = m.finish(&ctx).unwrap();
        let ms: Vec<(&str, f64)> = rows
            .iter()
            .filter(|r| r.unit == Unit::Milliseconds)
            .map(|r| (r.key.as_str(), r.value))
            .collect();
        assert_eq!(
            ms,
            [
                ("cpu.some", 2.0),
                ("memory.some", 0.0),
                ("memory.full", 0.0),
                ("io.some", 250.0),
                ("io.full", 0.0)
            ]
        );
        assert!(rows.iter().all(|r| r.cpu.is_none() && r.source == NAME));
        let share = rows.iter().find(|r| r.key == "io.some:pct").unwrap();
        assert_eq!(share.unit, Unit::Percent);
        assert!(share.value > 0.0, "{share:?}");
    }

    #[test]
    fn a_kernel_without_psi_is_unavailable_not_a_failure() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = MeasureCtx::new(SysRoot::at(dir.path()), Vec::new());
        let e = PressureMonitor::default().start(&ctx).unwrap_err();
        assert!(matches!(e, MonitorError::Unavailable(_)), "{e:?}");
        let broken = tree(["some total=x\n", MEMORY, IO]);
        let ctx = MeasureCtx::new(SysRoot::at(broken.path()), Vec::new());
        let e = PressureMonitor::default().start(&ctx).unwrap_err();
        assert!(matches!(e, MonitorError::Failed(_)), "{e:?}");
    }

    #[test]
    fn rows_are_worded_from_the_descriptor() {
        let hints = DESCRIPTOR.rows();
        let word = |key| perflab_core::descriptor::word_row(hints, NAME, key, "");
        assert_eq!(word("io.some:pct"), "io.some stall share");
        assert_eq!(word("memory.full"), "memory pressure (full) stall time");
    }

    proptest! {
        /// Whatever the file holds, the parser answers and does not panic.
        #[test]
        fn any_text_parses_or_errs_without_panicking(text in "\\PC*") {
            let _ = parse_pressure(text.as_bytes());
        }

        /// Bytes that are not UTF-8 are an error, not a panic.
        #[test]
        fn any_bytes_parse_or_err_without_panicking(
            bytes in proptest::collection::vec(any::<u8>(), 0..300)
        ) {
            let _ = parse_pressure(bytes.as_slice());
        }

        /// Lines in the kernel's shape give back their totals.
        #[test]
        fn kernel_shaped_lines_give_their_totals(some: u64, full: u64, avg in 0.0f64..100.0) {
            let text = format!(
                "some avg10={avg:.2} avg60=0.00 avg300=0.00 total={some}\n\
                 full avg10=0.00 avg60={avg:.2} avg300=0.00 total={full}\n"
            );
            let p = parse_pressure(text.as_bytes()).unwrap();
            prop_assert_eq!((p.some_us, p.full_us), (Some(some), Some(full)));
        }
    }
}
