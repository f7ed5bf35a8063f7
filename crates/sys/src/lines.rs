//! Line-by-line reading for the parsers: kernel files and tool output are text, but a
//! stray non-UTF-8 byte (a process or device name) must not stop a parse, so lines are
//! decoded lossily, and each comes with its 1-based number for error messages.

use std::borrow::Cow;
use std::io::BufRead;

/// Reading failed before line `line` could be read whole.
#[derive(Debug, thiserror::Error)]
#[error("line {line}: {source}")]
pub struct LineReadError {
    pub line: usize,
    #[source]
    pub source: std::io::Error,
}

/// The lines of a reader, one buffer reused for all of them.
pub struct LossyLines<R> {
    reader: R,
    buf: Vec<u8>,
    lineno: usize,
}

impl<R: BufRead> LossyLines<R> {
    pub fn new(reader: R) -> Self {
        Self {
            reader,
            buf: Vec::new(),
            lineno: 0,
        }
    }

    /// The next line's number and text, line ending included; `None` at the end.
    pub fn next_line(&mut self) -> Result<Option<(usize, Cow<'_, str>)>, LineReadError> {
        self.buf.clear();
        let n = self
            .reader
            .read_until(b'\n', &mut self.buf)
            .map_err(|source| LineReadError {
                line: self.lineno + 1,
                source,
            })?;
        if n == 0 {
            return Ok(None);
        }
        self.lineno += 1;
        Ok(Some((self.lineno, String::from_utf8_lossy(&self.buf))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_lines_and_replaces_bad_bytes() {
        let mut lines = LossyLines::new(&b"a\n\xffb\r\nlast"[..]);
        let mut seen = Vec::new();
        while let Some((n, text)) = lines.next_line().expect("in-memory read") {
            seen.push((n, text.into_owned()));
        }
        assert_eq!(
            seen,
            vec![
                (1, "a\n".to_string()),
                (2, "\u{fffd}b\r\n".to_string()),
                (3, "last".to_string())
            ]
        );
    }

    #[test]
    fn a_read_error_names_the_line_it_stopped_at() {
        struct FailsAfterOne(bool);
        impl std::io::Read for FailsAfterOne {
            fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
                if std::mem::replace(&mut self.0, true) {
                    Err(std::io::Error::other("device gone"))
                } else {
                    out[..2].copy_from_slice(b"x\n");
                    Ok(2)
                }
            }
        }
        let mut lines = LossyLines::new(std::io::BufReader::new(FailsAfterOne(false)));
        assert_eq!(lines.next_line().ok().flatten().map(|(n, _)| n), Some(1));
        let e = lines.next_line().err().map(|e| e.to_string());
        assert_eq!(e.as_deref(), Some("line 2: device gone"));
    }
}
