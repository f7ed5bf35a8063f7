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

/// Opens an existing database, for commands that only read (and `run --resume`). Under
/// sudo, the files SQLite creates beside it on opening are given to its user.
pub fn read_store(g: &Global) -> anyhow::Result<Store> {
    let (sudo, loc) = resolve_db(g);
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
             cleanly are not restored ({}); run `perflab restore`",
            p.len(),
            path.display()
        ),
        Ok(_) => {}
        Err(e) => eprintln!("perflab: warning: cannot read the knob journal: {e}"),
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
    use perflab_report::slim::{pipeline, RunFold, TelemetryBound};
    let mut bound = TelemetryBound::default();
    let mut read = Ok(());
    // Summing the histograms takes about as long as reading: on a thread beside it.
    let records = pipeline::beside(
        |sink| {
            read = store.visit_measurements(id, &mut |m| telemetry && bound.keeps(m), &mut |m| {
                match sink(m) {
                    true => Ok(()),
                    false => Err(perflab_store::StoreError::Visitor(
                        "the fold stopped".into(),
                    )),
                }
            })
        },
        |records| {
            let mut fold = RunFold::new();
            records.for_each(|m| fold.push(m));
            fold.finish()
        },
    );
    read?;
    Ok(records)
}

#[cfg(test)]
mod tests {
    #[test]
    fn utc_formats_known_instants() {
        assert_eq!(super::utc(0.0), "1970-01-01 00:00:00");
        assert_eq!(super::utc(1_795_000_000.0), "2026-11-18 11:06:40");
    }
}
