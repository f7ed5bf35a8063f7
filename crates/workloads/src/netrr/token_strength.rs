//! How hard a `perflab serve` token is to guess. A token is the only thing between anyone
//! who can reach the port and a host that answers their traffic, and a guess costs one
//! connection: a 4-digit token fell to 7,392 tries in 2 s. So `serve` refuses a token
//! under [`MIN_BITS`] unless told `--allow-weak-token`.
//!
//! The estimate is an upper bound on what the token's form allows, `length ×
//! log2(alphabet)`, where the alphabet is the smallest usual one that holds every
//! character (digits, hex digits, letters, letters and digits, printable ASCII): a person's
//! password scores high here too, so a token must also not repeat a few characters (fewer
//! distinct characters than half what a random one of its length would show).

/// Bits a token must carry: what `serve` generates (16 random bytes as 32 hex digits).
pub const MIN_BITS: f64 = 128.0;

/// The token's estimated strength in bits and the alphabet it was judged in.
pub fn estimate(token: &str) -> (f64, &'static str) {
    let chars: Vec<char> = token.chars().collect();
    let (size, name) = alphabet(&chars);
    (chars.len() as f64 * f64::from(size).log2(), name)
}

/// `Err` with what to do when `token` is under [`MIN_BITS`] or repeats itself.
pub fn check(token: &str) -> Result<(), String> {
    let (bits, name) = estimate(token);
    let chars: Vec<char> = token.chars().collect();
    let mut distinct = chars.clone();
    distinct.sort_unstable();
    distinct.dedup();
    let (size, _) = alphabet(&chars);
    let expected = chars.len().min(size as usize);
    let repetitive = distinct.len() * 2 < expected;
    if bits >= MIN_BITS && !repetitive {
        return Ok(());
    }
    let why = if repetitive {
        format!(
            "the token repeats a few characters ({} distinct in {})",
            distinct.len(),
            chars.len()
        )
    } else {
        format!(
            "the token carries at most {bits:.0} bits ({} characters of {name})",
            chars.len()
        )
    };
    Err(format!(
        "{why}: a guessable token lets anyone who reaches the port make this host answer \
         their traffic. Use at least {MIN_BITS:.0} random bits (32 hex digits, e.g. from \
         `openssl rand -hex 16`, or leave the token out and serve makes one), or give \
         --allow-weak-token"
    ))
}

fn alphabet(chars: &[char]) -> (u32, &'static str) {
    let all = |f: fn(&char) -> bool| chars.iter().all(f);
    if all(char::is_ascii_digit) {
        return (10, "digits");
    }
    if all(|c| c.is_ascii_digit() || ('a'..='f').contains(c))
        || all(|c| c.is_ascii_digit() || ('A'..='F').contains(c))
    {
        return (16, "hex digits");
    }
    let any = |f: fn(&char) -> bool| chars.iter().any(f);
    let letters = u32::from(any(char::is_ascii_lowercase)) * 26
        + u32::from(any(char::is_ascii_uppercase)) * 26;
    let digits = u32::from(any(char::is_ascii_digit)) * 10;
    let other = u32::from(any(|c| !c.is_ascii_alphanumeric())) * 33;
    match (letters, digits, other) {
        (_, _, 0) if digits == 0 => (letters, "letters"),
        (_, _, 0) => (letters + digits, "letters and digits"),
        _ => (letters + digits + other, "printable characters"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_and_repetitive_tokens_are_refused_random_ones_pass() {
        for weak in [
            "7",
            "1234",
            "s3cret",
            "correct horse",
            &"a".repeat(64),
            &"ab".repeat(40),
            "0123456789abcdef0123456789abcde", // 31 hex digits: 124 bits
        ] {
            let e = check(weak).unwrap_err();
            assert!(e.contains("--allow-weak-token"), "{weak}: {e}");
            assert!(!e.contains(weak) || weak.len() < 2, "the token quoted: {e}");
        }
        let (bits, name) = estimate("1234");
        assert_eq!(name, "digits");
        assert!((bits - 13.29).abs() < 0.01, "{bits}");
        // What serve and the VM paths generate: 16 random bytes as hex.
        assert_eq!(check("9f86d081884c7d659a2feaa0c55ad015"), Ok(()));
        // A 22-character base64 token (132 bits), and the CLI tests' long token.
        assert_eq!(check("q3Zt-8wXv_Jp2LmN4kRs7A"), Ok(()));
        assert_eq!(check("SECRETtok3n-for-the-serve-test"), Ok(()));
    }
}
