//! The report flags that `compare`, `report` and `fleet report` share.

use clap::{Args, ValueEnum};

/// How `compare` and `report` decide that a difference is real.
#[derive(Args, Debug, Clone)]
pub struct VerdictArgs {
    /// Regression bucket edges in percent (CPU-pair studies; increasing, each above 0 and at
    /// most 10000)
    #[arg(long, value_name = "LIST", default_value = "1,2,3,5,10,20,50,100")]
    pub buckets: String,
    /// Significance level of the Mann-Whitney test (above 0, below 1)
    #[arg(long, default_value_t = 0.05)]
    pub alpha: f64,
    /// Changes smaller than this many percent are within noise (`~`; 0 to 100)
    #[arg(long, default_value_t = 1.0)]
    pub noise: f64,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReportFormat {
    /// Aligned tables for the terminal
    Text,
    /// GitHub-flavoured Markdown, for a pull request or a wiki
    Markdown,
    /// Plain text no wider than 72 columns, for a mailing-list reply
    Mail,
    /// Everything in the report, for scripts
    Json,
}
