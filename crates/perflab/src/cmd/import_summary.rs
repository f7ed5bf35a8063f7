//! What `perflab import` says when it has stored a run: a line on standard error for a
//! person, or with `--format json` one document on standard output for a script (the run
//! it made, so the script can `show`, `compare` or `export` it without parsing a line).

use serde::Serialize;

use crate::cli::ImportArgs;
use crate::cli_format::DataFormat;
use crate::cmd::envelope;

/// One import's outcome (`$defs/import` in docs/schema/perflab.json).
#[derive(Serialize, Debug)]
pub struct ImportSummary {
    /// The run the measurements are stored as.
    pub run: i64,
    /// False when the file was imported before: a `perflab-json` document whose run
    /// (known by its uid) the database already holds.
    pub created: bool,
    pub study: String,
    pub parser: String,
    /// The file as given (`-`: standard input).
    pub file: String,
    /// Measurements stored now.
    pub measurements: u64,
    /// Measurements the database held already (a `perflab-json` document imported again).
    pub there_already: u64,
    /// What the parser noticed and could not store (a tool's warning, a column left out).
    pub notes: Vec<String>,
    /// Where the run is: the database file, absolute, or the server's location.
    pub database: String,
    /// A `perflab-json` document: the run came back whole, and may have been there.
    #[serde(skip)]
    pub whole: bool,
}

impl ImportSummary {
    /// The summary of `a`'s import into run `run` of `store`, with the parser's name.
    pub fn new(a: &ImportArgs, store: &perflab_store::Store, run: i64, parser: &str) -> Self {
        Self {
            run,
            created: true,
            study: String::new(),
            parser: parser.to_string(),
            file: a.file.display().to_string(),
            measurements: 0,
            there_already: 0,
            notes: Vec::new(),
            database: crate::cmd::run_view::database_location(store),
            whole: false,
        }
    }

    /// Says it: the text's lines on standard error, as before `--format` existed, or the
    /// document on standard output.
    pub fn say(&self, format: DataFormat) -> anyhow::Result<()> {
        if format == DataFormat::Json {
            return envelope::print(self);
        }
        if self.whole {
            eprintln!(
                "run {}: {} from {}: {} new measurement(s), {} there already",
                self.run,
                if self.created {
                    "imported"
                } else {
                    "imported before"
                },
                self.file,
                self.measurements,
                self.there_already
            );
        } else {
            eprintln!(
                "run {}: imported {} measurement(s) from {}",
                self.run, self.measurements, self.file
            );
        }
        for n in &self.notes {
            eprintln!("note: {n}");
        }
        Ok(())
    }
}
