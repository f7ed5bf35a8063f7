//! Parameters of workloads: declared as data (`ParamSpec`), resolved from user text or
//! TOML values into typed `Params`, with unknown names and out-of-range values rejected.

pub mod role;

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::error::ParamError;
pub use crate::quantity_text::{
    format_bytes, format_duration, format_size, parse_duration, parse_size,
};

/// The type and limits of a parameter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ParamKind {
    Int {
        min: i64,
        max: i64,
    },
    Float {
        min: f64,
        max: f64,
    },
    /// Seconds, written with a unit from `ns`, `us`, `ms`, `s`, `m`, `h` to `d` (`10s`,
    /// `500ms`, `1d`) or as a bare number of seconds.
    Duration {
        min_s: f64,
        max_s: f64,
    },
    /// A CPU number; checked against the online CPUs by the runner.
    Cpu,
    /// A size in bytes, written `32K`, `64KiB`, `2M`, `1G` or a bare number of bytes
    /// (binary multiples: K = 1024).
    Size {
        min: u64,
        max: u64,
    },
    /// One of a fixed set of words.
    Choice(&'static [&'static str]),
    Bool,
    /// Free text of at most `max_len` bytes without NUL (a command line, a regex). Kept
    /// exactly as given, spaces included: in a regex or a command they matter.
    Text {
        max_len: usize,
    },
    /// Free text that is a secret (a peer's token): checked as `Text`, and sealed by the
    /// lab before a spec is expanded, so runs store and print only its fingerprint
    /// ([`crate::secret`]). A workload reads it with [`Params::secret`].
    Secret {
        max_len: usize,
    },
    /// Environment variables, `K=V;K=V`: checked as `Text`; the lab seals each value
    /// named like a secret (`API_TOKEN`, `PGPASSWORD`) or holding a URL with a password,
    /// as it does a `Secret` ([`crate::secret::seal_env`]).
    Env {
        max_len: usize,
    },
}

/// A parameter declared by a workload.
#[derive(Clone, Copy, Debug)]
pub struct ParamSpec {
    pub name: &'static str,
    /// What the parameter is to the report (a CPU of a pair, a scan's size axis): views
    /// find parameters by role, never by name ([`crate::param_role`]).
    pub role: role::ParamRole,
    pub help: &'static str,
    pub kind: ParamKind,
    /// Default as the user would write it; `None` makes the parameter required.
    pub default: Option<&'static str>,
}

/// A resolved parameter value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ParamValue {
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
}

impl fmt::Display for ParamValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamValue::Bool(b) => write!(f, "{b}"),
            ParamValue::Int(i) => write!(f, "{i}"),
            ParamValue::Float(x) => write!(f, "{x}"),
            ParamValue::Str(s) => write!(f, "{s}"),
        }
    }
}

impl ParamValue {
    /// What the value is, for an error that must not quote it (text may be a secret).
    fn type_text(&self) -> String {
        match self {
            ParamValue::Bool(_) => "true or false".into(),
            ParamValue::Int(i) => format!("the integer {i}"),
            ParamValue::Float(x) => format!("the number {x}"),
            ParamValue::Str(_) => "text".into(),
        }
    }

    /// The text, when the value is text (for genuinely optional lookups with [`Params::get`]).
    pub fn as_str(&self) -> Option<&str> {
        match self {
            ParamValue::Str(s) => Some(s),
            _ => None,
        }
    }
}

/// A secret parameter as this process knows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SecretValue {
    /// The secret itself: this process sealed it, or it was given directly (empty when
    /// none was given).
    Known(String),
    /// Only the fingerprint is known here (a run resumed by another process), so the
    /// workload must get the secret by another way.
    FingerprintOnly(String),
}

/// Resolved parameters of one measurement point, ordered by name.
///
/// A workload reads its parameters with the typed accessors (`int`, `cpu`, `float`,
/// `seconds`, `str`, `bool`, `secret`), which fail with a [`ParamError`] naming the
/// parameter when it is not there or holds another type: resolved parameters hold every
/// declared one, so either is a mistake in the workload's code, and the measurement must
/// fail with it rather than measure with a made-up 0. [`Params::get`] is for lookups
/// where absence is expected (records of older runs read by reports).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Params(pub BTreeMap<String, ParamValue>);

const AS_INT: &str = "an integer";
const AS_CPU: &str = "a CPU number";
const AS_FLOAT: &str = "a number";
const AS_SECONDS: &str = "a duration";
const AS_TEXT: &str = "text";
const AS_BOOL: &str = "true or false";
const AS_SECRET: &str = "a secret";

impl Params {
    /// The value of `name`, or `None` where absence is expected; a workload reading its
    /// own parameters uses the typed accessors instead.
    pub fn get(&self, name: &str) -> Option<&ParamValue> {
        self.0.get(name)
    }

    /// The value of `name`, or the error naming it and the parameters there are.
    fn value(&self, name: &str, asked: &'static str) -> Result<&ParamValue, ParamError> {
        self.0.get(name).ok_or_else(|| ParamError::NotDeclared {
            name: name.to_string(),
            asked,
            present: if self.0.is_empty() {
                "none".to_string()
            } else {
                self.0
                    .keys()
                    .map(String::as_str)
                    .collect::<Vec<_>>()
                    .join(", ")
            },
        })
    }

    fn wrong_type(name: &str, asked: &'static str, found: &ParamValue) -> ParamError {
        ParamError::WrongType {
            name: name.to_string(),
            asked,
            found: found.type_text(),
        }
    }

    /// An `Int`, `Size` or `Cpu` parameter.
    pub fn int(&self, name: &str) -> Result<i64, ParamError> {
        match self.value(name, AS_INT)? {
            ParamValue::Int(i) => Ok(*i),
            v => Err(Self::wrong_type(name, AS_INT, v)),
        }
    }

    /// A `Cpu` parameter (or an `Int` one holding a CPU number: a negative one is an error).
    pub fn cpu(&self, name: &str) -> Result<u32, ParamError> {
        match self.value(name, AS_CPU)? {
            ParamValue::Int(i) => u32::try_from(*i).map_err(|_| ParamError::WrongType {
                name: name.to_string(),
                asked: AS_CPU,
                found: format!("the integer {i}"),
            }),
            v => Err(Self::wrong_type(name, AS_CPU, v)),
        }
    }

    /// A `Float` parameter; an integer one reads as its exact value.
    pub fn float(&self, name: &str) -> Result<f64, ParamError> {
        match self.value(name, AS_FLOAT)? {
            ParamValue::Float(x) => Ok(*x),
            ParamValue::Int(i) => Ok(*i as f64),
            v => Err(Self::wrong_type(name, AS_FLOAT, v)),
        }
    }

    /// A `Duration` parameter in seconds.
    pub fn seconds(&self, name: &str) -> Result<f64, ParamError> {
        match self.value(name, AS_SECONDS)? {
            ParamValue::Float(x) => Ok(*x),
            ParamValue::Int(i) => Ok(*i as f64),
            v => Err(Self::wrong_type(name, AS_SECONDS, v)),
        }
    }

    /// A `Choice` or `Text` parameter.
    pub fn str(&self, name: &str) -> Result<&str, ParamError> {
        match self.value(name, AS_TEXT)? {
            ParamValue::Str(s) => Ok(s),
            v => Err(Self::wrong_type(name, AS_TEXT, v)),
        }
    }

    /// A `Bool` parameter.
    pub fn bool(&self, name: &str) -> Result<bool, ParamError> {
        match self.value(name, AS_BOOL)? {
            ParamValue::Bool(b) => Ok(*b),
            v => Err(Self::wrong_type(name, AS_BOOL, v)),
        }
    }

    /// A `Secret` parameter: the secret itself when this process sealed it or it was
    /// given directly, else only its fingerprint (a resumed run).
    pub fn secret(&self, name: &str) -> Result<SecretValue, ParamError> {
        match self.value(name, AS_SECRET)? {
            ParamValue::Str(v) => Ok(match crate::secret::unseal(v) {
                Some(s) => SecretValue::Known(s),
                None => SecretValue::FingerprintOnly(v.clone()),
            }),
            v => Err(Self::wrong_type(name, AS_SECRET, v)),
        }
    }

    /// `a=1 b=pipe`, for progress lines and tables.
    pub fn describe(&self) -> String {
        self.0
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

impl ParamSpec {
    /// Turns user text into a checked value of this parameter's kind.
    pub fn parse(&self, text: &str) -> Result<ParamValue, ParamError> {
        let t = text.trim();
        let checked = match self.kind {
            ParamKind::Int { min, max } => int_within(t, min, max),
            ParamKind::Cpu => cpu_number(t),
            ParamKind::Size { min, max } => size_within(t, min, max),
            ParamKind::Float { min, max } => float_within(t, min, max),
            ParamKind::Duration { min_s, max_s } => duration_within(t, min_s, max_s),
            ParamKind::Choice(words) => one_of(t, words),
            ParamKind::Bool => boolean(t),
            // Free text is kept exactly as given, spaces included.
            ParamKind::Text { max_len }
            | ParamKind::Secret { max_len }
            | ParamKind::Env { max_len } => free_text(text, max_len),
        };
        checked.map_err(|refusal| ParamError::Invalid {
            name: self.name.to_string(),
            // A secret is never quoted: the error is printed.
            value: match self.kind {
                ParamKind::Secret { .. } => crate::secret::fingerprint(text),
                ParamKind::Env { .. } => crate::secret::mask_env(text),
                _ => text.to_string(),
            },
            reason: refusal.to_string(),
        })
    }

    /// Human description of the kind, for `--help` style listings.
    pub fn kind_text(&self) -> String {
        match self.kind {
            ParamKind::Int { min, max } => format!("integer {min}..{max}"),
            ParamKind::Float { min, max } if min.abs() < 1e12 && max.abs() < 1e12 => {
                format!("number {min}..{max}")
            }
            ParamKind::Float { .. } => "number".into(),
            ParamKind::Duration { .. } => "duration".into(),
            ParamKind::Size { .. } => "size".into(),
            ParamKind::Cpu => "cpu".into(),
            ParamKind::Choice(w) => w.join("|"),
            ParamKind::Bool => "bool".into(),
            ParamKind::Text { .. } => "text".into(),
            ParamKind::Secret { .. } => "secret text".into(),
            ParamKind::Env { .. } => "K=V;K=V".into(),
        }
    }
}

/// Why text is not a value of its parameter's kind: the one-line reason a
/// `ParamError::Invalid` gives.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum Refusal {
    #[error("not an integer")]
    NotAnInteger,
    #[error("not a CPU number")]
    NotACpu,
    #[error("not a number")]
    NotANumber,
    /// A size or a duration that does not read, with forms that do.
    #[error("{0}")]
    Unreadable(String),
    /// The bounds as the kind writes them (`4K`, `0.5s`).
    #[error("must be between {0} and {1}")]
    OutOfRange(String, String),
    #[error("must be one of {}", .0.join(", "))]
    NotOneOf(&'static [&'static str]),
    #[error("must be true or false")]
    NotABool,
    /// Free text: neither of these quotes the text (a secret's error is printed).
    #[error("longer than {0} bytes")]
    TooLong(usize),
    #[error("contains a NUL byte")]
    ContainsNul,
}

// The check of each kind: the value, or why the text is refused.

fn int_within(t: &str, min: i64, max: i64) -> Result<ParamValue, Refusal> {
    let v: i64 = t.parse().map_err(|_| Refusal::NotAnInteger)?;
    if v < min || v > max {
        return Err(Refusal::OutOfRange(min.to_string(), max.to_string()));
    }
    Ok(ParamValue::Int(v))
}

fn cpu_number(t: &str) -> Result<ParamValue, Refusal> {
    match t.parse::<i64>() {
        Ok(v) if (0..=65535).contains(&v) => Ok(ParamValue::Int(v)),
        _ => Err(Refusal::NotACpu),
    }
}

fn size_within(t: &str, min: u64, max: u64) -> Result<ParamValue, Refusal> {
    let v = parse_size(t).map_err(Refusal::Unreadable)?;
    if v < min || v > max {
        return Err(Refusal::OutOfRange(format_size(min), format_size(max)));
    }
    Ok(ParamValue::Int(v.min(i64::MAX as u64) as i64))
}

fn float_within(t: &str, min: f64, max: f64) -> Result<ParamValue, Refusal> {
    let v: f64 = t.parse().map_err(|_| Refusal::NotANumber)?;
    if !v.is_finite() || v < min || v > max {
        // 1e300, not its 301 digits.
        return Err(Refusal::OutOfRange(
            crate::limits::number(min),
            crate::limits::number(max),
        ));
    }
    Ok(ParamValue::Float(v))
}

fn duration_within(t: &str, min_s: f64, max_s: f64) -> Result<ParamValue, Refusal> {
    let v = parse_duration(t).map_err(Refusal::Unreadable)?;
    if v < min_s || v > max_s {
        return Err(Refusal::OutOfRange(
            format_duration(min_s),
            format_duration(max_s),
        ));
    }
    Ok(ParamValue::Float(v))
}

fn one_of(t: &str, words: &'static [&'static str]) -> Result<ParamValue, Refusal> {
    if words.contains(&t) {
        Ok(ParamValue::Str(t.to_string()))
    } else {
        Err(Refusal::NotOneOf(words))
    }
}

fn boolean(t: &str) -> Result<ParamValue, Refusal> {
    match t {
        "true" | "yes" | "1" | "on" => Ok(ParamValue::Bool(true)),
        "false" | "no" | "0" | "off" => Ok(ParamValue::Bool(false)),
        _ => Err(Refusal::NotABool),
    }
}

/// Free text of at most `max_len` bytes without NUL.
fn free_text(text: &str, max_len: usize) -> Result<ParamValue, Refusal> {
    if text.len() > max_len {
        return Err(Refusal::TooLong(max_len));
    }
    if text.contains('\0') {
        return Err(Refusal::ContainsNul);
    }
    Ok(ParamValue::Str(text.to_string()))
}

/// Resolves user-supplied parameter text against the declared specs: unknown names are
/// rejected (naming the known ones), defaults fill the rest, required ones must be present.
pub fn resolve(
    workload: &str,
    specs: &[ParamSpec],
    given: &BTreeMap<String, String>,
) -> Result<Params, ParamError> {
    for name in given.keys() {
        if !specs.iter().any(|s| s.name == name) {
            return Err(ParamError::Unknown {
                workload: workload.to_string(),
                name: name.clone(),
                known: specs.iter().map(|s| s.name).collect::<Vec<_>>().join(", "),
            });
        }
    }
    let mut out = BTreeMap::new();
    for spec in specs {
        let text = match (given.get(spec.name), spec.default) {
            (Some(t), _) => t.as_str(),
            (None, Some(d)) => d,
            (None, None) => {
                return Err(ParamError::Missing {
                    workload: workload.to_string(),
                    name: spec.name.to_string(),
                })
            }
        };
        out.insert(spec.name.to_string(), spec.parse(text)?);
    }
    Ok(Params(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPECS: &[ParamSpec] = &[
        ParamSpec {
            name: "cpu_a",
            role: role::ParamRole::Plain,
            help: "",
            kind: ParamKind::Cpu,
            default: Some("0"),
        },
        ParamSpec {
            name: "duration",
            role: role::ParamRole::Plain,
            help: "",
            kind: ParamKind::Duration {
                min_s: 0.01,
                max_s: 3600.0,
            },
            default: Some("10s"),
        },
        ParamSpec {
            name: "mechanism",
            role: role::ParamRole::Plain,
            help: "",
            kind: ParamKind::Choice(&["pipe", "futex"]),
            default: Some("pipe"),
        },
    ];

    fn given(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    #[test]
    fn resolves_defaults_and_given_values() {
        let p = resolve("w", SPECS, &given(&[("duration", "500ms")])).unwrap();
        assert_eq!(p.seconds("duration"), Ok(0.5));
        assert_eq!(p.cpu("cpu_a"), Ok(0));
        assert_eq!(p.str("mechanism"), Ok("pipe"));
        assert_eq!(p.describe(), "cpu_a=0 duration=0.5 mechanism=pipe");
    }

    #[test]
    fn rejects_unknown_and_invalid() {
        let e = resolve("w", SPECS, &given(&[("bogus", "1")])).unwrap_err();
        assert!(e.to_string().contains("bogus"), "{e}");
        assert!(e.to_string().contains("cpu_a"), "{e}");
        let e = resolve("w", SPECS, &given(&[("mechanism", "smoke")])).unwrap_err();
        assert!(e.to_string().contains("pipe, futex"), "{e}");
        assert!(resolve("w", SPECS, &given(&[("duration", "-1s")])).is_err());
        assert!(resolve("w", SPECS, &given(&[("duration", "2h")])).is_err());
    }

    #[test]
    fn reading_an_undeclared_name_fails_naming_it_and_the_declared_ones() {
        let p = resolve("w", SPECS, &BTreeMap::new()).unwrap();
        let e = p.str("mechansim").unwrap_err();
        assert!(e.is_programming_error());
        assert_eq!(
            e.to_string(),
            "parameter \"mechansim\" (read as text) is not declared by this workload \
             (it has: cpu_a, duration, mechanism)"
        );
        let e = p.int("cpu").unwrap_err().to_string();
        assert!(e.contains("\"cpu\" (read as an integer)"), "{e}");
        assert!(!e.contains('\n'), "{e}");
        // Every accessor is loud, none falls back to a zero.
        assert!(p.cpu("cpu").is_err());
        assert!(p.float("value").is_err());
        assert!(p.seconds("durration").is_err());
        assert!(p.bool("process").is_err());
        assert!(p.secret("token").is_err());
        let e = Params::default().int("size").unwrap_err().to_string();
        assert!(e.ends_with("(it has: none)"), "{e}");
    }

    #[test]
    fn reading_as_the_wrong_type_fails_naming_what_was_asked_and_held() {
        let p = resolve("w", SPECS, &BTreeMap::new()).unwrap();
        let e = p.int("mechanism").unwrap_err();
        assert!(e.is_programming_error());
        assert_eq!(
            e.to_string(),
            "parameter \"mechanism\" is read as an integer but holds text"
        );
        let e = p.str("cpu_a").unwrap_err().to_string();
        assert_eq!(
            e,
            "parameter \"cpu_a\" is read as text but holds the integer 0"
        );
        let e = p.bool("duration").unwrap_err().to_string();
        assert!(
            e.contains("read as true or false but holds the number 10"),
            "{e}"
        );
        // A duration is not an integer: no silent truncation.
        assert!(p.int("duration").is_err());
        let mut q = Params::default();
        q.0.insert("cpu".into(), ParamValue::Int(-1));
        q.0.insert("on".into(), ParamValue::Bool(true));
        q.0.insert("size".into(), ParamValue::Int(4096));
        let e = q.cpu("cpu").unwrap_err().to_string();
        assert!(
            e.contains("read as a CPU number but holds the integer -1"),
            "{e}"
        );
        assert_eq!(q.int("cpu"), Ok(-1));
        assert_eq!(q.bool("on"), Ok(true));
        assert!(q.str("on").is_err());
        // An integer reads as a number exactly.
        assert_eq!(q.float("size"), Ok(4096.0));
    }

    #[test]
    fn a_wrong_type_error_never_quotes_the_text_it_holds() {
        let mut p = Params::default();
        p.0.insert("token".into(), ParamValue::Str("hunter2".into()));
        let e = p.int("token").unwrap_err().to_string();
        assert!(!e.contains("hunter2"), "{e}");
        assert_eq!(p.secret("token"), Ok(SecretValue::Known("hunter2".into())));
        let fp = crate::secret::fingerprint("never sealed in this process");
        p.0.insert("token".into(), ParamValue::Str(fp.clone()));
        assert_eq!(p.secret("token"), Ok(SecretValue::FingerprintOnly(fp)));
        p.0.insert("token".into(), ParamValue::Int(3));
        assert!(p.secret("token").is_err());
    }

    proptest::proptest! {
        /// Whatever the declared names, each reads back as what it holds, and any other
        /// name fails with an error that names it.
        #[test]
        fn declared_names_read_and_others_fail(
            values in proptest::collection::btree_map("[a-z_]{1,8}", -1000i64..1000, 0..6),
            other in "[a-z_]{1,9}",
        ) {
            let p = Params(values.iter().map(|(k, v)| (k.clone(), ParamValue::Int(*v))).collect());
            for (k, v) in &values {
                proptest::prop_assert_eq!(p.int(k), Ok(*v));
                proptest::prop_assert!(p.str(k).is_err());
            }
            if !values.contains_key(&other) {
                let e = p.int(&other).unwrap_err().to_string();
                let quoted = format!("{other:?}");
                proptest::prop_assert!(e.contains(&quoted), "{}", e);
                for k in values.keys() {
                    proptest::prop_assert!(e.contains(k.as_str()), "{}", e);
                }
            }
        }
    }

    #[test]
    fn text_is_kept_verbatim_within_its_limit() {
        let spec = ParamSpec {
            name: "cmd",
            role: role::ParamRole::Plain,
            help: "",
            kind: ParamKind::Text { max_len: 8 },
            default: Some(""),
        };
        assert_eq!(
            spec.parse(" a, b ").unwrap(),
            ParamValue::Str(" a, b ".into())
        );
        assert_eq!(spec.parse("").unwrap(), ParamValue::Str(String::new()));
        assert_eq!(spec.kind_text(), "text");
        let e = spec.parse("123456789").unwrap_err().to_string();
        assert!(e.contains("longer than 8 bytes"), "{e}");
        // Bytes, not characters: four two-byte characters fill the limit exactly.
        assert!(spec.parse("ääää").is_ok());
        assert!(spec.parse("äääää").is_err());
        let e = spec.parse("a\0b").unwrap_err().to_string();
        assert!(e.contains("NUL"), "{e}");
    }

    /// `-p value=1e308` on the null workload (bounds ±1e300) used to print both bounds as
    /// 301-digit decimals, a 659-byte line; bounds read as the user would write them.
    #[test]
    fn bounds_are_printed_as_a_person_writes_them() {
        let spec = |kind| ParamSpec {
            name: "value",
            role: role::ParamRole::Plain,
            help: "",
            kind,
            default: None,
        };
        let e = spec(ParamKind::Float {
            min: -1e300,
            max: 1e300,
        })
        .parse("1e308")
        .unwrap_err()
        .to_string();
        assert_eq!(
            e,
            "parameter value=\"1e308\": must be between -1e300 and 1e300"
        );
        let e = spec(ParamKind::Duration {
            min_s: 0.001,
            max_s: 86_400.0,
        })
        .parse("2d")
        .unwrap_err()
        .to_string();
        assert!(e.ends_with("must be between 1ms and 1d"), "{e}");
        let e = spec(ParamKind::Size {
            min: 1,
            max: 1 << 30,
        })
        .parse("2G")
        .unwrap_err()
        .to_string();
        assert!(e.ends_with("must be between 1 and 1G"), "{e}");
        // Durations as the help states them: from ns to days.
        let day = spec(ParamKind::Duration {
            min_s: 1e-9,
            max_s: 86_400.0,
        });
        assert_eq!(day.parse("1d").unwrap(), ParamValue::Float(86_400.0));
        assert_eq!(day.parse("1ns").unwrap(), ParamValue::Float(1e-9));
    }

    #[test]
    fn every_kind_refuses_bad_text_in_one_line_that_says_why() {
        let spec = |kind| ParamSpec {
            name: "p",
            role: role::ParamRole::Plain,
            help: "",
            kind,
            default: None,
        };
        let cases = [
            (ParamKind::Int { min: 1, max: 9 }, "x", "not an integer"),
            (ParamKind::Int { min: 1, max: 9 }, "10", "between 1 and 9"),
            (ParamKind::Cpu, "-1", "not a CPU number"),
            (
                ParamKind::Size {
                    min: 4096,
                    max: 1 << 20,
                },
                "2M",
                "between 4K and 1M",
            ),
            (
                ParamKind::Float { min: 0.0, max: 1.0 },
                "NaN",
                "between 0 and 1",
            ),
            (
                ParamKind::Duration {
                    min_s: 1.0,
                    max_s: 2.0,
                },
                "3s",
                "between 1s and 2s",
            ),
            (ParamKind::Choice(&["a", "b"]), "c", "one of a, b"),
            (ParamKind::Bool, "maybe", "true or false"),
        ];
        for (kind, text, why) in cases {
            let e = spec(kind).parse(text).unwrap_err().to_string();
            assert!(
                e.contains(why) && e.contains(text) && !e.contains('\n'),
                "{e}"
            );
        }
        assert_eq!(
            spec(ParamKind::Cpu).parse(" 3 ").unwrap(),
            ParamValue::Int(3)
        );
        let e = spec(ParamKind::Secret { max_len: 4 })
            .parse("hunter2")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("longer than 4 bytes") && !e.contains("hunter2"),
            "{e}"
        );
    }
}
