//! Byte strings in JSON. A histogram's HDR encoding is bytes, and JSON has no bytes:
//! serde writes a `Vec<u8>` as an array of numbers, three to five characters a byte (ten
//! more a byte pretty-printed, which made a 50,000 measurement export 2.5 GB). The export
//! writes them as base64 (format_version 2, docs/export.md); records are read from either
//! form, so exports of version 1 and fleet streams (which keep the array) still read.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde::de::{Error, SeqAccess, Visitor};
use serde::{Deserializer, Serializer};

/// `#[serde(serialize_with = "…::base64")]`: the bytes as one base64 string (RFC 4648's
/// standard alphabet, padded).
pub fn base64<S: Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&STANDARD.encode(bytes))
}

/// `#[serde(deserialize_with = "…::bytes_or_base64")]`: a base64 string, or an array of
/// byte values.
pub fn bytes_or_base64<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
    d.deserialize_any(Bytes)
}

struct Bytes;

impl<'de> Visitor<'de> for Bytes {
    type Value = Vec<u8>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a base64 string or an array of byte values")
    }

    fn visit_str<E: Error>(self, text: &str) -> Result<Vec<u8>, E> {
        STANDARD
            .decode(text)
            .map_err(|e| E::custom(format!("not base64: {e}")))
    }

    fn visit_bytes<E: Error>(self, bytes: &[u8]) -> Result<Vec<u8>, E> {
        Ok(bytes.to_vec())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<u8>, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(b) = seq.next_element::<u8>()? {
            out.push(b);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use serde::{Deserialize, Serialize};

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Written {
        #[serde(serialize_with = "super::base64")]
        b: Vec<u8>,
    }

    #[derive(Debug, PartialEq, Deserialize)]
    struct Read {
        #[serde(deserialize_with = "super::bytes_or_base64")]
        b: Vec<u8>,
    }

    #[test]
    fn bytes_read_back_from_base64_and_from_an_array() {
        let bytes: Vec<u8> = (0..=255).chain([0, 0, 255]).collect();
        let text = serde_json::to_string(&Written { b: bytes.clone() }).unwrap();
        assert!(text.starts_with(r#"{"b":"AAECAwQF"#), "{text}");
        let back: Read = serde_json::from_str(&text).unwrap();
        assert_eq!(back.b, bytes);
        let array = format!("{{\"b\":{}}}", serde_json::to_string(&bytes).unwrap());
        let back: Read = serde_json::from_str(&array).unwrap();
        assert_eq!(back.b, bytes);
        let empty: Read = serde_json::from_str(r#"{"b":""}"#).unwrap();
        assert!(empty.b.is_empty());
    }

    #[test]
    fn what_is_neither_is_refused_by_name() {
        for bad in [r#"{"b":"not base64!"}"#, r#"{"b":[1,256]}"#, r#"{"b":7}"#] {
            let e = serde_json::from_str::<Read>(bad).unwrap_err().to_string();
            assert!(
                e.contains("base64") || e.contains("u8") || e.contains("256"),
                "{bad}: {e}"
            );
        }
    }
}
