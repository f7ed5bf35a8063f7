//! Bounded capture of a child's output stream.
//!
//! The pipe is always read to its end, so a chatty command never blocks on a full pipe,
//! but only the first `limit` bytes are kept (for extraction) plus the last [`TAIL`]
//! bytes (for error messages: why a command failed is usually at the end).

use std::io::{ErrorKind, Read};

/// How much of a stream's end is kept for error messages.
pub(super) const TAIL: usize = 2048;

/// What was read from one stream.
#[derive(Debug, Default)]
pub(super) struct Captured {
    /// The first `limit` bytes.
    pub head: Vec<u8>,
    /// The last [`TAIL`] bytes of the whole stream (may overlap `head`).
    pub tail: Vec<u8>,
    /// Bytes the stream carried in all.
    pub total: u64,
    /// A read error that ended the capture early.
    pub error: Option<String>,
}

impl Captured {
    pub fn truncated(&self) -> bool {
        self.total > self.head.len() as u64
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.head).into_owned()
    }

    /// The last `max` bytes, as text.
    pub fn tail_text(&self, max: usize) -> String {
        let t = &self.tail[self.tail.len().saturating_sub(max)..];
        String::from_utf8_lossy(t).into_owned()
    }
}

/// Reads `r` to its end, keeping at most `limit` bytes of its start.
pub(super) fn capture(mut r: impl Read, limit: usize) -> Captured {
    let mut c = Captured {
        head: Vec::with_capacity(limit.min(64 << 10)),
        ..Default::default()
    };
    let mut buf = vec![0u8; 64 << 10];
    loop {
        let n = match r.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => {
                c.error = Some(e.to_string());
                break;
            }
        };
        let chunk = &buf[..n];
        c.total += n as u64;
        let room = limit.saturating_sub(c.head.len());
        c.head.extend_from_slice(&chunk[..room.min(n)]);
        push_tail(&mut c.tail, chunk);
    }
    c
}

fn push_tail(tail: &mut Vec<u8>, chunk: &[u8]) {
    if chunk.len() >= TAIL {
        tail.clear();
        tail.extend_from_slice(&chunk[chunk.len() - TAIL..]);
        return;
    }
    let keep = TAIL - chunk.len();
    if tail.len() > keep {
        tail.drain(..tail.len() - keep);
    }
    tail.extend_from_slice(chunk);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hands out its data a few bytes at a time, as a pipe does.
    struct Dribble<'a>(&'a [u8], usize);

    impl Read for Dribble<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.1.min(buf.len()).min(self.0.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn keeps_head_and_tail_of_a_long_stream() {
        let data: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
        for step in [1, 7, 3000, 100_000] {
            let c = capture(Dribble(&data, step), 100);
            assert_eq!(c.total, 10_000);
            assert_eq!(c.head, data[..100]);
            assert_eq!(c.tail, data[10_000 - TAIL..], "step {step}");
            assert!(c.truncated());
        }
    }

    #[test]
    fn short_stream_is_kept_whole() {
        let c = capture(&b"hello\n"[..], 1 << 20);
        assert_eq!(c.text(), "hello\n");
        assert_eq!(c.tail_text(3), "lo\n");
        assert!(!c.truncated());
        let c = capture(&b"abc"[..], 0);
        assert!(c.head.is_empty() && c.truncated() && c.tail == b"abc");
    }
}
