//! `/proc/<pid>/smaps`: one block per mapping, a header line
//! (`start-end perms offset dev inode [path]`) followed by `Key: value [kB]` lines.
//!
//! perflab reads it to learn which page sizes a buffer really got: `AnonHugePages` for
//! transparent huge pages, `Private_Hugetlb`/`Shared_Hugetlb` and `KernelPageSize` for
//! hugetlb mappings.

use std::collections::BTreeMap;
use std::io::BufRead;

use crate::error::ParseError;
use crate::lines::LossyLines;

/// One mapping of a process.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SmapsEntry {
    pub start: u64,
    /// One past the last byte.
    pub end: u64,
    /// `rw-p` and the like.
    pub perms: String,
    /// The mapped file or a bracketed name such as `[heap]`; `None` for anonymous memory.
    pub path: Option<String>,
    /// Numeric fields: those in `kB` converted to bytes, unitless ones (`THPeligible`)
    /// as printed.
    pub fields: BTreeMap<String, u64>,
    /// The two-letter flags of the `VmFlags` line (`hg` = MADV_HUGEPAGE, `ht` = hugetlb).
    pub vm_flags: Vec<String>,
}

impl SmapsEntry {
    pub fn len(&self) -> u64 {
        self.end.saturating_sub(self.start)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn contains(&self, addr: u64) -> bool {
        (self.start..self.end).contains(&addr)
    }

    pub fn field(&self, name: &str) -> Option<u64> {
        self.fields.get(name).copied()
    }

    /// Bytes of this mapping backed by transparent huge pages.
    pub fn anon_huge_bytes(&self) -> u64 {
        self.field("AnonHugePages").unwrap_or(0)
    }

    /// Bytes of this mapping backed by hugetlb pages (private and shared).
    pub fn hugetlb_bytes(&self) -> u64 {
        self.field("Private_Hugetlb")
            .unwrap_or(0)
            .saturating_add(self.field("Shared_Hugetlb").unwrap_or(0))
    }

    /// The page size the kernel uses for this mapping, in bytes.
    pub fn kernel_page_size(&self) -> Option<u64> {
        self.field("KernelPageSize")
    }

    pub fn has_flag(&self, flag: &str) -> bool {
        self.vm_flags.iter().any(|f| f == flag)
    }
}

/// Every mapping, in file order.
pub fn parse_smaps(reader: impl BufRead) -> Result<Vec<SmapsEntry>, ParseError> {
    let mut out = Vec::new();
    walk(reader, |e| {
        out.push(e);
        false
    })?;
    Ok(out)
}

/// The mapping that contains `addr`, if any. Keeps only that one in memory, so it suits
/// the smaps of a process with thousands of mappings.
pub fn find_mapping(reader: impl BufRead, addr: u64) -> Result<Option<SmapsEntry>, ParseError> {
    let mut found = None;
    walk(reader, |e| {
        if e.contains(addr) {
            found = Some(e);
            true
        } else {
            false
        }
    })?;
    Ok(found)
}

/// Calls `each` with every complete entry until it returns true.
fn walk(reader: impl BufRead, mut each: impl FnMut(SmapsEntry) -> bool) -> Result<(), ParseError> {
    let mut current: Option<SmapsEntry> = None;
    let mut lines = LossyLines::new(reader);
    while let Some((lineno, text)) = lines
        .next_line()
        .map_err(|e| ParseError::new(e.line, e.source.to_string()))?
    {
        let line = text.trim_end();
        if line.trim().is_empty() {
            continue;
        }
        let first = line.split_whitespace().next().unwrap_or("");
        if first.ends_with(':') {
            let entry = current.as_mut().ok_or_else(|| {
                ParseError::new(lineno, format!("field {first} before any mapping header"))
            })?;
            field(entry, line, lineno)?;
        } else {
            let next = header(line, lineno)?;
            if let Some(done) = current.replace(next) {
                if each(done) {
                    return Ok(());
                }
            }
        }
    }
    if let Some(done) = current {
        each(done);
    }
    Ok(())
}

fn header(line: &str, lineno: usize) -> Result<SmapsEntry, ParseError> {
    let bad = |why: &str| ParseError::new(lineno, format!("mapping header {line:?}: {why}"));
    let mut words = line.split_whitespace();
    let range = words.next().ok_or_else(|| bad("empty"))?;
    let (a, b) = range
        .split_once('-')
        .ok_or_else(|| bad("no start-end range"))?;
    let start = u64::from_str_radix(a, 16).map_err(|_| bad("start is not hex"))?;
    let end = u64::from_str_radix(b, 16).map_err(|_| bad("end is not hex"))?;
    if end < start {
        return Err(bad("end before start"));
    }
    let perms = words
        .next()
        .ok_or_else(|| bad("no permissions"))?
        .to_string();
    // offset, device and inode, then the path, which may itself hold spaces.
    let rest: Vec<&str> = words.skip(3).collect();
    let path = (!rest.is_empty()).then(|| rest.join(" "));
    Ok(SmapsEntry {
        start,
        end,
        perms,
        path,
        ..Default::default()
    })
}

fn field(entry: &mut SmapsEntry, line: &str, lineno: usize) -> Result<(), ParseError> {
    let Some((key, value)) = line.split_once(':') else {
        return Ok(());
    };
    let key = key.trim();
    if key == "VmFlags" {
        entry.vm_flags = value.split_whitespace().map(str::to_string).collect();
        return Ok(());
    }
    let mut words = value.split_whitespace();
    // Fields that are not numbers (none in 6.x besides VmFlags) are skipped, so a new
    // kernel's text field does not make the whole file unreadable.
    let Some(Ok(n)) = words.next().map(str::parse::<u64>) else {
        return Ok(());
    };
    let bytes = match words.next() {
        None => n,
        Some("kB") => n.saturating_mul(1024),
        Some(unit) => {
            return Err(ParseError::new(
                lineno,
                format!("{key}: unknown unit {unit:?}"),
            ))
        }
    };
    entry.fields.insert(key.to_string(), bytes);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Captured from /proc/self/smaps of a small C program on the 2-vCPU KVM guest (kernel
    /// 6.18) that maps a buffer the way xfer does: a PROT_NONE reservation with a 2M
    /// MADV_HUGEPAGE buffer inside, written once, which got one transparent huge page.
    /// The excerpt runs from `[heap]` to the first libc mapping.
    const CAPTURED: &str = include_str!("smaps_sample.txt");

    #[test]
    fn parses_captured_entries() {
        let all = parse_smaps(CAPTURED.as_bytes()).unwrap();
        assert!(all.len() >= 3, "{}", all.len());
        let thp = all
            .iter()
            .find(|e| e.has_flag("hg"))
            .expect("a MADV_HUGEPAGE mapping");
        assert_eq!(thp.len(), 2 << 20);
        assert_eq!(thp.anon_huge_bytes(), 2 << 20);
        assert_eq!(thp.kernel_page_size(), Some(4096));
        assert_eq!(thp.hugetlb_bytes(), 0);
        assert_eq!(thp.path, None);
        assert_eq!(thp.perms, "rw-p");
        assert_eq!(thp.field("THPeligible"), Some(1));
        assert_eq!(all[0].path.as_deref(), Some("[heap]"));
        let libc = all.last().expect("entries");
        assert!(
            libc.path.as_deref().unwrap_or("").ends_with("libc.so.6"),
            "{libc:?}"
        );
        assert_eq!(libc.perms, "r--p");
        let found = find_mapping(CAPTURED.as_bytes(), thp.start + 4096)
            .unwrap()
            .unwrap();
        assert_eq!(&found, thp);
        assert_eq!(find_mapping(CAPTURED.as_bytes(), 1).unwrap(), None);
    }

    #[test]
    fn reads_hugetlb_and_paths_with_spaces() {
        let text = "\
7f0000000000-7f0000200000 rw-p 00000000 00:0f 12345                      /anon_hugepage (deleted)
Size:               2048 kB
KernelPageSize:     2048 kB
MMUPageSize:        2048 kB
Rss:                   0 kB
Shared_Hugetlb:        0 kB
Private_Hugetlb:    2048 kB
VmFlags: rd wr mr mw me de ht
";
        let e = &parse_smaps(text.as_bytes()).unwrap()[0];
        assert_eq!(e.hugetlb_bytes(), 2 << 20);
        assert_eq!(e.kernel_page_size(), Some(2 << 20));
        assert_eq!(e.path.as_deref(), Some("/anon_hugepage (deleted)"));
        assert!(e.has_flag("ht"));
    }

    #[test]
    fn refuses_broken_text() {
        assert!(parse_smaps("Size: 4 kB\n".as_bytes()).is_err());
        assert!(parse_smaps("zz-10 rw-p 0 0 0\n".as_bytes()).is_err());
        assert!(parse_smaps("20-10 rw-p 0 0 0\n".as_bytes()).is_err());
        assert!(parse_smaps("10-20 rw-p 0 0 0\nSize: 4 MB\n".as_bytes()).is_err());
        assert!(parse_smaps("".as_bytes()).unwrap().is_empty());
    }

    proptest! {
        #[test]
        fn never_panics(s in "\\PC{0,300}") {
            let _ = parse_smaps(s.as_bytes());
            let _ = find_mapping(s.as_bytes(), 0x1000);
        }

        #[test]
        fn never_panics_on_near_miss_lines(
            lines in proptest::collection::vec(
                prop_oneof![
                    "[0-9a-f]{0,12}-[0-9a-f]{0,12} [rwxps-]{0,4} [0-9a-f:]{0,8} .{0,12}",
                    "[A-Za-z_]{1,14}: +[0-9]{0,22} ?(kB|MB)?",
                    "VmFlags:( [a-z]{2}){0,6}",
                ],
                0..10,
            ),
            addr in any::<u64>(),
        ) {
            let text = lines.join("\n");
            if let Ok(all) = parse_smaps(text.as_bytes()) {
                let hit = find_mapping(text.as_bytes(), addr).unwrap();
                prop_assert_eq!(hit, all.into_iter().find(|e| e.contains(addr)));
            }
        }
    }
}
