//! An event's record layout, from tracefs `events/<system>/<event>/format`:
//!
//! ```text
//! name: sched_waking
//! ID: 375
//! format:
//!     field:unsigned short common_type;   offset:0;   size:2; signed:0;
//!     field:char comm[16];    offset:8;   size:16;    signed:0;
//!     field:pid_t pid;    offset:24;  size:4; signed:1;
//!     field:__data_loc char[] name;   offset:12;  size:4; signed:0;
//! ```
//!
//! A classic tracepoint program receives a pointer to this record, so a field is a load at
//! its offset (no BTF or CO-RE needed). The parser never panics; a line it does not
//! understand is skipped, a file without an ID is an error.

use std::io::BufRead;

/// How a field's bytes are to be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// An integer of 1, 2, 4 or 8 bytes.
    Int,
    /// A pointer (printed as a symbol by `%pS`).
    Pointer,
    /// A fixed array of chars (`char comm[16]`): a NUL-padded string.
    Chars,
    /// A string stored elsewhere in the record (`__data_loc char[]`).
    DataLoc,
    /// Anything else (arrays of numbers, structs).
    Other,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Field {
    pub name: String,
    pub offset: u32,
    pub size: u32,
    pub signed: bool,
    pub kind: Kind,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Format {
    /// The tracepoint's id, what `perf_event_open` takes as `config`.
    pub id: u64,
    pub fields: Vec<Field>,
}

impl Format {
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }

    /// The fields an event carries (not the common ones), for error messages.
    pub fn own_fields(&self) -> Vec<&str> {
        self.fields
            .iter()
            .filter(|f| !f.name.starts_with("common_"))
            .map(|f| f.name.as_str())
            .collect()
    }
}

pub fn parse<R: BufRead>(r: R) -> Result<Format, String> {
    let mut id = None;
    let mut fields = Vec::new();
    for line in r.lines() {
        let line = line.map_err(|e| e.to_string())?;
        let line = line.trim();
        if let Some(v) = line.strip_prefix("ID:") {
            id = v.trim().parse().ok();
        } else if line.starts_with("field:") {
            if let Some(f) = field(line) {
                fields.push(f);
            }
        }
    }
    Ok(Format {
        id: id.ok_or("the format has no ID line")?,
        fields,
    })
}

/// `field:char comm[16]; offset:8; size:16; signed:0;`
fn field(line: &str) -> Option<Field> {
    let mut parts = line.split(';').map(str::trim);
    let decl = parts.next()?.strip_prefix("field:")?.trim();
    let mut offset = None;
    let mut size = None;
    let mut signed = false;
    for p in parts {
        match p.split_once(':') {
            Some(("offset", v)) => offset = v.trim().parse().ok(),
            Some(("size", v)) => size = v.trim().parse().ok(),
            Some(("signed", v)) => signed = v.trim() == "1",
            _ => {}
        }
    }
    let (ty, name) = decl.rsplit_once([' ', '*']).map(|(t, n)| (t, n.trim()))?;
    let (name, array) = match name.split_once('[') {
        Some((n, _)) => (n, true),
        None => (name, false),
    };
    let size: u32 = size?;
    let kind = if ty.starts_with("__data_loc") || ty.starts_with("__rel_loc") {
        Kind::DataLoc
    } else if array && ty.split_whitespace().any(|w| w == "char") {
        Kind::Chars
    } else if array {
        Kind::Other
    } else if decl.contains('*') {
        Kind::Pointer
    } else if matches!(size, 1 | 2 | 4 | 8) {
        Kind::Int
    } else {
        Kind::Other
    };
    if name.is_empty() {
        return None;
    }
    Some(Field {
        name: name.to_string(),
        offset: offset?,
        size,
        signed,
        kind,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    pub const WAKING: &str = "name: sched_waking\nID: 375\nformat:\n\
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\
\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n\
\tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;\n\
\tfield:void * callback;\toffset:32;\tsize:8;\tsigned:0;\n\
\tfield:const struct __kernel_timespec * utime;\toffset:40;\tsize:8;\tsigned:0;\n\
\tfield:__data_loc char[] name;\toffset:48;\tsize:4;\tsigned:0;\n\
\tfield:u64 ips[4];\toffset:56;\tsize:32;\tsigned:0;\n\n\
print fmt: \"comm=%s pid=%d\", REC->comm, REC->pid\n";

    #[test]
    fn parses_a_format_file() {
        let f = parse(WAKING.as_bytes()).unwrap();
        assert_eq!(f.id, 375);
        let kind = |n: &str| f.field(n).map(|f| (f.offset, f.size, f.signed, f.kind));
        assert_eq!(kind("common_pid"), Some((4, 4, true, Kind::Int)));
        assert_eq!(kind("comm"), Some((8, 16, false, Kind::Chars)));
        assert_eq!(kind("pid"), Some((24, 4, true, Kind::Int)));
        assert_eq!(kind("callback"), Some((32, 8, false, Kind::Pointer)));
        assert_eq!(kind("utime"), Some((40, 8, false, Kind::Pointer)));
        assert_eq!(kind("name"), Some((48, 4, false, Kind::DataLoc)));
        assert_eq!(kind("ips"), Some((56, 32, false, Kind::Other)));
        assert_eq!(
            f.own_fields(),
            ["comm", "pid", "callback", "utime", "name", "ips"]
        );
    }

    #[test]
    fn no_id_is_an_error_and_junk_is_skipped() {
        assert!(parse("format:\n\tfield:int x;\toffset:8;\tsize:4;\n".as_bytes()).is_err());
        let f = parse("ID: 1\n\tfield:;\n\tfield:int x;\toffset:z;\n\tfield:\n".as_bytes());
        assert_eq!(f.unwrap().fields, []);
    }

    proptest::proptest! {
        #[test]
        fn never_panics(s in "\\PC*") {
            let _ = parse(s.as_bytes());
            let _ = parse(format!("ID: 3\n\tfield:{s}").as_bytes());
        }
    }
}
