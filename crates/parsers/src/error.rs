//! Why a tool's output could not be read.

/// Why output could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// The text is not this tool's output (e.g. fio's JSON given to the iperf3 parser).
    #[error("this is not {tool} output: {why}")]
    NotThisTool { tool: &'static str, why: String },
    #[error("{tool} output, line {line}: {why}")]
    Bad {
        tool: &'static str,
        line: usize,
        why: String,
    },
    /// The output reads, but holds a figure that cannot be (a negative rate, a `nan`).
    #[error("{place}, {why}")]
    Impossible {
        tool: &'static str,
        place: String,
        why: String,
    },
}
