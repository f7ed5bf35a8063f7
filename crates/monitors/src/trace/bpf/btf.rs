//! A small reader of the kernel's BTF (`/sys/kernel/btf/vmlinux`): just what the raw
//! tracepoint programs need — a tracepoint's argument types (`btf_trace_<event>`), a
//! function's id (for `fexit`) and the offset and size of a struct member such as
//! `task_struct.pid`. The format is Documentation/bpf/btf.rst; every count and offset in
//! the blob is checked, so a truncated or foreign file is an error, never a panic.

use std::io::Read;

const MAGIC: u16 = 0xeb9f;

// Type kinds (BTF_KIND_*).
pub const INT: u32 = 1;
pub const PTR: u32 = 2;
pub const ARRAY: u32 = 3;
pub const STRUCT: u32 = 4;
pub const UNION: u32 = 5;
pub const ENUM: u32 = 6;
pub const FWD: u32 = 7;
pub const TYPEDEF: u32 = 8;
pub const VOLATILE: u32 = 9;
pub const CONST: u32 = 10;
pub const RESTRICT: u32 = 11;
pub const FUNC: u32 = 12;
pub const FUNC_PROTO: u32 = 13;
pub const VAR: u32 = 14;
pub const DATASEC: u32 = 15;
pub const FLOAT: u32 = 16;
pub const DECL_TAG: u32 = 17;
pub const TYPE_TAG: u32 = 18;
pub const ENUM64: u32 = 19;

/// One type: its kind, name, `size_or_type` word and the raw words after it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Type {
    pub kind: u32,
    /// Offset of the name in the string section (0: anonymous).
    pub name_off: u32,
    pub vlen: u32,
    pub kind_flag: bool,
    /// `size` for ints, structs, unions, enums; the referred type for the others.
    pub size_or_type: u32,
    /// The kind-specific words that follow (members, params, the array, the int encoding).
    pub extra: Vec<u32>,
}

/// A parsed BTF blob; type ids index `types` (0 is `void`, kept as a placeholder).
#[derive(Debug, Default)]
pub struct Btf {
    types: Vec<Type>,
    strings: Vec<u8>,
}

/// What a scalar resolves to: its size in bytes and whether it is signed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scalar {
    pub size: u32,
    pub signed: bool,
}

/// Where a member is: byte offset from the start of the struct, its type id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Member {
    pub offset: u32,
    pub type_id: u32,
}

/// Blobs larger than this are refused (vmlinux is a few MiB).
const MAX_BYTES: u64 = 256 << 20;

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(
        b.get(at..at.checked_add(4)?)?.try_into().ok()?,
    ))
}

/// Words that follow a type of `kind` with `vlen` entries.
fn extra_words(kind: u32, vlen: u32) -> Option<usize> {
    let v = vlen as usize;
    Some(match kind {
        INT | VAR | DECL_TAG => 1,
        PTR | FWD | TYPEDEF | VOLATILE | CONST | RESTRICT | FUNC | FLOAT | TYPE_TAG => 0,
        ARRAY => 3,
        STRUCT | UNION | DATASEC | ENUM64 => 3 * v,
        ENUM | FUNC_PROTO => 2 * v,
        _ => return None,
    })
}

impl Btf {
    /// Reads a whole little-endian BTF blob.
    pub fn read(r: impl Read) -> Result<Self, String> {
        let mut bytes = Vec::new();
        r.take(MAX_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| format!("cannot read BTF: {e}"))?;
        if bytes.len() as u64 > MAX_BYTES {
            return Err("BTF larger than 256 MiB".into());
        }
        Self::parse(&bytes)
    }

    pub fn parse(b: &[u8]) -> Result<Self, String> {
        let short = || "BTF truncated".to_string();
        let magic = b.get(0..2).ok_or_else(short)?;
        if u16::from_le_bytes([magic[0], magic[1]]) != MAGIC {
            return Err("not BTF (bad magic; big-endian BTF is not read)".into());
        }
        let hdr_len = u32_at(b, 4).ok_or_else(short)? as usize;
        let field = |at: usize| u32_at(b, at).map(|v| v as usize).ok_or_else(short);
        let (type_off, type_len) = (field(8)?, field(12)?);
        let (str_off, str_len) = (field(16)?, field(20)?);
        let section = |off: usize, len: usize| {
            let start = hdr_len.checked_add(off).ok_or_else(short)?;
            b.get(start..start.checked_add(len).ok_or_else(short)?)
                .ok_or_else(short)
        };
        let types = section(type_off, type_len)?;
        let strings = section(str_off, str_len)?;
        let mut out = vec![Type {
            kind: 0,
            name_off: 0,
            vlen: 0,
            kind_flag: false,
            size_or_type: 0,
            extra: Vec::new(),
        }];
        let mut at = 0usize;
        while at < types.len() {
            let word = |i: usize| u32_at(types, at + 4 * i).ok_or_else(short);
            let (name_off, info, sot) = (word(0)?, word(1)?, word(2)?);
            let kind = (info >> 24) & 0x1f;
            let vlen = info & 0xffff;
            let n = extra_words(kind, vlen)
                .ok_or_else(|| format!("BTF type {} has unknown kind {kind}", out.len()))?;
            let extra = (0..n).map(|i| word(3 + i)).collect::<Result<Vec<_>, _>>()?;
            if name_off as usize >= strings.len().max(1) {
                return Err(format!(
                    "BTF type {} has a name outside the strings",
                    out.len()
                ));
            }
            out.push(Type {
                kind,
                name_off,
                vlen,
                kind_flag: info >> 31 == 1,
                size_or_type: sot,
                extra,
            });
            at += 12 + 4 * n;
        }
        Ok(Self {
            types: out,
            strings: strings.to_vec(),
        })
    }

    pub fn get(&self, id: u32) -> Option<&Type> {
        self.types.get(id as usize)
    }

    /// The name at `off` of the string section ("" when out of range or anonymous).
    pub fn name(&self, off: u32) -> &[u8] {
        let rest = self.strings.get(off as usize..).unwrap_or_default();
        let end = rest.iter().position(|&c| c == 0).unwrap_or(rest.len());
        &rest[..end]
    }

    /// The id of the type of `kind` named `name`.
    pub fn find(&self, kind: u32, name: &str) -> Option<u32> {
        self.types
            .iter()
            .position(|t| t.kind == kind && self.name(t.name_off) == name.as_bytes())
            .map(|i| i as u32)
    }

    /// `id` with typedefs, qualifiers and type tags peeled off.
    pub fn resolve(&self, mut id: u32) -> Option<u32> {
        // A chain longer than this is a loop in a corrupt blob.
        for _ in 0..64 {
            let t = self.get(id)?;
            match t.kind {
                TYPEDEF | VOLATILE | CONST | RESTRICT | TYPE_TAG => id = t.size_or_type,
                _ => return Some(id),
            }
        }
        None
    }

    /// The parameter type ids of a tracepoint's program, `btf_trace_<event>` (a typedef of
    /// a pointer to the prototype whose first parameter is the probe's `void *` data,
    /// which the program does not see: it is left out).
    pub fn tracepoint_args(&self, event: &str) -> Option<Vec<u32>> {
        let td = self.find(TYPEDEF, &format!("btf_trace_{event}"))?;
        let ptr = self.resolve(self.get(td)?.size_or_type)?;
        let ptr = self.get(ptr).filter(|t| t.kind == PTR)?;
        let proto = self.resolve(ptr.size_or_type)?;
        let params = self.params(proto)?;
        params.get(1..).map(<[u32]>::to_vec)
    }

    /// The parameter type ids of a FUNC_PROTO (or of a FUNC's prototype).
    pub fn params(&self, id: u32) -> Option<Vec<u32>> {
        let mut t = self.get(id)?;
        if t.kind == FUNC {
            t = self.get(t.size_or_type)?;
        }
        if t.kind != FUNC_PROTO {
            return None;
        }
        Some(t.extra.chunks_exact(2).map(|p| p[1]).collect())
    }

    /// The struct a pointer type points to (qualifiers peeled), by id.
    pub fn pointee_struct(&self, id: u32) -> Option<u32> {
        let p = self.get(self.resolve(id)?).filter(|t| t.kind == PTR)?;
        let s = self.resolve(p.size_or_type)?;
        self.get(s)
            .filter(|t| matches!(t.kind, STRUCT | UNION))
            .map(|_| s)
    }

    /// A member of a struct or union by a dotted path (`thread_info.cpu`), looking into
    /// anonymous members on the way; bitfields are refused (one load cannot read them).
    pub fn member(&self, struct_id: u32, path: &str) -> Option<Member> {
        let mut at = Member {
            offset: 0,
            type_id: struct_id,
        };
        for part in path.split('.') {
            let inner = self.direct_member(self.resolve(at.type_id)?, part, 0)?;
            at = Member {
                offset: at.offset.checked_add(inner.offset)?,
                type_id: inner.type_id,
            };
        }
        Some(at)
    }

    fn direct_member(&self, id: u32, name: &str, depth: u32) -> Option<Member> {
        let t = self.get(id).filter(|t| matches!(t.kind, STRUCT | UNION))?;
        if depth > 8 {
            return None;
        }
        for m in t.extra.chunks_exact(3) {
            let (name_off, type_id, raw) = (m[0], m[1], m[2]);
            let (bits, bitfield) = if t.kind_flag {
                (raw & 0x00ff_ffff, raw >> 24 != 0)
            } else {
                (raw, false)
            };
            if name_off != 0 && self.name(name_off) == name.as_bytes() {
                if bitfield || bits % 8 != 0 {
                    return None;
                }
                return Some(Member {
                    offset: bits / 8,
                    type_id,
                });
            }
            if name_off == 0 {
                // Anonymous struct or union: its members are the parent's.
                if let Some(inner) = self
                    .resolve(type_id)
                    .and_then(|r| self.direct_member(r, name, depth + 1))
                {
                    if bits % 8 == 0 {
                        return Some(Member {
                            offset: bits / 8 + inner.offset,
                            type_id: inner.type_id,
                        });
                    }
                }
            }
        }
        None
    }

    /// A number type's size and sign (ints, enums, pointers as unsigned 8 bytes).
    pub fn scalar(&self, id: u32) -> Option<Scalar> {
        let t = self.get(self.resolve(id)?)?;
        match t.kind {
            // The int's encoding: bit 24 signed; its size is the type's.
            INT => Some(Scalar {
                size: t.size_or_type,
                signed: t.extra.first()? & (1 << 24) != 0,
            }),
            ENUM | ENUM64 => Some(Scalar {
                size: t.size_or_type,
                signed: t.kind_flag,
            }),
            PTR => Some(Scalar {
                size: 8,
                signed: false,
            }),
            _ => None,
        }
    }

    /// Bytes a type occupies (None for what has no size: void, functions, forward
    /// declarations).
    pub fn size_of(&self, id: u32) -> Option<u32> {
        let t = self.get(self.resolve(id)?)?;
        match t.kind {
            INT | ENUM | ENUM64 | STRUCT | UNION | FLOAT => Some(t.size_or_type),
            PTR => Some(8),
            ARRAY => {
                let (elem, n) = (*t.extra.first()?, *t.extra.get(2)?);
                // Nested arrays are bounded by the same chain limit as `resolve`.
                self.size_of_depth(elem, 8)?.checked_mul(n)
            }
            _ => None,
        }
    }

    fn size_of_depth(&self, id: u32, depth: u32) -> Option<u32> {
        let t = self.get(self.resolve(id)?)?;
        if t.kind == ARRAY {
            if depth == 0 {
                return None;
            }
            let (elem, n) = (*t.extra.first()?, *t.extra.get(2)?);
            return self.size_of_depth(elem, depth - 1)?.checked_mul(n);
        }
        self.size_of(id)
    }

    /// `char[N]` (or any array of one-byte ints): N.
    pub fn char_array(&self, id: u32) -> Option<u32> {
        let t = self.get(self.resolve(id)?).filter(|t| t.kind == ARRAY)?;
        let elem = self.scalar(*t.extra.first()?)?;
        (elem.size == 1).then_some(*t.extra.get(2)?)
    }
}

#[cfg(test)]
pub(crate) mod tests;
