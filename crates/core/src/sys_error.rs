use std::path::PathBuf;

/// Errors from kernel interfaces. Each names the path, so the user knows what to look at.
#[derive(Debug, thiserror::Error)]
pub enum SysError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}:{line}: {reason}")]
    Parse {
        path: PathBuf,
        line: usize,
        reason: String,
    },
}

impl SysError {
    pub fn io(path: PathBuf, source: std::io::Error) -> Self {
        SysError::Io { path, source }
    }

    /// True when the file or directory does not exist (the machine lacks the feature).
    pub fn is_not_found(&self) -> bool {
        matches!(self, SysError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound)
    }
}

/// A parse failure inside a reader, before the caller attaches the path.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {reason}")]
pub struct ParseError {
    pub line: usize,
    pub reason: String,
}

impl ParseError {
    pub fn new(line: usize, reason: impl Into<String>) -> Self {
        Self {
            line,
            reason: reason.into(),
        }
    }

    pub fn at(self, path: PathBuf) -> SysError {
        SysError::Parse {
            path,
            line: self.line,
            reason: self.reason,
        }
    }
}
