//! `--format` for the commands that print data and have no format of their own beyond
//! text and JSON (`ls`, `list`, `show`, `doctor`, `fleet ls`, `fleet doctor`).

use clap::{Args, ValueEnum};

#[derive(ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DataFormat {
    /// For a person at a terminal
    #[default]
    Text,
    /// One JSON document on standard output (docs/json.md has its schema)
    Json,
}

#[derive(Args, Debug, Clone, Default)]
pub struct FormatArgs {
    /// What standard output carries
    #[arg(long, value_enum, default_value = "text")]
    pub format: DataFormat,
    /// The same as --format json: hidden, kept so that scripts written before --format
    /// still work
    #[arg(long, hide = true, conflicts_with = "format")]
    pub json: bool,
}

impl FormatArgs {
    pub fn is_json(&self) -> bool {
        self.json || self.format == DataFormat::Json
    }
}
