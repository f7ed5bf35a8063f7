//! What subcommands share: the SysRoot, the store, the journal path.

use std::io::Read;
use std::path::PathBuf;

use anyhow::Context;
use perflab_store::{Location, Store};
use perflab_sys::SysRoot;

use crate::cli::Global;
use crate::cmd::sudo_db;
use crate::exit::input;

pub fn sysroot(g: &Global) -> anyhow::Result<SysRoot> {
    match &g.sysroot {
        None => Ok(SysRoot::host()),
        Some(dir) if dir.is_dir() => Ok(SysRoot::at(dir)),
        Some(dir) => Err(input(format!(
            "--sysroot {}: not a directory",
            dir.display()
        ))),
    }
}

pub fn journal_path(g: &Global) -> PathBuf {
    g.journal
        .clone()
        .unwrap_or_else(perflab_knobs::Journal::default_path)
}

/// The database: `--db`, else under sudo the invoking user's default database, else
/// `$PERFLAB_DB` or this user's default; with the sudo user when that is why it was
/// chosen. `--db` and `PERFLAB_DB` may be a `postgres://` URL; the sudo rule only ever
/// picks a file (it applies when neither is given).
fn resolve_db(g: &Global) -> (Option<perflab_store::SudoUser>, Location) {
    match sudo_db::sudo_user(g) {
        Some(user) => {
            let path = user.db.clone();
            (Some(user), Location::Sqlite(path))
        }
        None => (
            None,
            Location::from_os(
                g.db.clone()
                    .unwrap_or_else(perflab_store::default_path)
                    .as_os_str(),
            ),
        ),
    }
}

/// Opens (creating if needed) the database, for commands that write. Under sudo it is the
/// invoking user's, and what perflab creates there is given to them.
pub fn open_store(g: &Global) -> anyhow::Result<Store> {
    let (sudo, loc) = resolve_db(g);
    let Location::Sqlite(path) = &loc else {
        return Ok(Store::open_location(&loc)?);
    };
    // Before the context below names the path: a `mysql://` URL may hold a password.
    perflab_store::check_file_path(path)?;
    crate::cmd::private_data::tighten_default(g, path);
    let created = sudo_db::missing_dirs(path);
    let store =
        Store::open(path).with_context(|| format!("results database {}", path.display()))?;
    if let Some(user) = &sudo {
        eprintln!(
            "perflab: running as root through sudo: results go to {}'s database {}",
            user.name,
            path.display()
        );
        give_to(user, path, &created);
    }
    Ok(store)
}

/// Refuses a `--db` that cannot be a database (a directory, a `mysql://` URL) before a
/// command does anything else, so the refusal is its only line.
pub fn check_db(g: &Global) -> anyhow::Result<()> {
    if let (_, Location::Sqlite(path)) = resolve_db(g) {
        perflab_store::check_file_path(&path)?;
    }
    Ok(())
}

/// Opens an existing database, for commands that only read. A damaged one (see
/// `perflab_store::Health`) is said to be, once, and read as far as it reads.
pub fn read_store(g: &Global) -> anyhow::Result<Store> {
    let store = existing_store(g)?;
    let health = store.health();
    if !health.is_sound() {
        eprintln!(
            "perflab: warning: results database {} is damaged ({}); what still reads is \
             shown, and nothing will be written to it",
            store.location(),
            health.summary()
        );
    }
    Ok(store)
}

/// Opens an existing database to record into (`run --resume`): a damaged one is refused,
/// as [`open_store`] refuses it, before anything is written.
pub fn resume_store(g: &Global) -> anyhow::Result<Store> {
    let store = existing_store(g)?;
    store.refuse_if_damaged()?;
    Ok(store)
}

/// An existing database, as it is. Under sudo, the files SQLite creates beside it on
/// opening are given to its user.
fn existing_store(g: &Global) -> anyhow::Result<Store> {
    let (sudo, loc) = resolve_db(g);
    if let Location::Sqlite(path) = &loc {
        crate::cmd::private_data::tighten_default(g, path);
    }
    let store = Store::open_existing_location(&loc)?;
    if let (Some(user), Location::Sqlite(path)) = (&sudo, &loc) {
        give_to(user, path, &[]);
    }
    Ok(store)
}

/// Ownership is a courtesy on top of results already safe in the database: a failure (a
/// file system that refuses chown) is said, not fatal.
fn give_to(user: &perflab_store::SudoUser, db: &std::path::Path, dirs: &[PathBuf]) {
    if let Err(e) = sudo_db::give_to(user, db, dirs) {
        eprintln!(
            "perflab: warning: {e}; {} may need `sudo chown -R {}` to write to it",
            db.display(),
            user.name
        );
    }
}

/// A CPU pair given as `A,B`; `flag` names the option in the error.
pub fn parse_pair(flag: &str, p: &str) -> anyhow::Result<(u32, u32)> {
    let bad = || input(format!("{flag} {p:?}: expected A,B (two CPU numbers)"));
    let (a, b) = p.split_once(',').ok_or_else(bad)?;
    Ok((
        a.trim().parse().map_err(|_| bad())?,
        b.trim().parse().map_err(|_| bad())?,
    ))
}

/// Every start warns while a journal of unrestored settings is pending.
pub fn warn_pending_journal(g: &Global) {
    let path = journal_path(g);
    match perflab_knobs::pending(&path) {
        Ok(p) if !p.is_empty() => eprintln!(
            "perflab: warning: {} setting(s) changed by an earlier perflab that did not exit \
             cleanly are not restored ({}); run `perflab restore{}`",
            p.len(),
            path.display(),
            journal_flag(g)
        ),
        Ok(_) => {}
        Err(e) => eprintln!("perflab: warning: cannot read the knob journal: {e}"),
    }
}

/// ` --journal PATH` when `--journal` was given (the restore a hint names must read the
/// same journal), else nothing.
fn journal_flag(g: &Global) -> String {
    match &g.journal {
        Some(j) => format!(
            " --journal {}",
            crate::cmd::hint::shell_quote(&j.to_string_lossy())
        ),
        None => String::new(),
    }
}

/// Seconds since the epoch as `YYYY-MM-DD HH:MM:SS` (UTC), without a date crate:
/// days-to-civil from Howard Hinnant's algorithm.
/// The statistics settings and regression buckets of `--alpha`, `--noise` and
/// `--buckets`, checked: a bad value is an input error naming the flag.
pub fn verdict_settings(
    v: &crate::cli::VerdictArgs,
) -> anyhow::Result<(perflab_stats::StatsConfig, perflab_stats::Buckets)> {
    let buckets: perflab_stats::Buckets = v
        .buckets
        .parse()
        .map_err(|e| crate::exit::input(format!("--buckets {:?}: {e}", v.buckets)))?;
    let cfg = perflab_stats::StatsConfig {
        alpha: v.alpha,
        noise_pct: v.noise,
        ..perflab_stats::StatsConfig::default()
    };
    cfg.validate().map_err(|e| {
        crate::exit::input(match e {
            // In the words of the flag the person typed, not the setting's field name.
            perflab_stats::StatsError::Config {
                name,
                value,
                reason,
            } => format!(
                "--{} {}: {reason}",
                if name == "noise_pct" { "noise" } else { name },
                perflab_core::limits::number(value)
            ),
            e => e.to_string(),
        })
    })?;
    Ok((cfg, buckets))
}

pub fn utc(epoch: f64) -> String {
    perflab_report::fmt::utc(epoch)
}

/// The text of FILE, or of standard input for `-` (`import`, `import --parser json`).
pub fn read_input(path: &std::path::Path) -> anyhow::Result<String> {
    let mut bytes = Vec::new();
    let result = if path.as_os_str() == "-" {
        std::io::stdin().read_to_end(&mut bytes).map(|_| ())
    } else {
        std::fs::File::open(path)
            .and_then(|mut f| f.read_to_end(&mut bytes))
            .map(|_| ())
    };
    result.map_err(|e| input(format!("{}: cannot read: {e}", path.display())))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Why `dir` cannot take a file perflab writes there, or `None` when it is a directory.
/// perflab never creates it: a typo in a path is an input error that leaves nothing
/// behind.
pub fn missing_dir(dir: &std::path::Path) -> Option<&'static str> {
    if dir.is_dir() {
        None
    } else if dir.exists() {
        Some("is not a directory")
    } else {
        Some("does not exist")
    }
}

/// The run's records for a report, read as the store streams them: each cell's raw
/// histograms summed as they arrive, telemetry rows for the first repetitions of each
/// cell only (see `perflab_report::slim`), so the report holds one histogram per point
/// and variant rather than one per measurement, and bounded telemetry.
///
/// `telemetry: false` reads no telemetry rows at all, for a reader of metrics and
/// histograms alone (`compare` without `--drilldown`).
pub fn report_records(
    store: &Store,
    id: perflab_store::RunId,
    telemetry: bool,
) -> anyhow::Result<Vec<perflab_store::MeasurementRecord>> {
    let mut bound = perflab_report::slim::TelemetryBound::default();
    let mut fold = perflab_report::slim::RunFold::new();
    store.visit_measurements(id, &mut |m| telemetry && bound.keeps(m), &mut |m| {
        fold.push(m);
        Ok(())
    })?;
    Ok(fold.finish())
}

#[cfg(test)]
mod tests {
    use perflab_core::{Better, HistogramData, Metric, ParamValue, Params, TelemetryRow, Unit};
    use perflab_report::full::{build_report, ReportOptions, RunData};
    use perflab_report::Format;
    use perflab_store::{MeasurementRecord, MeasurementStatus, NewRun, PlannedMeasurement, Store};

    #[test]
    fn utc_formats_known_instants() {
        assert_eq!(super::utc(0.0), "1970-01-01 00:00:00");
        assert_eq!(super::utc(1_795_000_000.0), "2026-11-18 11:06:40");
    }

    /// 3 points × 2 variants × 60 repetitions, interleaved: more records than a chunk of
    /// the store's streaming read, more repetitions than the telemetry rows are kept
    /// for, parameters that differ between the variants, a failure, an ineffective one.
    fn stored_run(store: &mut Store) -> (perflab_store::RunId, Vec<MeasurementRecord>) {
        let plan: Vec<PlannedMeasurement> = (0..360u32)
            .map(|seq| {
                let (point, variant) = (seq / 120, ["a", "b"][(seq % 2) as usize]);
                let value = ParamValue::Float(f64::from(100 + point * 10 + seq % 2));
                PlannedMeasurement {
                    seq,
                    point,
                    params: Params([("value".to_string(), value)].into_iter().collect()),
                    variant: variant.into(),
                    rep: (seq % 120) / 2,
                    role: Default::default(),
                }
            })
            .collect();
        let spec = serde_json::from_value(serde_json::json!({
            "name": "streamed", "workload": "null", "primary_metric": "value",
            "variants": [{"name": "a"}, {"name": "b"}], "repetitions": 60
        }))
        .unwrap();
        let run = NewRun {
            uid: None,
            study: "streamed".into(),
            workload: "null".into(),
            label: None,
            spec,
            fingerprint: Default::default(),
            plan: plan.clone(),
            unavailable: Vec::new(),
        };
        let id = store.create_run(&run, 1.0).unwrap();
        let mut written = Vec::new();
        let mut h = hdrhistogram::Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).unwrap();
        for p in &plan {
            h.reset();
            for i in 0..500u64 {
                h.record(2_000 + (i * 7_919 + u64::from(p.seq) * 31) % 9_000)
                    .unwrap();
            }
            let status = match p.seq {
                7 => MeasurementStatus::Failed("died".into()),
                200 => MeasurementStatus::Ineffective("a knob let go".into()),
                _ => MeasurementStatus::Ok,
            };
            let telemetry = ["LOC", "RES", "CAL"]
                .iter()
                .map(|k| {
                    TelemetryRow::new(
                        "interrupts",
                        *k,
                        "",
                        Some(1),
                        f64::from(p.seq % 9),
                        Unit::Count,
                    )
                })
                .collect();
            let value = f64::from(1_000 + p.seq % 17) * if p.variant == "b" { 1.1 } else { 1.0 };
            let rec = MeasurementRecord {
                seq: p.seq,
                point: p.point,
                params: p.params.clone(),
                variant: p.variant.clone(),
                rep: p.rep,
                status,
                started_at: 10.0 + f64::from(p.seq),
                elapsed_s: 0.5,
                output: perflab_core::WorkloadOutput {
                    metrics: vec![Metric::new("value", value, Unit::Count, Better::Higher)],
                    histograms: vec![HistogramData::from_hdr("latency", Unit::Nanoseconds, &h)],
                    threads: Vec::new(),
                    notes: Vec::new(),
                },
                telemetry,
                role: Default::default(),
                monitors: vec!["interrupts".into()],
            };
            store.record(id, &rec).unwrap();
            written.push(rec);
        }
        (id, written)
    }

    /// Reading a run as it streams (in chunks, telemetry rows read for the first
    /// repetitions only, parameters decoded once, histograms summed as they come) gives
    /// what folding the whole run in memory gives, and so the same report in every
    /// format.
    #[test]
    fn a_streamed_run_is_the_whole_run_folded() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(dir.path().join("streamed.db")).unwrap();
        let (id, written) = stored_run(&mut store);
        let whole = store.measurements(id).unwrap();
        assert_eq!(whole, written);
        let folded = perflab_report::slim::fold(whole.clone());
        let streamed = super::report_records(&store, id, true).unwrap();
        assert_eq!(streamed, folded);
        let kept = streamed.iter().filter(|m| !m.telemetry.is_empty()).count();
        // The first 20 of each point and variant, and the failed and the ineffective
        // one (cells of their own).
        assert_eq!(kept, 3 * 2 * perflab_report::slim::TELEMETRY_REPS + 2);
        // Without telemetry: the same records, none with rows.
        let bare = super::report_records(&store, id, false).unwrap();
        let mut without = folded.clone();
        without.iter_mut().for_each(|m| m.telemetry.clear());
        assert_eq!(bare, without);
        let info = store.run(id).unwrap();
        let report = |ms: Vec<MeasurementRecord>| {
            let runs = [RunData {
                info: info.clone(),
                ms,
            }];
            build_report(&runs, &ReportOptions::default()).unwrap()
        };
        let (a, b) = (report(streamed), report(folded));
        for f in [Format::Text, Format::Markdown, Format::Mail, Format::Html] {
            assert_eq!(a.render(f), b.render(f), "{f:?}");
        }
        assert_eq!(a.json(), b.json());
    }
}
