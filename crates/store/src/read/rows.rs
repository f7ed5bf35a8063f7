//! The measurements of a range of seqs, whole: each table read with one query, its rows
//! fetched into the raw structs `crate::assemble` decodes and puts in place.

use crate::assemble::{
    Assembler, RawHistogram, RawMeasurement, RawTelemetry, RawThread, TelemetryFilter,
};
use crate::decoded::Decoded;
use crate::sql::{Cells, Query, Value};
use crate::{MeasurementRecord, RunId, StoreError};

/// A run's measurement rows with their plan columns, seq in a range, in the order
/// [`RawMeasurement`] takes its columns.
const MEASUREMENTS: &str = "SELECT m.seq, p.point, p.params, p.variant, p.rep, m.status, \
     m.error, m.started_at, m.elapsed_s, m.notes, m.ineffective, p.role, m.monitors, m.disturbed \
     FROM measurements m JOIN plan p ON p.run_id = m.run_id AND p.seq = m.seq \
     WHERE m.run_id = $1 AND m.seq BETWEEN $2 AND $3 ORDER BY m.seq";

const METRICS: &str = "SELECT seq, name, value, unit, better FROM metrics \
     WHERE run_id = $1 AND seq BETWEEN $2 AND $3 ORDER BY seq, idx";

const HISTOGRAMS: &str = "SELECT seq, name, unit, count, min, mean, max, stddev, p50, p90, \
     p99, p999, p9999, encoded, above, above_count FROM histograms WHERE run_id = $1 \
     AND seq BETWEEN $2 AND $3 ORDER BY seq, idx";

const THREADS: &str = "SELECT seq, role, tid, pinned_cpu, cpu_samples, migrations, \
     voluntary_switches, involuntary_switches, start_ns, end_ns, bytes, counters, cpu_path \
     FROM threads WHERE run_id = $1 AND seq BETWEEN $2 AND $3 ORDER BY seq, idx";

const TELEMETRY: &str = "SELECT seq, source, key, label, cpu, value, unit FROM telemetry \
     WHERE run_id = $1 AND seq BETWEEN $2 AND $3 ORDER BY seq, idx";

/// The measurements of `id` whose seq lies in `lo..=hi`, whole; telemetry rows only for
/// those `telemetry` wants. `seen` keeps what earlier ranges of the same read decoded.
pub(super) fn seq_range(
    q: &mut dyn Query,
    id: RunId,
    (lo, hi): (u32, u32),
    telemetry: TelemetryFilter,
    seen: &mut Decoded,
) -> Result<Vec<MeasurementRecord>, StoreError> {
    let range = [id.into(), lo.into(), hi.into()];
    let db = q.db().clone();
    let mut recs = Vec::new();
    q.query(MEASUREMENTS, &range, &mut |r| {
        recs.push(measurement(r)?.decode(&db, id, seen)?);
        Ok(())
    })?;
    let mut a = Assembler::new(&db, id, recs, seen);
    let telemetry = a.filter_telemetry(telemetry);
    read(q, METRICS, &range, &mut a, |a, r| {
        a.metric(
            r.u32(0, "a seq")?,
            r.text(1)?,
            r.real(2)?,
            r.str(3)?,
            r.str(4)?,
        )
    })?;
    read(q, HISTOGRAMS, &range, &mut a, |a, r| {
        a.histogram(histogram(r)?)
    })?;
    read(q, THREADS, &range, &mut a, |a, r| a.thread(thread(r)?))?;
    // Only the stretches of seqs whose telemetry is wanted: the rows between are not read.
    for (lo, hi) in telemetry {
        let wanted = [id.into(), lo.into(), hi.into()];
        // The row's place in its measurement's rows, for the names it shares with the
        // row in that place of the measurement before.
        let (mut last, mut k) = (None, 0);
        read(q, TELEMETRY, &wanted, &mut a, |a, r| {
            // Checked before the row is decoded: most telemetry rows are not wanted.
            let seq = r.u32(0, "a seq")?;
            k = if last == Some(seq) { k + 1 } else { 0 };
            last = Some(seq);
            if !a.wants_telemetry(seq) {
                return Ok(());
            }
            let row = telemetry_row((&db, seq, k), a.seen(), r)?;
            a.telemetry(row)
        })?;
    }
    Ok(a.finish())
}

/// Every row of one child table's query, into the assembler.
fn read(
    q: &mut dyn Query,
    sql: &str,
    range: &[Value<'_>],
    a: &mut Assembler,
    mut put: impl FnMut(&mut Assembler, &dyn Cells) -> Result<(), StoreError>,
) -> Result<(), StoreError> {
    q.query(sql, range, &mut |r| put(a, r))
}

fn measurement(r: &dyn Cells) -> Result<RawMeasurement, StoreError> {
    Ok(RawMeasurement {
        seq: r.u32(0, "a seq")?,
        point: r.u32(1, "a point")?,
        params: r.text(2)?,
        variant: r.text(3)?,
        rep: r.u32(4, "a rep")?,
        status: r.text(5)?,
        error: r.opt_text(6)?,
        started_at: r.real(7)?,
        elapsed_s: r.real(8)?,
        notes: r.text(9)?,
        ineffective: r.opt_text(10)?,
        role: r.text(11)?,
        monitors: r.opt_text(12)?,
        disturbed: r.opt_text(13)?,
    })
}

fn histogram(r: &dyn Cells) -> Result<RawHistogram, StoreError> {
    let mut stats = [None; 9];
    for (i, s) in stats.iter_mut().enumerate() {
        *s = r.real(4 + i)?;
    }
    Ok(RawHistogram {
        seq: r.u32(0, "a seq")?,
        name: r.text(1)?,
        unit: r.text(2)?,
        count: r.int(3)?,
        stats,
        encoded: r.blob(13)?,
        above: (r.real(14)?, r.opt_int(15)?),
    })
}

fn thread(r: &dyn Cells) -> Result<RawThread, StoreError> {
    Ok(RawThread {
        seq: r.u32(0, "a seq")?,
        role: r.text(1)?,
        tid: r.i32(2, "a thread id")?,
        pinned_cpu: r.opt_u32(3, "a pinned CPU")?,
        cpu_samples: r.text(4)?,
        migrations: r.opt_int(5)?,
        voluntary_switches: r.opt_int(6)?,
        involuntary_switches: r.opt_int(7)?,
        start_ns: r.int(8)?,
        end_ns: r.int(9)?,
        bytes: r.opt_int(10)?,
        counters: r.opt_text(11)?,
        cpu_path: r.opt_text(12)?,
    })
}

/// A telemetry row, the `k`-th of measurement `seq`: its names shared with the row in that
/// place of the measurement before where they are the same (see [`Decoded`]).
fn telemetry_row<'r>(
    (db, seq, k): (&crate::Location, u32, usize),
    seen: &mut Decoded,
    r: &'r dyn Cells,
) -> Result<RawTelemetry<'r>, StoreError> {
    let columns = [r.str(1)?, r.str(2)?, r.str(3)?].map(str::as_bytes);
    let [source, key, label] = seen
        .telemetry_names(k, columns)
        .map_err(|e| crate::error::corrupt(db.clone(), format!("telemetry name: {e}")))?;
    Ok(RawTelemetry {
        seq,
        source,
        key,
        label,
        cpu: r.opt_u32(4, "a CPU")?,
        value: r.real(5)?,
        unit: r.str(6)?,
    })
}
