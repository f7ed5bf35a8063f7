//! Running the command: `/bin/sh -c` in its own process group, optionally pinned, output
//! captured with a bound, watched for exit, timeout and the stop flag.
//!
//! # Process-group hygiene
//!
//! The whole group is signalled (SIGTERM, then SIGKILL a second later), so a script's
//! children die with it. The group is only ever signalled while its leader is still
//! unreaped: the leader's exit is seen with `waitid(WNOWAIT)`, leaving a zombie that keeps
//! its pid (and so the group id) from being reused by an unrelated process. After a
//! normal exit, whatever the command left running in its group is ended the same way,
//! so no measurement leaves load behind for the next one.
//!
//! # Timing
//!
//! A waiter thread blocks in `waitid` and stamps the exit at once, so `wall_s` does not
//! depend on the supervision tick. The supervising thread wakes every [`TICK`] to check
//! the stop flag and the deadline and to sample the child's CPU from /proc.

use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use nix::sched::CpuSet;
use perflab_core::{monotonic_ns, CpuPath, MeasureCtx, ThreadRecord};

use super::capture::{capture, Captured};

/// How often the supervisor checks the stop flag and the deadline.
const TICK: Duration = Duration::from_millis(20);
/// How long a signalled group gets to leave after SIGTERM before SIGKILL.
const TERM_GRACE: Duration = Duration::from_secs(1);
/// How long output readers may take to finish once no process should hold the pipes.
const DRAIN_GRACE: Duration = Duration::from_secs(2);

/// What to run.
#[derive(Debug)]
pub(super) struct Launch {
    pub script: String,
    pub env: Vec<(String, String)>,
    pub cwd: Option<PathBuf>,
    pub cpus: Vec<u32>,
    pub timeout: Duration,
    pub max_output: usize,
}

/// Why the command stopped running.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Ending {
    Exited,
    TimedOut,
    Stopped,
}

/// A command that ran, however it ended.
#[derive(Debug)]
pub(super) struct Finished {
    pub ending: Ending,
    pub status: ExitStatus,
    pub wall: Duration,
    pub user_s: f64,
    pub sys_s: f64,
    pub stdout: Captured,
    pub stderr: Captured,
    pub record: ThreadRecord,
    pub notes: Vec<String>,
}

/// Runs `l` to its end. Errors are failures to start or to reap it.
pub(super) fn run(l: &Launch, ctx: &MeasureCtx) -> Result<Finished, String> {
    let mut cmd = command(l)?;
    let start_ns = monotonic_ns();
    let t0 = Instant::now();
    let mut child = spawn(&mut cmd, l)?;
    let pid = child.id() as i32;
    let readers = Readers::start(&mut child, l.max_output);
    let exited = waiter(pid);

    let watched = supervise(&exited, ctx, pid, start_ns, t0 + l.timeout)?;
    let mut notes = Vec::new();
    let exit_at = end_group(pid, &exited, &readers, watched.exit_at, &mut notes)?;
    let wall = exit_at.saturating_duration_since(t0);
    let end_ns = start_ns + wall.as_nanos() as u64;

    let (status, ru) = reap(pid)?;
    if !readers.wait(DRAIN_GRACE) {
        notes.push(
            "a process outside the command's process group still holds its output open; \
             the output read so far is used"
                .to_string(),
        );
    }
    let (stdout, stderr) = readers.take();
    let secs = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    let record = ThreadRecord {
        role: "exec".into(),
        tid: pid,
        pinned_cpu: (l.cpus.len() == 1).then(|| l.cpus[0]),
        cpu_samples: watched.samples.into_iter().collect(),
        cpu_path: watched.path,
        migrations: None,
        voluntary_switches: Some(ru.ru_nvcsw as u64),
        involuntary_switches: Some(ru.ru_nivcsw as u64),
        start_ns,
        end_ns,
        bytes: None,
        // The command's counts are the counters monitor's rows (inherited by the child).
        counters: Vec::new(),
    };
    Ok(Finished {
        ending: watched.ending,
        status,
        wall,
        user_s: secs(ru.ru_utime),
        sys_s: secs(ru.ru_stime),
        stdout,
        stderr,
        record,
        notes,
    })
}

/// `/bin/sh -c script` in its own process group, tied to perflab, pinned if asked.
fn command(l: &Launch) -> Result<Command, String> {
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c")
        .arg(&l.script)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .envs(l.env.iter().map(|(k, v)| (k, v)));
    // A perflab killed mid-measurement must not leave the command running on the machine
    // it measures (the signal follows an exec, so a plain `sh -c CMD` passes it on).
    perflab_knobs::child::tie_to_perflab(&mut cmd);
    if let Some(dir) = &l.cwd {
        cmd.current_dir(dir);
    }
    if !l.cpus.is_empty() {
        let set = cpu_set(&l.cpus)?;
        // SAFETY: the closure runs between fork and exec and only makes one system call
        // on a set built before the fork; it allocates nothing.
        unsafe {
            cmd.pre_exec(move || {
                nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), &set)
                    .map_err(std::io::Error::from)
            });
        }
    }
    Ok(cmd)
}

/// Starts `cmd`; the message says where and whether pinning may be to blame.
fn spawn(cmd: &mut Command, l: &Launch) -> Result<Child, String> {
    cmd.spawn().map_err(|e| {
        let place = l
            .cwd
            .as_ref()
            .map(|d| format!(" in {}", d.display()))
            .unwrap_or_default();
        let pin = if l.cpus.is_empty() {
            String::new()
        } else {
            " (or pin it to the CPUs asked for)".to_string()
        };
        format!("cannot start /bin/sh{place}{pin}: {e}")
    })
}

/// What the supervisor saw until the command exited or had to be ended.
struct Watched {
    ending: Ending,
    /// When the leader exited, if it did on its own.
    exit_at: Option<Instant>,
    /// Ticks seen on each CPU.
    samples: std::collections::BTreeMap<u32, u64>,
    path: CpuPath,
}

/// Waits for the exit tick by tick, sampling the child's CPU, until it exits, the stop
/// flag is raised or the deadline passes.
fn supervise(
    exited: &Receiver<Result<Instant, String>>,
    ctx: &MeasureCtx,
    pid: i32,
    start_ns: u64,
    deadline: Instant,
) -> Result<Watched, String> {
    let mut samples = std::collections::BTreeMap::<u32, u64>::new();
    let mut path = CpuPath::default();
    let (ending, exit_at) = loop {
        match exited.recv_timeout(TICK) {
            Ok(at) => break (Ending::Exited, Some(at?)),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => {
                return Err("exec: the waiter thread ended without a status".into())
            }
        }
        if let Some(cpu) = current_cpu_of(ctx, pid) {
            *samples.entry(cpu).or_default() += 1;
            path.note(cpu, || monotonic_ns().saturating_sub(start_ns));
        }
        if ctx.stopping() {
            break (Ending::Stopped, None);
        }
        if Instant::now() >= deadline {
            break (Ending::TimedOut, None);
        }
    };
    Ok(Watched {
        ending,
        exit_at,
        samples,
        path,
    })
}

/// Ends the process group: a command still running gets SIGTERM then SIGKILL, and
/// leftovers of one that exited are ended too. Returns when the leader exited.
fn end_group(
    pid: i32,
    exited: &Receiver<Result<Instant, String>>,
    readers: &Readers,
    mut exit_at: Option<Instant>,
    notes: &mut Vec<String>,
) -> Result<Instant, String> {
    if exit_at.is_none() {
        signal_group(pid, libc::SIGTERM);
        if let Ok(at) = exited.recv_timeout(TERM_GRACE) {
            exit_at = Some(at?);
        }
        signal_group(pid, libc::SIGKILL);
    } else if !readers.wait(Duration::from_millis(50)) {
        // The leader is gone but someone still writes to its pipes: leftovers in the
        // group (a background job). They are ended before the next measurement.
        notes.push("the command left processes running; they were terminated".to_string());
        signal_group(pid, libc::SIGTERM);
        readers.wait(TERM_GRACE);
        signal_group(pid, libc::SIGKILL);
    } else {
        // Leftovers that closed their output are ended too.
        signal_group(pid, libc::SIGKILL);
    }
    match exit_at {
        Some(at) => Ok(at),
        None => exited
            .recv_timeout(Duration::from_secs(5))
            .map_err(|_| format!("exec: process {pid} did not end after SIGKILL"))?,
    }
}

fn cpu_set(cpus: &[u32]) -> Result<CpuSet, String> {
    let mut set = CpuSet::new();
    for &c in cpus {
        set.set(c as usize).map_err(|_| {
            format!(
                "CPU {c} is beyond the {} CPUs an affinity mask can name",
                CpuSet::count()
            )
        })?;
    }
    Ok(set)
}

/// Signals every process of the group led by `pid`. ESRCH (nobody left) is fine.
fn signal_group(pid: i32, sig: libc::c_int) {
    // SAFETY: kill has no memory effects; a negative pid addresses the process group.
    unsafe { libc::kill(-pid, sig) };
}

/// A thread that waits, without reaping, for `pid` to end and reports when it did.
fn waiter(pid: i32) -> Receiver<Result<Instant, String>> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let res = loop {
            // SAFETY: siginfo_t is plain data that waitid fills in.
            let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
            // SAFETY: waitid writes only into `info`.
            let r = unsafe {
                libc::waitid(
                    libc::P_PID,
                    pid as libc::id_t,
                    &mut info,
                    libc::WEXITED | libc::WNOWAIT,
                )
            };
            if r == 0 {
                break Ok(Instant::now());
            }
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                break Err(format!("exec: waitid on process {pid}: {e}"));
            }
        };
        let _ = tx.send(res);
    });
    rx
}

/// Reaps `pid`, with the resources it and its waited-for children used.
fn reap(pid: i32) -> Result<(ExitStatus, libc::rusage), String> {
    loop {
        let mut status = 0;
        // SAFETY: rusage is plain data that wait4 fills in.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: wait4 writes only into `status` and `ru`.
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
        if r == pid {
            return Ok((ExitStatus::from_raw(status), ru));
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(format!("exec: wait4 on process {pid}: {e}"));
        }
    }
}

/// The CPU `pid` last ran on (field 39 of /proc/PID/stat).
fn current_cpu_of(ctx: &MeasureCtx, pid: i32) -> Option<u32> {
    let stat = ctx.sys.read_string(&format!("proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses; fields resume after the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(36)?.parse().ok()
}

/// The two output readers of one child.
struct Readers {
    out: Option<JoinHandle<Captured>>,
    err: Option<JoinHandle<Captured>>,
}

impl Readers {
    fn start(child: &mut Child, limit: usize) -> Self {
        let spawn = |r: Option<Box<dyn std::io::Read + Send>>| {
            r.map(|r| std::thread::spawn(move || capture(r, limit)))
        };
        Self {
            out: spawn(child.stdout.take().map(|p| Box::new(p) as _)),
            err: spawn(child.stderr.take().map(|p| Box::new(p) as _)),
        }
    }

    fn finished(&self) -> bool {
        self.out.iter().chain(&self.err).all(|h| h.is_finished())
    }

    /// Waits up to `limit` for both streams to end; true if they did.
    fn wait(&self, limit: Duration) -> bool {
        let end = Instant::now() + limit;
        while !self.finished() {
            if Instant::now() >= end {
                return false;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        true
    }

    /// The captures of finished readers; a reader still blocked is left to end on its
    /// own, and its stream counts as empty.
    fn take(self) -> (Captured, Captured) {
        let get = |h: Option<JoinHandle<Captured>>| match h {
            Some(h) if h.is_finished() => h.join().unwrap_or_default(),
            _ => Captured::default(),
        };
        (get(self.out), get(self.err))
    }
}
