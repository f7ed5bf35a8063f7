//! The envelope of every JSON document perflab prints: `format`, `format_version` and
//! `command` first, then the command's own fields (docs/json.md, docs/schema/). One
//! version for all commands, so a script checks one number whatever it reads; `format`
//! names the document's shape (its definition in the schema), `command` what was typed.

use std::sync::OnceLock;

use serde::Serialize;

/// Raised when a field of any command's JSON changes meaning or goes away; new fields
/// alone keep it (docs/json.md). The export's `format_version` is this one.
pub const FORMAT_VERSION: u32 = 2;

/// The command being run, as typed (`show`, `fleet report`): set once by `dispatch`, so
/// that a view shared by two commands (`report` and `fleet report`) names the right one.
static COMMAND: OnceLock<&'static str> = OnceLock::new();

pub fn set_command(name: &'static str) {
    let _ = COMMAND.set(name);
}

pub fn command() -> &'static str {
    COMMAND.get().copied().unwrap_or("perflab")
}

/// The `format` of the document `command` prints: `perflab-` and its definition in
/// docs/schema/perflab.json. Two commands that print the same document share one
/// (`fleet resume` prints `fleet run`'s, `fleet report` `report`'s).
pub fn format_of(command: &str) -> &'static str {
    match command {
        "run" => "perflab-run",
        "show" => "perflab-show",
        "ls" => "perflab-ls",
        "history" => "perflab-history",
        "list" => "perflab-list",
        "compare" => "perflab-compare",
        "report" | "fleet report" => "perflab-report",
        "export" => "perflab-export",
        "doctor" => "perflab-doctor",
        "crosscheck" => "perflab-crosscheck",
        "import" => "perflab-import",
        "fleet run" | "fleet resume" => "perflab-fleet-run",
        "fleet ls" => "perflab-fleet-ls",
        "fleet doctor" => "perflab-fleet-doctor",
        _ => "perflab",
    }
}

/// `body`'s fields after the envelope's; `body` must serialize as a JSON object (a
/// struct or a map), which keeps its fields in their order.
#[derive(Serialize)]
pub struct Envelope<'a, T: Serialize + ?Sized> {
    pub format: &'static str,
    pub format_version: u32,
    pub command: &'static str,
    #[serde(flatten)]
    pub body: &'a T,
}

pub fn wrap<T: Serialize + ?Sized>(body: &T) -> Envelope<'_, T> {
    wrap_as(format_of(command()), body)
}

/// `body` as a document of `format`, for a command that prints more than one kind
/// (`run --dry-run`).
pub fn wrap_as<'a, T: Serialize + ?Sized>(format: &'static str, body: &'a T) -> Envelope<'a, T> {
    Envelope {
        format,
        format_version: FORMAT_VERSION,
        command: command(),
        body,
    }
}

/// The enveloped document, pretty-printed, on standard output.
pub fn print<T: Serialize + ?Sized>(body: &T) -> anyhow::Result<()> {
    print_doc(&wrap(body))
}

/// A document of `format` ([`wrap_as`]) written to `out` as it is serialized, never held
/// whole as text: for a document of millions of entries (`run --dry-run`'s plan).
pub fn write_as<T: Serialize + ?Sized>(
    out: &mut impl std::io::Write,
    format: &'static str,
    body: &T,
) -> anyhow::Result<()> {
    serde_json::to_writer_pretty(&mut *out, &wrap_as(format, body))?;
    writeln!(out)?;
    Ok(())
}

fn print_doc<T: Serialize + ?Sized>(doc: &Envelope<'_, T>) -> anyhow::Result<()> {
    crate::stdout_guard::line(serde_json::to_string_pretty(doc)?)?;
    Ok(())
}

/// The field `key` of an enveloped document, or the whole document when it has no
/// envelope: what an older perflab printed (a remote host's `doctor --json`).
pub fn unwrap_field(doc: &str, key: &str) -> String {
    match serde_json::from_str::<serde_json::Value>(doc) {
        Ok(serde_json::Value::Object(mut m)) if m.contains_key("format_version") => m
            .remove(key)
            .map_or_else(|| doc.to_string(), |v| v.to_string()),
        _ => doc.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Body {
        runs: Vec<u32>,
    }

    #[test]
    fn the_envelope_comes_first_and_unwraps() {
        let text = serde_json::to_string(&wrap(&Body { runs: vec![1] })).unwrap();
        assert_eq!(
            text,
            r#"{"format":"perflab","format_version":2,"command":"perflab","runs":[1]}"#
        );
        assert_eq!(unwrap_field(&text, "runs"), "[1]");
        assert_eq!(unwrap_field("[1]", "runs"), "[1]");
    }
}
