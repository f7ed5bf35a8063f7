//! Drives the kernel's dmatest module through `/sys/module/dmatest/parameters` (the
//! interface of Documentation/driver-api/dmaengine/dmatest.rst, kernels 5.0 and later):
//! set the parameters, add the channels one write each (the first write clears the last
//! run's threads), write `run`, poll `run` until it reads `N`, and read the log records
//! the run appended to `/dev/kmsg`. While it waits it samples which CPU each test
//! thread is on (`/proc/PID/stat` field 39, what the seed read with `ps -eo psr,comm`).
//!
//! The parameters stay set in the module after the test, for whoever uses dmatest next, so
//! like a knob's files they are claimed and journaled before the first write (in the run's
//! journal, [`JOURNAL_FACT`]) and written back afterwards, on every way out; after a kill,
//! `perflab restore` writes them back. `run` is journaled too: writing back its `N` stops a
//! test left running and frees its threads. `channel` is not: it is a command (each write
//! adds a channel's threads; an empty write adds every channel) and reads back only the
//! pending test's channel, so writing that back would start queueing a test.

use std::collections::BTreeMap;
use std::io::BufReader;
use std::os::unix::fs::OpenOptionsExt;
use std::time::{Duration, Instant};

use perflab_core::{MeasureCtx, Unavailable, WorkloadError};
use perflab_knobs::{journal_files, Journal, KnobGuard, JOURNAL_FACT};
use perflab_sys::SysRoot;

use perflab_parsers::dmatest_log::{scan, Scan};

pub const PARAMS_DIR: &str = perflab_sys::probe::dmatest::PARAMS_DIR;
pub const DMA_CLASS: &str = perflab_sys::probe::dmatest::DMA_CLASS;
const KMSG: &str = "dev/kmsg";
const POLL: Duration = Duration::from_millis(50);

/// The DMA channels the machine has, or why dmatest cannot run here: the probe
/// `perflab doctor`'s dmatest line renders.
pub fn check(sys: &SysRoot) -> Result<Vec<String>, Unavailable> {
    let found = perflab_sys::probe::dmatest::dmatest(sys);
    if found.channels.is_empty() {
        return Err(Unavailable::new(format!(
            "no DMA engine channels ({} is empty or absent)",
            sys.path(DMA_CLASS).display()
        ))
        .with_hint(
            "dmatest needs a DMA engine driver (CONFIG_DMA_ENGINE and the controller's driver)",
        ));
    }
    if !found.module_loaded {
        return Err(Unavailable::new(format!(
            "the dmatest module is not loaded (no {})",
            sys.path(PARAMS_DIR).display()
        ))
        .with_hint("modprobe dmatest (a kernel with CONFIG_DMATEST=m)"));
    }
    Ok(found.channels)
}

/// One test run's settings, as parameter writes.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// (parameter, value) in the order written, channels excluded.
    pub params: Vec<(&'static str, String)>,
    /// Channels to add; empty: every channel (one write of "").
    pub channels: Vec<String>,
    pub wait: Duration,
}

/// Where one test thread was seen while the test ran: its pid, the CPUs it was sampled
/// on (with counts) and its last `nr_migrations`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Seen {
    pub pid: i32,
    pub cpus: BTreeMap<u32, u64>,
    pub migrations: Option<u64>,
}

/// What a run left: the log scan, the writes made, and the CPU samples per thread.
#[derive(Debug, Default)]
pub struct RunResult {
    pub scan: Scan,
    pub written: Vec<String>,
    pub notes: Vec<String>,
    /// Thread name as comm shows it (15 bytes at most) → where it was seen.
    pub placement: BTreeMap<String, Seen>,
}

fn io_failed(sys: &SysRoot, rel: &str, what: &str, e: impl std::fmt::Display) -> WorkloadError {
    WorkloadError::Failed(format!(
        "dmatest: cannot {what} {}: {e}",
        sys.path(rel).display()
    ))
}

fn param(name: &str) -> String {
    format!("{PARAMS_DIR}/{name}")
}

fn running(sys: &SysRoot) -> Result<bool, WorkloadError> {
    let rel = param("run");
    let v = sys
        .read_trimmed(&rel)
        .map_err(|e| io_failed(sys, &rel, "read", e))?;
    Ok(matches!(v.as_str(), "Y" | "y" | "1"))
}

/// The kmsg records readable now, without blocking.
fn read_log(sys: &SysRoot, after: Option<u64>) -> Result<Scan, WorkloadError> {
    let path = sys.path(KMSG);
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&path)
        .map_err(|e| {
            WorkloadError::Failed(format!(
                "dmatest: cannot read the kernel log {}: {e} (reading /dev/kmsg needs \
                 CAP_SYSLOG when kernel.dmesg_restrict = 1)",
                path.display()
            ))
        })?;
    Ok(scan(BufReader::new(f), after))
}

/// The knob name the journal and the target locks show for the parameters.
pub const JOURNALED_AS: &str = "dmatest workload";

/// Runs one dmatest test and returns what the log said. The parameters it writes are
/// back as they were when it returns, whatever it returns.
pub fn run(sys: &SysRoot, s: &Settings, ctx: &MeasureCtx) -> Result<RunResult, WorkloadError> {
    if running(sys)? {
        return Err(WorkloadError::Failed(
            "dmatest: a test is already running (run reads Y); wait for it or write 0 to \
             /sys/module/dmatest/parameters/run"
                .into(),
        ));
    }
    let journal_path = ctx
        .fact(JOURNAL_FACT)
        .map(std::path::PathBuf::from)
        .unwrap_or_else(Journal::default_path);
    let knob_failed = |e: perflab_knobs::KnobError| WorkloadError::Failed(format!("dmatest: {e}"));
    let journal = Journal::open(journal_path).map_err(knob_failed)?;
    let mut rels: Vec<String> = s
        .params
        .iter()
        .map(|(name, _)| param(name))
        .filter(|rel| sys.exists(rel))
        .collect();
    rels.push(param("run"));
    let rels: Vec<&str> = rels.iter().map(String::as_str).collect();
    let originals = journal_files(sys, &journal, JOURNALED_AS, &rels).map_err(knob_failed)?;
    let result = run_journaled(sys, s, ctx);
    match (result, Box::new(originals).restore()) {
        (result, Ok(())) => result,
        (Ok(mut out), Err(e)) => {
            out.notes.push(format!("dmatest: {e}"));
            Ok(out)
        }
        (Err(run), Err(e)) => Err(WorkloadError::Failed(format!("{run}; and {e}"))),
    }
}

fn run_journaled(
    sys: &SysRoot,
    s: &Settings,
    ctx: &MeasureCtx,
) -> Result<RunResult, WorkloadError> {
    let mut out = RunResult::default();
    for (name, value) in &s.params {
        let rel = param(name);
        if !sys.exists(&rel) {
            out.notes.push(format!(
                "dmatest: this kernel's dmatest has no parameter {name}; {name}={value} not set"
            ));
            continue;
        }
        sys.write(&rel, value.as_bytes())
            .map_err(|e| io_failed(sys, &rel, &format!("write {name}={value} to"), e))?;
        out.written.push(format!("{name}={value}"));
    }
    let chan_rel = param("channel");
    let adds: Vec<&str> = if s.channels.is_empty() {
        vec![""]
    } else {
        s.channels.iter().map(String::as_str).collect()
    };
    for c in adds {
        sys.write(&chan_rel, c.as_bytes())
            .map_err(|e| io_failed(sys, &chan_rel, &format!("add channel {c:?} through"), e))?;
        out.written.push(format!("channel={c}"));
    }
    let before = read_log(sys, None)?.last_seq;
    let run_rel = param("run");
    sys.write(&run_rel, b"1")
        .map_err(|e| io_failed(sys, &run_rel, "start the test through", e))?;
    out.written.push("run=1".into());
    let started = Instant::now();
    // The test may not have started its threads yet when `run` is first read.
    std::thread::sleep(POLL);
    loop {
        sample_threads(sys, &s.channels, &mut out.placement);
        if !running(sys)? {
            break;
        }
        if ctx.stopping() || started.elapsed() > s.wait {
            let _ = sys.write(&run_rel, b"0");
            if ctx.stopping() {
                return Err(WorkloadError::Interrupted);
            }
            return Err(WorkloadError::Failed(format!(
                "dmatest: the test was still running after {:.0} s and was stopped (raise \
                 `wait`, or lower iterations)",
                s.wait.as_secs_f64()
            )));
        }
        std::thread::sleep(POLL);
    }
    out.scan = read_log(sys, before)?;
    Ok(out)
}

/// Notes the CPU of every dmatest thread now running (`dmaXchanY-…`).
fn sample_threads(sys: &SysRoot, channels: &[String], seen: &mut BTreeMap<String, Seen>) {
    let Ok(pids) = sys.list_dir("proc") else {
        return;
    };
    for pid in pids
        .iter()
        .filter(|p| p.bytes().all(|b| b.is_ascii_digit()))
    {
        let Ok(comm) = sys.read_trimmed(&format!("proc/{pid}/comm")) else {
            continue;
        };
        let ours = if channels.is_empty() {
            comm.starts_with("dma") && comm.contains("chan") && comm.contains('-')
        } else {
            channels.iter().any(|c| comm.starts_with(&format!("{c}-")))
        };
        if !ours {
            continue;
        }
        let Ok(stat) = sys.read_string(&format!("proc/{pid}/stat")) else {
            continue;
        };
        let Some(cpu) = stat_cpu(&stat) else { continue };
        let migrations = sys
            .open(&format!("proc/{pid}/sched"))
            .ok()
            .and_then(perflab_sys::sched::parse_nr_migrations);
        let e = seen.entry(comm).or_insert_with(|| Seen {
            pid: pid.parse().unwrap_or(0),
            ..Seen::default()
        });
        *e.cpus.entry(cpu).or_default() += 1;
        if migrations.is_some() {
            e.migrations = migrations;
        }
    }
}

/// Field 39 (`processor`) of /proc/PID/stat; the command name in field 2 may hold
/// spaces and parentheses, so fields are counted after its last `)`.
pub fn stat_cpu(stat: &str) -> Option<u32> {
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_whitespace().nth(36)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn processor_field_of_stat() {
        let stat = "4203 (dma0chan1-sg0) S 2 0 0 0 -1 2129984 0 0 0 0 0 512 0 0 -2 0 1 0 \
                    401711 0 0 18446744073709551615 0 0 0 0 0 0 0 2147483647 0 0 0 0 17 4 \
                    50 1 0 0 0 0 0 0 0 0 0 0 0";
        assert_eq!(stat_cpu(stat), Some(4));
        assert_eq!(stat_cpu("1 (a) b) S 2"), None);
        assert_eq!(stat_cpu(""), None);
    }
}
