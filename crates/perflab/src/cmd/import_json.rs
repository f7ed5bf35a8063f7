//! `perflab import --parser perflab-json FILE`: a `perflab export --format json` document
//! becomes a stored run again — the same uid, plan, figures and status — so a run can be
//! moved between databases as a file, and importing it twice adds nothing the second time.
//!
//! The document is read as a stream (`import_stream`), never whole: once to check it all
//! before the database is opened, then once for the plan and once for the measurements,
//! each written as it is read. What is held is a fingerprint of each plan row, so the
//! memory an import takes does not grow with what the measurements carry.

use std::collections::hash_map::{DefaultHasher, Entry};
use std::collections::HashMap;
use std::hash::Hasher;
use std::path::{Path, PathBuf};

use perflab_core::plausible::{check_record, Nan};
use perflab_store::{
    ensure_run_streamed, settle_run, MeasurementRecord, PlannedMeasurement, RecordCopier, RunInfo,
    StoreError,
};

use crate::cli::{Global, ImportArgs};
use crate::cmd::common;
use crate::cmd::import_stream::{self, Head, Item, Layout, Lists, Stop};
use crate::cmd::import_summary::ImportSummary;
use crate::exit::input;

/// The parser name `import --parser` takes for an export document.
pub const NAME: &str = "perflab-json";

pub fn run(g: &Global, a: &ImportArgs) -> anyhow::Result<i32> {
    let file = a.file.display().to_string();
    // Standard input is read more than once, so it is kept in a file first.
    let spooled = Spool::of(&a.file)?;
    let path = spooled.path();
    // Everything is checked before the database is opened: a bad document changes nothing.
    let (head, layout) = check_document(path, &file)?;
    let mut info = head.run.expect("a document without `run` is refused");
    if let Some(label) = &a.label {
        info.label = Some(label.clone());
    }
    if let Some(study) = &a.study {
        info.study = study.clone();
    }
    let mut store = common::open_store(g)?;
    let mut report = ensure(&mut store, &info, (path, &file, layout), head.has_plan)?;
    let mut copier = RecordCopier::new(&store, report.run)?;
    // Parsed on a thread beside the recording, which takes as long again.
    let (records, reader) = stream(
        path,
        &file,
        layout,
        Lists::MEASUREMENTS,
        |item| match item {
            Item::Measurement(m) => Some(m),
            _ => None,
        },
    );
    let copied = records
        .into_iter()
        .try_for_each(|m| copier.push(&mut store, &m?).map_err(anyhow::Error::from));
    reader
        .join()
        .expect("the measurements' reader does not panic");
    copied?;
    report.copied = copier.report.copied;
    report.skipped = copier.report.skipped;
    settle_run(&mut store, &info, &report)?;
    let mut summary = ImportSummary::new(a, &store, report.run, NAME);
    summary.created = report.created;
    summary.whole = true;
    summary.study = info.study.clone();
    summary.measurements = report.copied.into();
    summary.there_already = report.skipped.into();
    if info.uid.is_empty() {
        summary.notes.push(
            "the export has no run uid (made by an older perflab): importing it again makes \
             another run"
                .into(),
        );
    }
    summary.say(a.format)?;
    Ok(0)
}

/// Reads the whole document once, storing nothing, and checks it (its head, every plan
/// row and measurement): as `export` lays it out where it is, as any JSON where not.
/// Returns its head and the layout that read it.
fn check_document(path: &Path, file: &str) -> anyhow::Result<(Head, Layout)> {
    let mut layout = Layout::Lines;
    let mut checked = Check::default();
    let checking = |item: Item, checked: &mut Check| match item {
        Item::Head(head) => check_head(&head, file),
        item => checked
            .item(item)
            .map_err(|why| input(format!("{file}: {why}"))),
    };
    let head = match read(path, file, layout, Lists::BOTH, &mut |i| {
        checking(i, &mut checked)
    })? {
        None => {
            layout = Layout::Any;
            checked = Check::default();
            read(path, file, layout, Lists::BOTH, &mut |i| {
                checking(i, &mut checked)
            })?
            .expect("the reader of any JSON reads any layout")
        }
        Some(head) => head,
    };
    check_head(&head, file)?;
    checked
        .finish(head.has_plan)
        .map_err(|e| input(format!("{file}: {e}")))?;
    Ok((head, layout))
}

/// The run in `store`, created with the document's plan (or, in an export without one,
/// what it recorded) read from `path` (named `file`, laid out as `layout`) as it is
/// written.
fn ensure(
    store: &mut perflab_store::Store,
    info: &RunInfo,
    (path, file, layout): (&Path, &str, Layout),
    has_plan: bool,
) -> anyhow::Result<perflab_store::CopyReport> {
    let lists = if has_plan {
        Lists::PLAN
    } else {
        Lists::MEASUREMENTS
    };
    let (rows, reader) = stream(path, file, layout, lists, |item| match item {
        Item::Plan(p) => Some(p),
        Item::Measurement(m) => Some(planned(&m)),
        Item::Head(_) => None,
    });
    // A read that fails (the file changed since it was checked) stores nothing.
    let rows = rows
        .into_iter()
        .map(|row| row.map_err(|e| StoreError::InvalidPlan(format!("{e:#}"))));
    let report = ensure_run_streamed(store, info, rows);
    reader.join().expect("the plan's reader does not panic");
    Ok(report?)
}

/// The entries `keep` takes of the document's `lists`, read on a thread of their own and
/// handed over as they are parsed, a read that fails as its last; the thread ends when
/// the document does or the receiver is dropped.
fn stream<T: Send + 'static>(
    path: &Path,
    file: &str,
    layout: Layout,
    lists: Lists,
    keep: fn(Item) -> Option<T>,
) -> (
    std::sync::mpsc::Receiver<anyhow::Result<T>>,
    std::thread::JoinHandle<()>,
) {
    let (tx, rx) = std::sync::mpsc::sync_channel(256);
    let (path, file) = (path.to_path_buf(), file.to_string());
    let reader = std::thread::spawn(move || {
        let sent = read(&path, &file, layout, lists, &mut |item| match keep(item) {
            // Closed: the receiver stopped taking entries, and says why itself.
            Some(t) => tx.send(Ok(t)).map_err(|_| anyhow::anyhow!("stopped")),
            None => Ok(()),
        });
        let failed = match sent {
            Ok(Some(_)) => return,
            Ok(None) => changed(&file)(),
            Err(e) => e,
        };
        let _ = tx.send(Err(failed));
    });
    (rx, reader)
}

/// The error of a document that a second read finds laid out otherwise than the first.
fn changed(file: &str) -> impl FnOnce() -> anyhow::Error + '_ {
    move || anyhow::anyhow!("{file} changed while it was imported")
}

/// One read of the document at `path` (named `file` in messages): its head, or `None`
/// when it is not laid out as `layout` says. A document that is no export, and an error
/// `each` returns, are errors.
fn read(
    path: &Path,
    file: &str,
    layout: Layout,
    lists: Lists,
    each: &mut dyn FnMut(Item) -> anyhow::Result<()>,
) -> anyhow::Result<Option<Head>> {
    let f = std::fs::File::open(path).map_err(|e| input(format!("{file}: cannot read: {e}")))?;
    match import_stream::read(f, layout, lists, each) {
        Ok(head) => Ok(Some(head)),
        Err(Stop::NotLines) => Ok(None),
        Err(Stop::Each(e)) => Err(e),
        Err(Stop::Parse(e)) if e.is_io() => Err(input(format!("{file}: cannot read: {e}"))),
        Err(Stop::Parse(e)) => Err(input(format!("{file}: not a perflab JSON export: {e}"))),
    }
}

fn check_head(head: &Head, file: &str) -> anyhow::Result<()> {
    match (head.format.as_deref(), head.format_version) {
        (Some(f), _) if f != super::export::FORMAT => {
            return Err(input(format!(
                "{file}: its format is {f:?}, not {:?}",
                super::export::FORMAT
            )))
        }
        (_, Some(v)) if v > super::export::FORMAT_VERSION => {
            return Err(input(format!(
                "{file}: export format version {v} is newer than this perflab reads ({}); \
                 upgrade perflab to import it",
                super::export::FORMAT_VERSION
            )))
        }
        _ => {}
    }
    // serde reads a row written as an array by `TelemetryRow`'s field order, which is the
    // order the export names; a document naming another was not written by perflab.
    let ours = super::export_record::TELEMETRY_COLUMNS;
    if let Some(columns) = head.telemetry_columns.as_deref().filter(|c| *c != ours) {
        return Err(input(format!(
            "{file}: its telemetry rows list {columns:?}, not {ours:?} as perflab writes them"
        )));
    }
    // The fingerprint's timing probe is a reading like any figure (issue 31 item 11).
    if let Some(probe) = head.run.as_ref().and_then(|r| r.fingerprint.probe.as_ref()) {
        perflab_core::plausible::check_probe(probe)
            .map_err(|e| input(format!("{file}: run fingerprint, {e}")))?;
    }
    Ok(())
}

fn planned(m: &MeasurementRecord) -> PlannedMeasurement {
    PlannedMeasurement {
        seq: m.seq,
        point: m.point,
        params: m.params.clone(),
        variant: m.variant.clone(),
        rep: m.rep,
        role: m.role,
    }
}

/// A plan row's fingerprint: equal rows have equal ones, and two rows that differ
/// collide with a chance of 2^-64.
fn fingerprint(p: &PlannedMeasurement) -> u64 {
    let mut h = DefaultHasher::new();
    h.write(&serde_json::to_vec(p).expect("a plan row serializes"));
    h.finish()
}

/// The document holds one run: unique seqs, and every measurement as its plan row says.
/// Fed one entry at a time, in document order; the plan may come after the measurements.
#[derive(Default)]
struct Check {
    /// seq -> fingerprint of the plan's row.
    plan: HashMap<u32, u64>,
    /// Whether a plan row came before: measurements are checked against it as they come.
    plan_seen: bool,
    /// Whether the plan's seqs rise (a streamed plan must).
    plan_unordered: Option<u32>,
    last_plan: Option<u32>,
    /// seq -> fingerprint of the row each measurement implies, and whether it was
    /// checked against the plan yet (not when the plan came after it).
    measurements: HashMap<u32, (u64, bool)>,
    last_measurement: Option<u32>,
    measurements_unordered: Option<u32>,
    count: usize,
}

impl Check {
    /// Reading stops at the first problem: it is the one to tell.
    fn item(&mut self, item: Item) -> Result<(), String> {
        match item {
            Item::Head(_) => Ok(()),
            Item::Plan(p) => self.plan_row(&p),
            Item::Measurement(m) => self.measurement(&m),
        }
    }

    fn plan_row(&mut self, p: &PlannedMeasurement) -> Result<(), String> {
        self.plan_seen = true;
        if self.plan.insert(p.seq, fingerprint(p)).is_some() {
            return Err(format!("the plan lists seq {} twice", p.seq));
        }
        if self.last_plan.is_some_and(|l| p.seq < l) {
            self.plan_unordered.get_or_insert(p.seq);
        }
        self.last_plan = Some(p.seq);
        Ok(())
    }

    fn measurement(&mut self, m: &MeasurementRecord) -> Result<(), String> {
        let i = self.count;
        self.count += 1;
        // `null` is how the export writes an undefined figure, so NaN passes here.
        check_record(m, Nan::Undefined)
            .map_err(|e| format!("measurements[{i}] (seq {}), {e}", m.seq))?;
        if self.last_measurement.is_some_and(|l| m.seq < l) {
            self.measurements_unordered.get_or_insert(m.seq);
        }
        self.last_measurement = Some(m.seq);
        let implied = fingerprint(&planned(m));
        let checked = self.plan_seen;
        match self.measurements.entry(m.seq) {
            Entry::Occupied(_) => return Err(format!("measurement {} appears twice", m.seq)),
            Entry::Vacant(v) => v.insert((implied, checked)),
        };
        if checked {
            Self::matches(&self.plan, m.seq, implied)?;
        }
        Ok(())
    }

    fn matches(plan: &HashMap<u32, u64>, seq: u32, implied: u64) -> Result<(), String> {
        match plan.get(&seq) {
            None => Err(format!("measurement {seq} is not in the plan")),
            Some(row) if *row != implied => {
                Err(format!("measurement {seq} does not match its plan row"))
            }
            Some(_) => Ok(()),
        }
    }

    /// What is left to check once the whole document is read, `has_plan` when it has a
    /// plan (without one, the plan is what it recorded).
    fn finish(self, has_plan: bool) -> Result<(), String> {
        if has_plan {
            let mut late: Vec<(u32, u64)> = self
                .measurements
                .iter()
                .filter(|(_, (_, checked))| !checked)
                .map(|(seq, (implied, _))| (*seq, *implied))
                .collect();
            late.sort_unstable();
            for (seq, implied) in late {
                Self::matches(&self.plan, seq, implied)?;
            }
        }
        // The plan is written into the store as it is read, which needs it in order;
        // perflab writes it so, and a run's execution order is its seqs' order.
        let unordered = if has_plan {
            self.plan_unordered
        } else {
            self.measurements_unordered
        };
        if let Some(seq) = unordered {
            return Err(format!(
                "seq {seq} comes after a larger one in the plan; perflab lists a run's plan \
                 in execution order (seq by seq)"
            ));
        }
        Ok(())
    }
}

/// Slice-fed [`Check`], for the tests below.
#[cfg(test)]
fn check(plan: &[PlannedMeasurement], ms: &[MeasurementRecord]) -> Result<(), String> {
    let mut c = Check::default();
    for p in plan {
        c.item(Item::Plan(p.clone()))?;
    }
    for m in ms {
        c.item(Item::Measurement(m.clone()))?;
    }
    c.finish(true)
}

/// The document as a file that can be read more than once: the one given, or standard
/// input copied into a file of its own, removed when the import is done.
struct Spool {
    path: PathBuf,
    temporary: bool,
}

impl Spool {
    fn of(given: &Path) -> anyhow::Result<Spool> {
        if given.as_os_str() != "-" {
            return Ok(Spool {
                path: given.to_path_buf(),
                temporary: false,
            });
        }
        let path = std::env::temp_dir().join(format!("perflab-import-{}.json", std::process::id()));
        let spool = Spool {
            path,
            temporary: true,
        };
        let copied = std::fs::File::create(&spool.path)
            .and_then(|mut f| std::io::copy(&mut std::io::stdin().lock(), &mut f));
        copied.map_err(|e| input(format!("-: cannot read: {e}")))?;
        Ok(spool)
    }

    fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Spool {
    fn drop(&mut self) {
        if self.temporary {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use perflab_store::MeasurementStatus;

    fn rec(seq: u32, variant: &str) -> MeasurementRecord {
        MeasurementRecord {
            seq,
            point: 0,
            params: Default::default(),
            variant: variant.into(),
            rep: seq,
            status: MeasurementStatus::Ok,
            started_at: 1.0,
            elapsed_s: 1.0,
            output: Default::default(),
            telemetry: Vec::new(),
            role: Default::default(),
            monitors: Vec::new(),
        }
    }

    #[test]
    fn a_document_must_hold_one_consistent_run() {
        let ms = vec![rec(0, "a"), rec(1, "a")];
        let plan: Vec<_> = ms.iter().map(planned).collect();
        assert!(check(&plan, &ms).is_ok());
        assert!(check(&plan[..1], &ms)
            .unwrap_err()
            .contains("not in the plan"));
        let twice = vec![rec(0, "a"), rec(0, "a")];
        assert!(check(&plan, &twice).unwrap_err().contains("twice"));
        let other = vec![rec(0, "b")];
        assert!(check(&plan, &other).unwrap_err().contains("does not match"));
        let mut negative = vec![rec(0, "a")];
        negative[0].elapsed_s = -1e308;
        assert_eq!(
            check(&plan, &negative).unwrap_err(),
            "measurements[0] (seq 0), field elapsed_s: -1e308 is negative, and a duration \
             cannot be"
        );
        let dup_plan = vec![plan[0].clone(), plan[0].clone()];
        assert!(check(&dup_plan, &[]).unwrap_err().contains("seq 0 twice"));
    }
}
