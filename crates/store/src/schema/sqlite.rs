//! The SQLite text of each schema step, exactly as it has built the databases in the
//! field (never edited: a database's `sqlite_schema` keeps the text that made it).

/// Created before any migration; its rows say whose database this is and which version.
pub(super) const META: &str =
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;";

/// `measurements.disturbed`: why other work disturbed the measurement (it took more than
/// its share of the measurement's CPUs; status stays `ok`: it ran, but is not its variant's
/// number); NULL when nothing disturbed it, or a knob did not hold (`ineffective` says so),
/// and for every measurement recorded before version 7.
pub(super) const V7: &str = "ALTER TABLE measurements ADD COLUMN disturbed TEXT;";

/// `histograms.above`, `histograms.above_count`: samples past the range of a tool's fixed
/// buckets (cyclictest's overflows), each at least `above`; NULL where the histogram has no
/// such range (every one recorded before version 6).
pub(super) const V6: &str = "ALTER TABLE histograms ADD COLUMN above REAL;
ALTER TABLE histograms ADD COLUMN above_count INTEGER;";

/// `runs.uid`: the run's identity across databases (32 hex digits of random bits), kept
/// when a run is pushed or imported elsewhere. Runs made before version 5 get one here.
pub(super) const V5: &str = "ALTER TABLE runs ADD COLUMN uid TEXT;
UPDATE runs SET uid = lower(hex(randomblob(16))) WHERE uid IS NULL;
CREATE UNIQUE INDEX runs_uid ON runs (uid);";

/// - `plan.role`: `headline` (a result) or `telemetry` (a repetition that carries the
///   monitors that would disturb a result, never used as one); every measurement planned
///   before version 4 was a headline one.
/// - `measurements.ineffective`: why a knob of the variant did not hold during the
///   measurement (status stays `ok`: it ran, but is not that variant's number); NULL when
///   every knob held or nothing could tell.
/// - `measurements.monitors`: JSON array of the monitors that ran around it; NULL before
///   version 4 (not recorded).
pub(super) const V4: &str = "ALTER TABLE plan ADD COLUMN role TEXT NOT NULL DEFAULT 'headline';
ALTER TABLE measurements ADD COLUMN ineffective TEXT;
ALTER TABLE measurements ADD COLUMN monitors TEXT;";

/// Where each thread ran over time (JSON `{"changes": [[ns, cpu], ...], "unknown_after"}`;
/// NULL when nothing sampled it over time, as every thread recorded before version 3).
pub(super) const V3: &str = "ALTER TABLE threads ADD COLUMN cpu_path TEXT;";

/// Per-thread perf counts (JSON `[{"event", "value", "running_pct"}, ...]`; NULL when the
/// thread counted nothing, as every thread recorded before version 2).
pub(super) const V2: &str = "ALTER TABLE threads ADD COLUMN counters TEXT;";

pub(super) const V1: &str = r#"
CREATE TABLE runs (
    -- AUTOINCREMENT so that the number of a deleted run is never given to a new one:
    -- users keep run numbers in notes and mails.
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    created_at  REAL,
    study       TEXT NOT NULL,
    workload    TEXT NOT NULL,
    label       TEXT,
    status      TEXT NOT NULL,
    spec        TEXT NOT NULL,   -- JSON
    fingerprint TEXT NOT NULL    -- JSON
);

CREATE TABLE unavailable (
    run_id  INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    idx     INTEGER NOT NULL,
    variant TEXT NOT NULL,
    reason  TEXT NOT NULL,
    PRIMARY KEY (run_id, idx)
) WITHOUT ROWID;

CREATE TABLE plan (
    run_id  INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    seq     INTEGER NOT NULL,
    point   INTEGER NOT NULL,
    params  TEXT NOT NULL,   -- JSON of Params
    variant TEXT NOT NULL,
    rep     INTEGER NOT NULL,
    PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;

-- A measurement's point, params, variant and rep are those of its plan row (checked when
-- recorded), so they are kept once, in `plan`.
CREATE TABLE measurements (
    run_id     INTEGER NOT NULL,
    seq        INTEGER NOT NULL,
    status     TEXT NOT NULL CHECK (status IN ('ok', 'failed')),
    error      TEXT,
    started_at REAL,
    elapsed_s  REAL,
    notes      TEXT NOT NULL,  -- JSON array of strings
    PRIMARY KEY (run_id, seq),
    FOREIGN KEY (run_id, seq) REFERENCES plan(run_id, seq) ON DELETE CASCADE
) WITHOUT ROWID;

CREATE TABLE metrics (
    run_id INTEGER NOT NULL,
    seq    INTEGER NOT NULL,
    idx    INTEGER NOT NULL,
    name   TEXT NOT NULL,
    value  REAL,
    unit   TEXT NOT NULL,
    better TEXT NOT NULL,
    PRIMARY KEY (run_id, seq, idx),
    FOREIGN KEY (run_id, seq) REFERENCES measurements(run_id, seq) ON DELETE CASCADE
) WITHOUT ROWID;

-- A rowid table, not WITHOUT ROWID: the encoded HDR histogram makes rows large.
CREATE TABLE histograms (
    run_id  INTEGER NOT NULL,
    seq     INTEGER NOT NULL,
    idx     INTEGER NOT NULL,
    name    TEXT NOT NULL,
    unit    TEXT NOT NULL,
    count   INTEGER NOT NULL,
    min     REAL,
    mean    REAL,
    max     REAL,
    stddev  REAL,
    p50     REAL,
    p90     REAL,
    p99     REAL,
    p999    REAL,
    p9999   REAL,
    encoded BLOB NOT NULL,    -- HDR V2 serialization, may be empty
    UNIQUE (run_id, seq, idx),
    FOREIGN KEY (run_id, seq) REFERENCES measurements(run_id, seq) ON DELETE CASCADE
);

CREATE TABLE threads (
    run_id               INTEGER NOT NULL,
    seq                  INTEGER NOT NULL,
    idx                  INTEGER NOT NULL,
    role                 TEXT NOT NULL,
    tid                  INTEGER NOT NULL,
    pinned_cpu           INTEGER,
    cpu_samples          TEXT NOT NULL,  -- JSON [[cpu, samples], ...]
    migrations           INTEGER,
    voluntary_switches   INTEGER,
    involuntary_switches INTEGER,
    start_ns             INTEGER NOT NULL,
    end_ns               INTEGER NOT NULL,
    bytes                INTEGER,
    PRIMARY KEY (run_id, seq, idx),
    FOREIGN KEY (run_id, seq) REFERENCES measurements(run_id, seq) ON DELETE CASCADE
) WITHOUT ROWID;

CREATE TABLE telemetry (
    run_id INTEGER NOT NULL,
    seq    INTEGER NOT NULL,
    idx    INTEGER NOT NULL,
    source TEXT NOT NULL,
    key    TEXT NOT NULL,
    label  TEXT NOT NULL,
    cpu    INTEGER,           -- NULL: the total over all CPUs
    value  REAL,
    unit   TEXT NOT NULL,
    PRIMARY KEY (run_id, seq, idx),
    FOREIGN KEY (run_id, seq) REFERENCES measurements(run_id, seq) ON DELETE CASCADE
) WITHOUT ROWID;
"#;
