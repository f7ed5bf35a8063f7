//! Finding and reading the JSON document in a tool's output. Tools print warnings before
//! their JSON (fio: "note: both iodepth >= 1 and synchronous I/O engine ...") and a
//! wrapper may append text after it, so the document is the first value that starts at
//! the beginning of a line.

use serde_json::Value;

use crate::error::ParseError;
use crate::text::{bad, not_this};

/// The first JSON object in `text`, and the 1-based line it starts on. `marker` is a string
/// only this tool's JSON holds: broken JSON that holds it is this tool's, and Bad; broken
/// JSON without it is someone else's.
pub(crate) fn document(
    text: &str,
    tool: &'static str,
    marker: &str,
) -> Result<(Value, usize), ParseError> {
    let mut offset = 0;
    let mut start = None;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        if line.trim_start().starts_with('{') {
            start = Some((offset + (line.len() - line.trim_start().len()), i + 1));
            break;
        }
        offset += line.len();
    }
    let Some((at, first_line)) = start else {
        return Err(not_this(tool, "no JSON object in the text"));
    };
    let mut stream = serde_json::Deserializer::from_str(&text[at..]).into_iter::<Value>();
    match stream.next() {
        Some(Ok(v)) => Ok((v, first_line)),
        Some(Err(e)) if text.contains(marker) => Err(bad(
            tool,
            first_line + e.line().saturating_sub(1),
            format!("broken JSON: {e}"),
        )),
        Some(Err(e)) => Err(not_this(tool, format!("not JSON ({e})"))),
        None => Err(not_this(tool, "no JSON object in the text")),
    }
}

/// A number at `path` (object keys), if there is one and it is finite.
pub(crate) fn f64_at(v: &Value, path: &[&str]) -> Option<f64> {
    let mut cur = v;
    for key in path {
        cur = cur.get(key)?;
    }
    cur.as_f64().filter(|x| x.is_finite())
}

/// The 1-based line of the first occurrence of `needle` at or after line `from`, for
/// pointing at a value inside a document serde has already accepted.
pub(crate) fn line_of(text: &str, needle: &str, from: usize) -> usize {
    text.lines()
        .enumerate()
        .skip(from.saturating_sub(1))
        .find(|(_, l)| l.contains(needle))
        .map_or(from, |(i, _)| i + 1)
}
