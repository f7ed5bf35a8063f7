//! The export read line by line, as `export` lays it out (docs/export.md): the head
//! (`format` … `telemetry_columns`) pretty-printed, then `  "plan": [` and
//! `  "measurements": [`, each record compact on a line of its own, then `}`. Each line
//! is parsed from a slice, and a list not wanted is skipped without parsing it. Anything
//! else stops the read with [`Stop::NotLines`], for [`super::import_stream`]'s reader of
//! any JSON to read instead. What was handed on before that is not taken back, so a
//! reader that writes reads this way only a document a whole read found laid out so.

use std::io::{BufRead, BufReader, Read};

use serde::Deserialize;

use super::import_items::{Head, Item, Lists, Stop};

/// The head's fields; `run` is required.
#[derive(Deserialize)]
struct HeadFields {
    #[serde(default)]
    format: Option<String>,
    #[serde(default)]
    format_version: Option<u32>,
    run: perflab_store::RunInfo,
    #[serde(default)]
    telemetry_columns: Option<Vec<String>>,
}

#[derive(Clone, Copy, PartialEq)]
enum List {
    Plan,
    Measurements,
}

/// What the next line may be.
enum State {
    /// Lines of the head, up to the first list.
    Head,
    /// Inside a list: whether it has had an item, and whether the last ended with a
    /// comma (another must follow).
    In {
        list: List,
        items: bool,
        comma: bool,
    },
    /// A list closed with `],`: the other must open next.
    Between,
    /// The lists are done: `}` ends the document.
    Closing,
    Done,
}

pub fn read<E>(
    reader: impl Read,
    lists: Lists,
    each: &mut dyn FnMut(Item) -> Result<(), E>,
) -> Result<Head, Stop<E>> {
    let mut reader = BufReader::with_capacity(1 << 16, reader);
    let mut line = Vec::new();
    let mut head_text = Vec::new();
    let mut head: Option<Head> = None;
    let mut seen: Vec<List> = Vec::new();
    let mut state = State::Head;
    loop {
        line.clear();
        if reader
            .read_until(b'\n', &mut line)
            .map_err(|e| Stop::Parse(serde_json::Error::io(e)))?
            == 0
        {
            break;
        }
        let text = line.strip_suffix(b"\n").unwrap_or(&line);
        state = match state {
            State::Head => match opening(text) {
                // A list's key in the head (`"plan": null`) is not what `export` writes.
                None if text.starts_with(b"  \"plan\":")
                    || text.starts_with(b"  \"measurements\":") =>
                {
                    return Err(Stop::NotLines)
                }
                None => {
                    head_text.extend_from_slice(&line);
                    State::Head
                }
                Some((list, empty, comma)) => {
                    let h = parse_head(&mut head_text)?;
                    each(Item::Head(Box::new(h.clone_fields()))).map_err(Stop::Each)?;
                    head = Some(h);
                    open(&mut seen, list, empty, comma)?
                }
            },
            State::Between => match opening(text) {
                Some((list, empty, comma)) => open(&mut seen, list, empty, comma)?,
                None => return Err(Stop::NotLines),
            },
            State::In { list, items, comma } => in_list((list, items, comma), text, lists, each)?,
            State::Closing => match text {
                b"}" => State::Done,
                _ => return Err(Stop::NotLines),
            },
            State::Done if text.iter().all(u8::is_ascii_whitespace) => State::Done,
            State::Done => return Err(Stop::NotLines),
        };
    }
    match (state, head) {
        (State::Done, Some(mut head)) if seen.contains(&List::Measurements) => {
            head.has_plan = seen.contains(&List::Plan);
            head.plan_first = seen.first() == Some(&List::Plan);
            Ok(head)
        }
        _ => Err(Stop::NotLines),
    }
}

/// The next state after line `text` inside `list` (whose entries so far are `items`, the
/// last with a `comma` or not): its end, or one more entry, handed to `each` when `lists`
/// wants that list.
fn in_list<E>(
    (list, items, comma): (List, bool, bool),
    text: &[u8],
    lists: Lists,
    each: &mut dyn FnMut(Item) -> Result<(), E>,
) -> Result<State, Stop<E>> {
    Ok(match text {
        b"  ]," if !comma => State::Between,
        b"  ]" if !comma => State::Closing,
        _ if text.starts_with(b"    {") && (comma || !items) => {
            let (record, comma) = match text.strip_suffix(b",") {
                Some(r) => (r, true),
                None => (text, false),
            };
            let wanted = match list {
                List::Plan => lists.plan,
                List::Measurements => lists.measurements,
            };
            if wanted {
                let item = parse_item(list, record)?;
                each(item).map_err(Stop::Each)?;
            }
            State::In {
                list,
                items: true,
                comma,
            }
        }
        _ => return Err(Stop::NotLines),
    })
}

impl Head {
    fn clone_fields(&self) -> Head {
        Head {
            format: self.format.clone(),
            format_version: self.format_version,
            telemetry_columns: self.telemetry_columns.clone(),
            ..Head::default()
        }
    }
}

/// `  "plan": [` (or `  "plan": []`, `  "plan": [],` when empty): the list it opens,
/// whether it is empty, and whether a comma follows it.
fn opening(text: &[u8]) -> Option<(List, bool, bool)> {
    let (list, rest) = if let Some(r) = text.strip_prefix(b"  \"plan\": [") {
        (List::Plan, r)
    } else if let Some(r) = text.strip_prefix(b"  \"measurements\": [") {
        (List::Measurements, r)
    } else {
        return None;
    };
    match rest {
        b"" => Some((list, false, false)),
        b"]" => Some((list, true, false)),
        b"]," => Some((list, true, true)),
        _ => None,
    }
}

/// The state after a list opens; each list opens once.
fn open<E>(seen: &mut Vec<List>, list: List, empty: bool, comma: bool) -> Result<State, Stop<E>> {
    if seen.contains(&list) {
        return Err(Stop::NotLines);
    }
    seen.push(list);
    Ok(match (empty, comma) {
        (false, _) => State::In {
            list,
            items: false,
            comma: false,
        },
        (true, true) => State::Between,
        (true, false) => State::Closing,
    })
}

/// The head's lines with the object closed where the lists would start.
fn parse_head<E>(text: &mut Vec<u8>) -> Result<Head, Stop<E>> {
    while text.last().is_some_and(u8::is_ascii_whitespace) {
        text.pop();
    }
    if text.pop() != Some(b',') {
        return Err(Stop::NotLines);
    }
    text.extend_from_slice(b"\n}");
    let h: HeadFields = serde_json::from_slice(text).map_err(|_| Stop::NotLines)?;
    Ok(Head {
        format: h.format,
        format_version: h.format_version,
        run: Some(h.run),
        telemetry_columns: h.telemetry_columns,
        has_plan: false,
        plan_first: false,
    })
}

/// A line that does not parse is left to the reader of any JSON, whose message names
/// the line and column in the document.
fn parse_item<E>(list: List, record: &[u8]) -> Result<Item, Stop<E>> {
    let record = record.trim_ascii_start();
    Ok(match list {
        List::Plan => Item::Plan(serde_json::from_slice(record).map_err(|_| Stop::NotLines)?),
        List::Measurements => {
            Item::Measurement(serde_json::from_slice(record).map_err(|_| Stop::NotLines)?)
        }
    })
}

#[cfg(test)]
mod tests {
    use perflab_store::{MeasurementRecord, MeasurementStatus, PlannedMeasurement, RunInfo};

    use super::*;
    use crate::cmd::export_stream::{self, JsonStream};
    use crate::cmd::import_items::Layout;

    fn run() -> RunInfo {
        RunInfo {
            id: 1,
            uid: "u".into(),
            created_at: 1.0,
            study: "s".into(),
            workload: "null".into(),
            label: None,
            status: perflab_store::RunStatus::Complete,
            spec: Default::default(),
            fingerprint: Default::default(),
            unavailable: Vec::new(),
            planned: 3,
            done: 3,
            failed: 0,
            ineffective: 0,
        }
    }

    fn row(seq: u32) -> PlannedMeasurement {
        PlannedMeasurement {
            seq,
            point: 0,
            params: Default::default(),
            variant: "a".into(),
            rep: seq,
            role: Default::default(),
        }
    }

    fn rec(seq: u32) -> MeasurementRecord {
        MeasurementRecord {
            seq,
            point: 0,
            params: Default::default(),
            variant: "a".into(),
            rep: seq,
            status: MeasurementStatus::Ok,
            started_at: 1.0,
            elapsed_s: 1.0,
            output: Default::default(),
            telemetry: Vec::new(),
            role: Default::default(),
            monitors: Vec::new(),
        }
    }

    /// The export of a run of `n` measurements, as `export` writes it.
    fn export(n: u32) -> Vec<u8> {
        let run = run();
        let head = export_stream::Head {
            format: "perflab-export",
            format_version: 2,
            command: "export",
            run: &run,
        };
        let plan: Vec<_> = (0..n).map(row).collect();
        let mut json = JsonStream::start(Vec::new(), &head, &plan).unwrap();
        for seq in 0..n {
            json.push(&rec(seq)).unwrap();
        }
        json.finish().unwrap()
    }

    /// What each reader hands over: the entries' seqs, or why it stopped.
    fn items(doc: &[u8], layout: Layout, lists: Lists) -> Result<(Head, Vec<String>), String> {
        let mut got = Vec::new();
        let head = super::super::import_stream::read::<()>(doc, layout, lists, &mut |item| {
            got.push(match item {
                Item::Head(h) => format!("h{}", h.format_version.unwrap_or(0)),
                Item::Plan(p) => format!("p{}", p.seq),
                Item::Measurement(m) => format!("m{}", m.seq),
            });
            Ok(())
        });
        match head {
            Ok(head) => Ok((head, got)),
            Err(Stop::NotLines) => Err("not lines".into()),
            Err(Stop::Parse(e)) => Err(e.to_string()),
            Err(Stop::Each(())) => Err("each".into()),
        }
    }

    #[test]
    fn what_export_writes_is_read_line_by_line_as_any_reader_reads_it() {
        for n in [0, 1, 3] {
            let doc = export(n);
            let (head, lines) = items(&doc, Layout::Lines, Lists::BOTH).unwrap();
            let (_, any) = items(&doc, Layout::Any, Lists::BOTH).unwrap();
            assert_eq!(lines, any, "{}", String::from_utf8_lossy(&doc));
            assert_eq!(lines.len(), 1 + 2 * n as usize);
            assert_eq!(head.run, Some(run()));
            assert!(head.has_plan && head.plan_first);
            assert_eq!(head.format_version, Some(2));
        }
        let doc = export(3);
        let (_, plan) = items(&doc, Layout::Lines, Lists::PLAN).unwrap();
        assert_eq!(plan, ["h2", "p0", "p1", "p2"]);
        let (_, ms) = items(&doc, Layout::Lines, Lists::MEASUREMENTS).unwrap();
        assert_eq!(ms, ["h2", "m0", "m1", "m2"]);
    }

    #[test]
    fn any_other_layout_is_left_to_the_reader_of_any_json() {
        let doc = String::from_utf8(export(3)).unwrap();
        let value: serde_json::Value = serde_json::from_str(&doc).unwrap();
        let other = [
            serde_json::to_string_pretty(&value).unwrap(),
            serde_json::to_string(&value).unwrap(),
            doc.replace("},\n    {\"seq\":1", "}\n    {\"seq\":1"),
            doc.replace("\"seq\":2", "\"seq\":\"two\""),
            doc.replace("  ]\n}", "  ]\n}\n{}"),
            doc.replace("  ]\n}", "  ]"),
            doc.replace("\"run\": {", "\"plan\": null,\n  \"run\": {"),
        ];
        for o in &other {
            let e = items(o.as_bytes(), Layout::Lines, Lists::BOTH).unwrap_err();
            assert_eq!(e, "not lines", "{o}");
        }
        // The reader of any JSON reads the first two as the export they are.
        for o in &other[..2] {
            let (_, any) = items(o.as_bytes(), Layout::Any, Lists::BOTH).unwrap();
            assert_eq!(any.len(), 7, "{o}");
        }
    }
}
