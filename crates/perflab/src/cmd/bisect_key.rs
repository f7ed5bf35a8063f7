//! Names that make a rerun of the same bisection find what the last one stored: the
//! bisection's key (its repository, ends, build command, study, metric and point) labels
//! its runs, and each run it starts has a uid derived from the key, so a rerun asks for
//! the same uid and finds the run instead of measuring it again.

/// 32 lowercase hex digits from `parts`: two FNV-1a 64-bit hashes with different offsets
/// (a name, not a secret: it only has to be the same for the same inputs).
pub fn hex(parts: &[&str]) -> String {
    let mut out = String::with_capacity(32);
    for offset in [0xcbf2_9ce4_8422_2325u64, 0x6c62_272e_07bb_0142] {
        let mut h = offset;
        for p in parts {
            for b in p.bytes().chain([0u8]) {
                h ^= u64::from(b);
                h = h.wrapping_mul(0x0100_0000_01b3);
            }
        }
        out.push_str(&format!("{h:016x}"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_parts_give_the_same_name_and_others_another() {
        let a = hex(&["repo", "good", "bad"]);
        assert_eq!(a.len(), 32);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()));
        assert_eq!(a, hex(&["repo", "good", "bad"]));
        assert_ne!(a, hex(&["repo", "goodbad", ""]));
        assert_ne!(a, hex(&["repo", "bad", "good"]));
    }
}
