//! A JSON Schema validator for the subset docs/schema/perflab.json uses: `type` (a name or
//! a list of names), `required`, `properties`, `items`, `enum`, `const`, `allOf` and `$ref`
//! to `#/$defs/NAME` in the same document. No JSON Schema crate is at hand here, and this
//! subset is small enough to check by hand; anything else in a schema is an error, so the
//! documented schema cannot say more than the test checks.

use serde_json::{Map, Value};

const KEYWORDS: &[&str] = &[
    "type",
    "required",
    "properties",
    "items",
    "enum",
    "const",
    "allOf",
    "$ref",
    // Words for the reader, not constraints.
    "description",
    "title",
    "$schema",
    "$id",
    "$defs",
];

/// Every place `doc` breaks `schema` (empty when it conforms), each as `PATH: what`;
/// `root` is the document `$ref`s point into.
pub fn validate(root: &Value, schema: &Value, doc: &Value) -> Vec<String> {
    let mut errors = Vec::new();
    check(root, schema, doc, "$", &mut errors);
    errors
}

fn check(root: &Value, schema: &Value, doc: &Value, path: &str, errors: &mut Vec<String>) {
    let Some(s) = schema.as_object() else {
        errors.push(format!("{path}: the schema is not an object: {schema}"));
        return;
    };
    for k in s.keys().filter(|k| !KEYWORDS.contains(&k.as_str())) {
        errors.push(format!("{path}: schema keyword {k:?} is not supported"));
    }
    if let Some(r) = s.get("$ref") {
        match resolve(root, r) {
            Some(target) => check(root, target, doc, path, errors),
            None => errors.push(format!("{path}: cannot resolve $ref {r}")),
        }
    }
    for sub in s
        .get("allOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        check(root, sub, doc, path, errors);
    }
    if let Some(t) = s.get("type") {
        let names: Vec<&str> = match t {
            Value::String(n) => vec![n.as_str()],
            Value::Array(ns) => ns.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        if !names.iter().any(|n| is_type(doc, n)) {
            errors.push(format!(
                "{path}: expected {}, got {}",
                names.join(" or "),
                short(doc)
            ));
            return;
        }
    }
    if let Some(c) = s.get("const") {
        if c != doc {
            errors.push(format!("{path}: expected {c}, got {}", short(doc)));
        }
    }
    if let Some(e) = s.get("enum").and_then(Value::as_array) {
        if !e.contains(doc) {
            errors.push(format!(
                "{path}: {} is not one of {}",
                short(doc),
                Value::from(e.clone())
            ));
        }
    }
    if let Value::Object(obj) = doc {
        object(root, s, obj, path, errors);
    }
    if let (Value::Array(items), Some(item)) = (doc, s.get("items")) {
        for (i, v) in items.iter().enumerate() {
            check(root, item, v, &format!("{path}[{i}]"), errors);
        }
    }
}

/// `required` and `properties`, which apply to objects only (as in JSON Schema).
fn object(
    root: &Value,
    s: &Map<String, Value>,
    obj: &Map<String, Value>,
    path: &str,
    errors: &mut Vec<String>,
) {
    for r in s
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let r = r.as_str().unwrap_or_default();
        if !obj.contains_key(r) {
            errors.push(format!("{path}: missing {r:?}"));
        }
    }
    if let Some(props) = s.get("properties").and_then(Value::as_object) {
        for (k, sub) in props {
            if let Some(v) = obj.get(k) {
                check(root, sub, v, &format!("{path}.{k}"), errors);
            }
        }
    }
}

fn resolve<'a>(root: &'a Value, r: &Value) -> Option<&'a Value> {
    let name = r.as_str()?.strip_prefix("#/$defs/")?;
    root.get("$defs")?.get(name)
}

fn is_type(v: &Value, name: &str) -> bool {
    match name {
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "boolean" => v.is_boolean(),
        "null" => v.is_null(),
        "number" => v.is_number(),
        "integer" => v.is_i64() || v.is_u64(),
        _ => false,
    }
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    match s.char_indices().nth(60) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn errors(schema: Value, doc: Value) -> Vec<String> {
        validate(&schema, &schema, &doc)
    }

    #[test]
    fn types_required_and_properties() {
        let s = json!({
            "type": "object",
            "required": ["a"],
            "properties": { "a": { "type": "integer" }, "b": { "type": ["string", "null"] } }
        });
        assert!(errors(s.clone(), json!({ "a": 1, "b": null })).is_empty());
        assert_eq!(errors(s.clone(), json!({ "b": "x" })), ["$: missing \"a\""]);
        assert_eq!(
            errors(s.clone(), json!({ "a": 1.5, "b": 2 })),
            [
                "$.a: expected integer, got 1.5",
                "$.b: expected string or null, got 2"
            ]
        );
        assert_eq!(errors(s, json!([1])), ["$: expected object, got [1]"]);
    }

    #[test]
    fn items_enum_const() {
        let s = json!({ "type": "array", "items": { "enum": ["x", "y"] } });
        assert!(errors(s.clone(), json!(["x", "y"])).is_empty());
        assert_eq!(
            errors(s, json!(["x", "z"])),
            ["$[1]: \"z\" is not one of [\"x\",\"y\"]"]
        );
        let c = json!({ "const": 1 });
        assert!(errors(c.clone(), json!(1)).is_empty());
        assert_eq!(errors(c, json!(2)), ["$: expected 1, got 2"]);
    }

    #[test]
    fn refs_and_all_of() {
        let s = json!({
            "$defs": {
                "env": { "type": "object", "required": ["v"] },
                "doc": { "allOf": [{ "$ref": "#/$defs/env" }], "required": ["d"] }
            }
        });
        let doc = json!({ "$ref": "#/$defs/doc" });
        assert!(validate(&s, &doc, &json!({ "v": 1, "d": 2 })).is_empty());
        assert_eq!(validate(&s, &doc, &json!({ "d": 2 })), ["$: missing \"v\""]);
        assert_eq!(
            validate(&s, &json!({ "$ref": "#/$defs/nope" }), &json!(1)),
            ["$: cannot resolve $ref \"#/$defs/nope\""]
        );
    }

    #[test]
    fn unsupported_keywords_are_errors_not_ignored() {
        let s = json!({ "type": "string", "pattern": "^a" });
        assert_eq!(
            errors(s, json!("b")),
            ["$: schema keyword \"pattern\" is not supported"]
        );
    }
}
