//! `perflab fleet`: one study on many hosts over ssh, into one store, compared like
//! variants.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use perflab_fleet::connection::Watch;
use perflab_fleet::driver::{self, Fleet};
use perflab_fleet::provision::Local;
use perflab_fleet::state::{self, FleetState, HostEntry, HostStatus};
use perflab_report::full::{ReportOptions, RunData};
use perflab_store::Store;

use crate::cli::Global;
use crate::cli_fleet::{
    FleetAgentArgs, FleetArgs, FleetCommand, FleetFormat, FleetReportArgs, FleetResumeArgs,
    FleetRunArgs,
};
use crate::cmd::fleet_hosts::{duration, host_list, reach_of, ssh_from};
use crate::cmd::{common, envelope, fleet_doctor, report};
use crate::exit::input;

pub fn run(g: &Global, a: FleetArgs) -> anyhow::Result<i32> {
    match a.command {
        FleetCommand::Run(r) => start(g, r),
        FleetCommand::Resume(r) => resume(g, r),
        FleetCommand::Doctor(d) => fleet_doctor::run(d),
        FleetCommand::Report(r) => fleet_report(g, r),
        FleetCommand::Ls(a) => ls(a.format.is_json()),
        FleetCommand::Agent(a) => agent(g, a),
    }
}

fn state_dir() -> anyhow::Result<PathBuf> {
    state::default_dir().ok_or_else(|| {
        input("neither XDG_STATE_HOME nor HOME is set: nowhere to keep the fleet's record")
    })
}

fn start(g: &Global, a: FleetRunArgs) -> anyhow::Result<i32> {
    let hosts = host_list(&a.hosts)?;
    let (ssh, want) = ssh_from(&reach_of(&a.hosts))?;
    let reconnect_for = duration("--reconnect-for", &a.reconnect_for)?;
    common::verdict_settings(&a.verdict)?;
    let study_toml = study_file(&a.study)?;
    let mut run_args = vec![a.study.clone()];
    run_args.extend(a.run_args.iter().cloned());
    check_locally(&run_args)?;
    let store = common::open_store(g)?;
    let dir = state_dir()?;
    let mut st = FleetState {
        id: state::random_hex(4)?,
        created_at: perflab_lab::runner::now_epoch(),
        run_args,
        study_toml,
        db: Some(store.location().to_string()),
        hosts: hosts
            .into_iter()
            .map(|host| -> anyhow::Result<HostEntry> {
                Ok(HostEntry {
                    host,
                    uid: state::random_hex(16)?,
                    local_run: None,
                    status: HostStatus::Pending,
                    reason: String::new(),
                    received: (0, 0),
                    planned: 0,
                })
            })
            .collect::<anyhow::Result<_>>()?,
    };
    st.save(&dir)
        .map_err(|e| anyhow::anyhow!("cannot save the fleet record in {}: {e}", dir.display()))?;
    eprintln!(
        "fleet {}: {} on {} host(s); if it stops, go on with `perflab fleet resume {}`",
        st.id,
        a.study,
        st.hosts.len(),
        st.id
    );
    let fleet = Fleet {
        ssh,
        want,
        reconnect_for,
        remote_db: a.remote_db.clone(),
        state_dir: dir,
    };
    drive(&fleet, &mut st, store, a.format, &a.verdict)
}

fn resume(g: &Global, a: FleetResumeArgs) -> anyhow::Result<i32> {
    let (ssh, want) = ssh_from(&a.reach)?;
    let reconnect_for = duration("--reconnect-for", &a.reconnect_for)?;
    common::verdict_settings(&a.verdict)?;
    let dir = state_dir()?;
    let mut st = load(&dir, &a.id)?;
    let mut todo = 0;
    for h in &mut st.hosts {
        let again = match h.status {
            HostStatus::Complete => false,
            HostStatus::Failed => a.retry_failed,
            _ => true,
        };
        if again {
            h.status = HostStatus::Pending;
            h.reason.clear();
            todo += 1;
        }
    }
    let store = store_of(g, &st)?;
    eprintln!(
        "fleet {}: {} of {} host(s) to go on with",
        st.id,
        todo,
        st.hosts.len()
    );
    let fleet = Fleet {
        ssh,
        want,
        reconnect_for,
        remote_db: None,
        state_dir: dir,
    };
    drive(&fleet, &mut st, store, a.format, &a.verdict)
}

/// The store a fleet's results went to: --db when given, else the one it was started
/// with (unless its location hid a password, which is never kept).
fn store_of(g: &Global, st: &FleetState) -> anyhow::Result<Store> {
    if g.db.is_some() {
        return common::open_store(g);
    }
    match &st.db {
        Some(db) if db.contains("***") => Err(input(format!(
            "fleet {} stored into {db}; give --db with its password again",
            st.id
        ))),
        Some(db) => common::open_store(&Global {
            db: Some(db.into()),
            ..g.clone()
        }),
        None => common::open_store(g),
    }
}

/// A study that is a file here is sent to the hosts as its text.
fn study_file(study: &str) -> anyhow::Result<Option<String>> {
    let path = Path::new(study);
    if !path.is_file() {
        return Ok(None);
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| input(format!("{}: cannot read: {e}", path.display())))?;
    Ok(Some(text))
}

/// Bad run options are found here, before any host is touched: the same `perflab run`
/// expands the experiment with --dry-run and must accept it.
fn check_locally(run_args: &[String]) -> anyhow::Result<()> {
    let exe = std::env::current_exe()?;
    let out = std::process::Command::new(exe)
        .arg("run")
        .args(run_args)
        .arg("--dry-run")
        .stdin(std::process::Stdio::null())
        .output()?;
    if out.status.success() {
        return Ok(());
    }
    let err = String::from_utf8_lossy(&out.stderr);
    let line = perflab_fleet::ssh::last_line(&err);
    Err(input(format!(
        "the study does not expand here, so it would not on the hosts: {}",
        line.strip_prefix("perflab: ").unwrap_or(&line)
    )))
}

fn drive(
    fleet: &Fleet,
    st: &mut FleetState,
    store: Store,
    format: FleetFormat,
    verdict: &crate::cli::VerdictArgs,
) -> anyhow::Result<i32> {
    let local = Local::this_build()?;
    let stop = Arc::new(AtomicBool::new(false));
    let signals = perflab_knobs::signals::install(stop.clone())?;
    let watch = Progress::default();
    let store = driver::run(fleet, st, store, &local, &watch, &stop);
    st.save(&fleet.state_dir)?;
    if let Some(sig) = signals.received() {
        eprintln!(
            "fleet {}: stopped here; the hosts' runs go on; collect them with `perflab fleet \
             resume {}`",
            st.id, st.id
        );
        return Ok(128 + sig);
    }
    let runs = host_runs(&store, st)?;
    let (stats, buckets) = common::verdict_settings(verdict)?;
    let opts = ReportOptions {
        stats,
        metric: None,
        buckets,
        changes: 3,
        figures: false,
        // The hosts' runs may be in the fleet's own store, not --db's: no hint names one.
        db_flag: String::new(),
    };
    match format {
        FleetFormat::Text => {
            crate::stdout_guard::print(summary(st))?;
            if !runs.is_empty() {
                crate::stdout_guard::line("")?;
                report::emit(&runs, &opts, None, None, &[])?;
            }
        }
        FleetFormat::Json => {
            let report = if runs.is_empty() {
                serde_json::Value::Null
            } else {
                // The report's sections by id, as `perflab report --format json` has them.
                serde_json::Value::Object(
                    perflab_report::views::report::view(&runs, &opts)?.json(&[])?,
                )
            };
            #[derive(serde::Serialize)]
            struct Doc<'a> {
                fleet: &'a str,
                hosts: &'a [HostEntry],
                report: serde_json::Value,
            }
            envelope::print(&Doc {
                fleet: &st.id,
                hosts: &st.hosts,
                report,
            })?;
        }
    }
    Ok(exit_code(st))
}

/// 0 when every host completed with every measurement ok; 3 when they completed with some
/// measurements failed; 1 when a host did not complete.
fn exit_code(st: &FleetState) -> i32 {
    if st.hosts.iter().any(|h| h.status != HostStatus::Complete) {
        1
    } else if st.hosts.iter().any(|h| h.received.1 > 0) {
        3
    } else {
        0
    }
}

/// The runs of the hosts that completed, labelled by host, in the fleet's order.
fn host_runs(store: &Store, st: &FleetState) -> anyhow::Result<Vec<RunData>> {
    let mut runs = Vec::new();
    for h in &st.hosts {
        let (Some(id), HostStatus::Complete) = (h.local_run, &h.status) else {
            continue;
        };
        let mut info = store.run(id)?;
        info.label = Some(h.host.name.clone());
        runs.push(RunData {
            ms: store.measurements(id)?,
            info,
        });
    }
    Ok(runs)
}

/// One line per host: how far it got and why not further.
pub fn summary(st: &FleetState) -> String {
    let mut rows = vec![[
        "host".to_string(),
        "status".into(),
        "measurements".into(),
        "run".into(),
        "note".into(),
    ]];
    for h in &st.hosts {
        let (ok, failed) = h.received;
        let counts = if h.planned == 0 {
            "-".to_string()
        } else if failed > 0 {
            format!("{ok}/{} ok, {failed} failed", h.planned)
        } else {
            format!("{ok}/{} ok", h.planned)
        };
        rows.push([
            h.host.name.clone(),
            h.status.word().into(),
            counts,
            h.local_run.map_or("-".into(), |r| r.to_string()),
            h.reason.clone(),
        ]);
    }
    let mut widths = [0usize; 5];
    for r in &rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut out = format!("fleet {}: {}\n", st.id, st.shown_args());
    for r in &rows {
        let mut line = String::new();
        for (i, (c, w)) in r.iter().zip(widths).enumerate() {
            if i == 4 {
                line.push_str(c);
            } else {
                line.push_str(&format!("{c:<w$}  "));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    if st.hosts.iter().any(|h| h.status != HostStatus::Complete) {
        out.push_str(&format!(
            "not every host completed: `perflab fleet resume {}` goes on where they stopped\n",
            st.id
        ));
    }
    out
}

fn fleet_report(g: &Global, a: FleetReportArgs) -> anyhow::Result<i32> {
    let (stats, buckets) = common::verdict_settings(&a.verdict)?;
    let st = load(&state_dir()?, &a.id)?;
    let store = if g.db.is_some() {
        common::read_store(g)?
    } else {
        match &st.db {
            Some(db) if !db.contains("***") => common::read_store(&Global {
                db: Some(db.into()),
                ..g.clone()
            })?,
            _ => common::read_store(g)?,
        }
    };
    let runs = host_runs(&store, &st)?;
    if runs.is_empty() {
        return Err(input(format!(
            "fleet {}: no host has completed yet (`perflab fleet resume {}`)",
            st.id, st.id
        )));
    }
    let opts = ReportOptions {
        stats,
        metric: a.metric.clone(),
        buckets,
        changes: 3,
        figures: a.html.is_some(),
        // The hosts' runs may be in the fleet's own store, not --db's: no hint names one.
        db_flag: String::new(),
    };
    report::emit(&runs, &opts, a.html.as_deref(), a.format, &[])?;
    Ok(0)
}

/// Every fleet run recorded in `dir`, newest first.
fn states(dir: &std::path::Path) -> Vec<FleetState> {
    let mut states: Vec<FleetState> = match std::fs::read_dir(dir) {
        Ok(entries) => entries
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                let id = name.strip_suffix(".json")?;
                FleetState::load(dir, id).ok()
            })
            .collect(),
        Err(_) => Vec::new(),
    };
    states.sort_by(|a, b| b.created_at.total_cmp(&a.created_at));
    states
}

/// The fleet run `id` names: its hex id, or `last`/`last~N` counted back over `fleet ls`
/// (newest first), as a run is named (`crate::run_ref`).
fn load(dir: &std::path::Path, id: &str) -> anyhow::Result<FleetState> {
    let back = match id.parse::<crate::run_ref::RunRef>() {
        Ok(crate::run_ref::RunRef::Last(n)) => n as usize,
        _ => return FleetState::load(dir, id).map_err(input),
    };
    let mut all = states(dir);
    let held = all.len();
    if back >= held {
        return Err(input(match held {
            0 => format!("{id}: no fleet runs in {}", dir.display()),
            _ => format!(
                "{id}: {} holds {held} fleet run(s), so the oldest is last~{}",
                dir.display(),
                held - 1
            ),
        }));
    }
    Ok(all.swap_remove(back))
}

fn ls(json: bool) -> anyhow::Result<i32> {
    let dir = state_dir()?;
    let states = states(&dir);
    if json {
        #[derive(serde::Serialize)]
        struct Fleets<'a> {
            fleets: &'a [FleetState],
        }
        envelope::print(&Fleets { fleets: &states })?;
        return Ok(0);
    }
    if states.is_empty() {
        crate::stdout_guard::line(format!("no fleet runs in {}", dir.display()))?;
        return Ok(0);
    }
    for st in &states {
        let hosts: Vec<String> = st
            .hosts
            .iter()
            .map(|h| format!("{} {}", h.host.name, h.status.word()))
            .collect();
        crate::stdout_guard::line(format!(
            "{}  {}  {}  [{}]",
            st.id,
            common::utc(st.created_at),
            st.shown_args(),
            hosts.join(", ")
        ))?;
    }
    Ok(0)
}

fn agent(g: &Global, a: FleetAgentArgs) -> anyhow::Result<i32> {
    if a.uid.len() != 32 || !a.uid.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err(input(format!("--uid {:?} is not a run uid", a.uid)));
    }
    let db = match &g.db {
        Some(db) => db.clone(),
        None => {
            // The data directory, not $PERFLAB_DB: the host's own results database (or a
            // PostgreSQL URL there) is not where a fleet's per-run files belong.
            let base = perflab_store::default_path_from(|name| {
                (name != "PERFLAB_DB")
                    .then(|| std::env::var_os(name))
                    .flatten()
            })
            .unwrap_or_else(|| PathBuf::from("perflab-results.db"));
            let dir = base.parent().map(Path::to_path_buf).unwrap_or_default();
            dir.join("fleet").join(format!("{}.db", a.uid))
        }
    };
    let mut run_args = a.run_args.clone();
    if run_args.is_empty() {
        return Err(input("fleet agent: no study given after --"));
    }
    if let Some(text) = &a.study_toml {
        if let Some(dir) = db.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let path = db.with_extension("toml");
        std::fs::write(&path, text)?;
        run_args[0] = path.display().to_string();
    }
    let args = perflab_fleet::agent::AgentArgs {
        db,
        uid: a.uid.clone(),
        run_args,
        poll: Duration::from_millis(200),
    };
    Ok(perflab_fleet::agent::run(
        &args,
        &mut crate::stdout_guard::Stdout,
    ))
}

/// Progress on standard error: a line per event of a host, and its count at most every
/// two seconds.
#[derive(Default)]
struct Progress {
    last: Mutex<HashMap<String, Instant>>,
}

impl Watch for Progress {
    fn line(&self, host: &str, text: &str) {
        eprintln!("[{host}] {text}");
    }

    fn measured(&self, host: &str, received: u32, planned: u32) {
        let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        let due = last
            .get(host)
            .is_none_or(|t| now.duration_since(*t) >= Duration::from_secs(2));
        if due || received == planned {
            last.insert(host.to_string(), now);
            eprintln!("[{host}] {received}/{planned} measured");
        }
    }
}
