//! A JSON export read as a stream: the document's small fields are kept, and each plan
//! row and measurement is handed over as it is parsed, never the lists whole. An export
//! of 500,000 measurements (569 MB) took 2.9 GB to import when it was read as a string
//! and then as one value; read this way, what a reader holds is its own.
//!
//! The lists may come in any order in the document (a document rewritten by a tool
//! sorts its keys), so a reader that needs the plan before the measurements reads the
//! file once per list ([`Lists`]).
//!
//! Two readers: [`Layout::Lines`] reads the layout `export` writes (format_version 2: the
//! head, then one record per line), parsing each line from a slice and skipping the
//! lines of a list not wanted unparsed, several times faster than serde's reader of a
//! stream; [`Layout::Any`] reads any JSON. A document not laid out as `export` writes
//! it stops the first with [`Stop::NotLines`], and is read with the second.

use std::fmt;
use std::io::Read;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserializer;

pub use crate::cmd::import_items::{Head, Item, Layout, Lists, Stop};

/// Reads the export in `reader` as `layout` says, handing each entry of the lists
/// `lists` names to `each` in document order; returns the rest of the document.
pub fn read<E>(
    reader: impl Read,
    layout: Layout,
    lists: Lists,
    each: &mut dyn FnMut(Item) -> Result<(), E>,
) -> Result<Head, Stop<E>> {
    match layout {
        Layout::Lines => crate::cmd::import_lines::read(reader, lists, each),
        Layout::Any => read_any(reader, lists, each),
    }
}

fn read_any<E>(
    reader: impl Read,
    lists: Lists,
    each: &mut dyn FnMut(Item) -> Result<(), E>,
) -> Result<Head, Stop<E>> {
    let mut failed = None;
    let mut de =
        serde_json::Deserializer::from_reader(std::io::BufReader::with_capacity(1 << 16, reader));
    let doc = Doc {
        lists,
        each,
        failed: &mut failed,
    };
    let head = de
        .deserialize_map(doc)
        .and_then(|head| de.end().map(|()| head));
    match (head, failed) {
        (_, Some(e)) => Err(Stop::Each(e)),
        (Ok(head), None) => Ok(head),
        (Err(e), None) => Err(Stop::Parse(e)),
    }
}

/// The document, an object; `each`'s error is kept in `failed` (a serde error would
/// carry a position that is not the document's fault).
struct Doc<'a, E> {
    lists: Lists,
    each: &'a mut dyn FnMut(Item) -> Result<(), E>,
    failed: &'a mut Option<E>,
}

impl<'de, E> Visitor<'de> for Doc<'_, E> {
    type Value = Head;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a perflab export (an object with `run` and `measurements`)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Head, A::Error> {
        let mut head = Head::default();
        let mut measurements = false;
        let mut told = false;
        while let Some(key) = map.next_key::<String>()? {
            if !told && matches!(key.as_str(), "plan" | "measurements") {
                told = true;
                let so_far = Head {
                    format: head.format.clone(),
                    format_version: head.format_version,
                    telemetry_columns: head.telemetry_columns.clone(),
                    ..Head::default()
                };
                if let Err(e) = (self.each)(Item::Head(Box::new(so_far))) {
                    *self.failed = Some(e);
                    return Err(de::Error::custom("stopped"));
                }
            }
            match key.as_str() {
                "format" => head.format = map.next_value()?,
                "format_version" => head.format_version = map.next_value()?,
                "run" => head.run = Some(map.next_value()?),
                "telemetry_columns" => head.telemetry_columns = map.next_value()?,
                "plan" => {
                    head.plan_first = !measurements;
                    head.has_plan = map.next_value_seed(List {
                        plan: true,
                        wanted: self.lists.plan,
                        optional: true,
                        each: &mut *self.each,
                        failed: &mut *self.failed,
                    })?;
                }
                "measurements" => {
                    measurements = map.next_value_seed(List {
                        plan: false,
                        wanted: self.lists.measurements,
                        optional: false,
                        each: &mut *self.each,
                        failed: &mut *self.failed,
                    })?;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        if head.run.is_none() {
            return Err(de::Error::missing_field("run"));
        }
        if !measurements {
            return Err(de::Error::missing_field("measurements"));
        }
        Ok(head)
    }
}

/// One of the lists: its entries handed to `each` when `wanted`, skipped otherwise.
/// Its value is whether the list is there (`plan` may be `null`).
struct List<'a, E> {
    plan: bool,
    wanted: bool,
    optional: bool,
    each: &'a mut dyn FnMut(Item) -> Result<(), E>,
    failed: &'a mut Option<E>,
}

impl<'de, E> DeserializeSeed<'de> for List<'_, E> {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        if self.optional {
            d.deserialize_option(self)
        } else {
            d.deserialize_seq(self)
        }
    }
}

impl<'de, E> Visitor<'de> for List<'_, E> {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(if self.plan {
            "a list of planned measurements"
        } else {
            "a list of measurements"
        })
    }

    fn visit_none<Er: de::Error>(self) -> Result<bool, Er> {
        Ok(false)
    }

    fn visit_unit<Er: de::Error>(self) -> Result<bool, Er> {
        Ok(false)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_seq(List {
            optional: false,
            ..self
        })
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<bool, A::Error> {
        loop {
            let item = match (self.wanted, self.plan) {
                (false, _) => seq.next_element::<IgnoredAny>()?.map(|_| None),
                (true, true) => seq.next_element()?.map(|p| Some(Item::Plan(p))),
                (true, false) => seq.next_element()?.map(|m| Some(Item::Measurement(m))),
            };
            match item {
                None => return Ok(true),
                Some(None) => {}
                Some(Some(item)) => {
                    if let Err(e) = (self.each)(item) {
                        *self.failed = Some(e);
                        return Err(de::Error::custom("stopped"));
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use perflab_store::{MeasurementRecord, RunInfo};

    fn seqs(doc: &str, lists: Lists) -> Result<(Head, Vec<String>), String> {
        let mut got = Vec::new();
        let head = read::<String>(doc.as_bytes(), Layout::Any, lists, &mut |item| {
            got.push(match item {
                Item::Head(h) => format!("h{}", h.format.unwrap_or_default()),
                Item::Plan(p) => format!("p{}", p.seq),
                Item::Measurement(m) => format!("m{}", m.seq),
            });
            if got.len() > 4 {
                return Err("enough".into());
            }
            Ok(())
        })
        .map_err(|e| match e {
            Stop::Parse(e) => e.to_string(),
            Stop::Each(e) => format!("each: {e}"),
            Stop::NotLines => "not lines".into(),
        })?;
        Ok((head, got))
    }

    fn run_json() -> String {
        serde_json::to_string(&RunInfo {
            id: 1,
            uid: String::new(),
            created_at: 1.0,
            study: "s".into(),
            workload: "null".into(),
            label: None,
            status: perflab_store::RunStatus::Complete,
            spec: Default::default(),
            fingerprint: Default::default(),
            unavailable: Vec::new(),
            planned: 2,
            done: 1,
            failed: 0,
            ineffective: 0,
        })
        .unwrap()
    }

    const PLAN: &str = r#"[{"seq":0,"point":0,"params":{},"variant":"a","rep":0},
        {"seq":1,"point":0,"params":{},"variant":"a","rep":1}]"#;
    fn ms() -> String {
        serde_json::to_string(&[MeasurementRecord {
            seq: 0,
            point: 0,
            params: Default::default(),
            variant: "a".into(),
            rep: 0,
            status: perflab_store::MeasurementStatus::Ok,
            started_at: 1.0,
            elapsed_s: 1.0,
            output: Default::default(),
            telemetry: Vec::new(),
            role: Default::default(),
            monitors: Vec::new(),
        }])
        .unwrap()
    }
    const BOTH: Lists = Lists::BOTH;

    #[test]
    fn the_lists_are_handed_over_in_document_order_in_either_order() {
        let ms = ms();
        let run = format!(r#""run":{}"#, run_json());
        let doc =
            format!(r#"{{"format":"x","z":[1,{{}}],{run},"plan":{PLAN},"measurements":{ms}}}"#);
        let (head, got) = seqs(&doc, BOTH).unwrap();
        assert_eq!(got, ["hx", "p0", "p1", "m0"]);
        assert!(head.has_plan && head.plan_first);
        assert_eq!(head.format.as_deref(), Some("x"));
        let doc = format!(r#"{{"measurements":{ms},"plan":{PLAN},{run}}}"#);
        let (head, got) = seqs(&doc, BOTH).unwrap();
        assert_eq!(got, ["h", "m0", "p0", "p1"]);
        assert!(head.has_plan && !head.plan_first);
        assert_eq!(seqs(&doc, Lists::PLAN).unwrap().1, ["h", "p0", "p1"]);
        let doc = format!(r#"{{{run},"plan":null,"measurements":{ms}}}"#);
        let (head, got) = seqs(&doc, BOTH).unwrap();
        assert_eq!(got, ["h", "m0"]);
        assert!(!head.has_plan);
    }

    #[test]
    fn a_document_that_is_not_an_export_says_why() {
        let e = seqs(r#"{"plan":[]}"#, BOTH).unwrap_err();
        assert!(e.starts_with("missing field `run`"), "{e}");
        let run = run_json();
        let e = seqs(&format!(r#"{{"run":{run}}}"#), BOTH).unwrap_err();
        assert!(e.starts_with("missing field `measurements`"), "{e}");
        let doc = format!(r#"{{"run":{run},"measurements":[{{"seq":"x"}}]}}"#);
        let e = seqs(&doc, BOTH).unwrap_err();
        assert!(e.contains("line 1"), "{e}");
        let e = seqs(&format!(r#"{{"run":{run},"measurements":[]}} x"#), BOTH).unwrap_err();
        assert!(e.contains("trailing characters"), "{e}");
        assert!(seqs("[1]", BOTH).is_err());
        assert!(seqs(r#"{"run":{"id":1},"measurements":[]}"#, BOTH).is_err());
    }

    #[test]
    fn an_error_of_the_reader_stops_the_read_and_is_its_own() {
        let ms = ms();
        let many = format!(
            r#"{{"run":{},"plan":{PLAN},"measurements":{ms},"x":{PLAN}}}"#,
            run_json()
        );
        let doubled = many.replace("\"rep\":1}]", "\"rep\":1},{\"seq\":2,\"point\":0,\"params\":{},\"variant\":\"a\",\"rep\":2},{\"seq\":3,\"point\":0,\"params\":{},\"variant\":\"a\",\"rep\":3}]");
        assert_eq!(seqs(&doubled, BOTH).unwrap_err(), "each: enough");
    }
}
