//! The flags of `perflab history`.

use clap::{Args, ValueEnum};

#[derive(ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HistoryFormat {
    /// Aligned tables for the terminal
    #[default]
    Text,
    /// GitHub-flavoured Markdown
    Markdown,
    /// Plain text no wider than 72 columns, for a mailing-list reply
    Mail,
    /// A self-contained HTML page, each series plotted with its change points marked
    Html,
    /// One JSON document (docs/json.md)
    Json,
}

#[derive(Args, Debug)]
pub struct HistoryArgs {
    /// The series to print, by the name `perflab history` lists
    /// (host/study/variant/metric/point); without it and without filters, the list
    pub series: Option<String>,
    /// Only series of this study
    #[arg(long)]
    pub study: Option<String>,
    /// Only series of this parameter point (`name=value`, or the whole point as listed)
    #[arg(long)]
    pub point: Option<String>,
    /// Only series of this variant
    #[arg(long)]
    pub variant: Option<String>,
    /// Only series of this metric
    #[arg(long)]
    pub metric: Option<String>,
    /// Only series measured on this host (its fingerprint's host name)
    #[arg(long)]
    pub host: Option<String>,
    /// Level of the change-point test: a series that never moved shows a change point with
    /// about this probability
    #[arg(long, default_value_t = 0.01, value_parser = alpha)]
    pub alpha: f64,
    #[arg(long, value_enum, default_value = "text")]
    pub format: HistoryFormat,
}

fn alpha(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(a) if a > 0.0 && a < 0.5 => Ok(a),
        _ => Err(format!("{s:?}: a level between 0 and 0.5, e.g. 0.01")),
    }
}
