//! Secret parameters (a peer's token): what a run stores, prints and reports is a
//! fingerprint, `sha256:` and the first 8 hex digits of the secret's SHA-256, never the
//! secret. The lab seals a secret before it expands a spec ([`seal`]): the fingerprint
//! takes the secret's place in every value that is serialized or printed, and the secret
//! itself stays in this process's memory only, where the workload finds it ([`unseal`]).
//! A run resumed by another process finds nothing here and must be given the secret
//! again (the workload says how), which is checked against the stored fingerprint.

use std::collections::BTreeMap;
use std::sync::Mutex;

use sha2::{Digest, Sha256};

/// What a fingerprint starts with.
pub const PREFIX: &str = "sha256:";

/// Secrets sealed in this process, by fingerprint.
static SEALED: Mutex<BTreeMap<String, String>> = Mutex::new(BTreeMap::new());

/// `sha256:` and the first 8 hex digits of the SHA-256 of `secret`: enough to tell two
/// tokens apart in a report, far too little to recover or guess one from.
pub fn fingerprint(secret: &str) -> String {
    let digest = Sha256::digest(secret.as_bytes());
    let hex: String = digest[..4].iter().map(|b| format!("{b:02x}")).collect();
    format!("{PREFIX}{hex}")
}

/// True when `text` has the form of a fingerprint (and so is no secret).
pub fn is_fingerprint(text: &str) -> bool {
    text.strip_prefix(PREFIX)
        .is_some_and(|h| h.len() == 8 && h.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Keeps `secret` in this process and returns its fingerprint to store in its place.
/// Empty text (no secret given) and a fingerprint (already sealed) come back unchanged.
pub fn seal(secret: &str) -> String {
    if secret.is_empty() || is_fingerprint(secret) {
        return secret.to_string();
    }
    let fp = fingerprint(secret);
    if let Ok(mut sealed) = SEALED.lock() {
        sealed.insert(fp.clone(), secret.to_string());
    }
    fp
}

/// The secret a parameter's value stands for: the value itself when it is not a
/// fingerprint (a workload run directly, not through the lab), the sealed secret when
/// this process sealed it, else `None` (a run resumed by another process).
pub fn unseal(value: &str) -> Option<String> {
    if !is_fingerprint(value) {
        return Some(value.to_string());
    }
    SEALED.lock().ok()?.get(value).cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_secret_is_replaced_by_its_fingerprint_and_found_again() {
        let fp = seal("s3cret-token");
        assert!(is_fingerprint(&fp), "{fp}");
        assert!(!fp.contains("s3cret"));
        assert_eq!(fp, fingerprint("s3cret-token"));
        assert_eq!(unseal(&fp).as_deref(), Some("s3cret-token"));
        // Sealing twice changes nothing; empty stays empty.
        assert_eq!(seal(&fp), fp);
        assert_eq!(seal(""), "");
        // Plain text is its own secret; an unknown fingerprint has none here.
        assert_eq!(unseal("plain").as_deref(), Some("plain"));
        assert_eq!(unseal("sha256:00000000"), None);
    }

    #[test]
    fn fingerprints_are_the_sha256_prefix() {
        // SHA-256("abc") = ba7816bf…
        assert_eq!(fingerprint("abc"), "sha256:ba7816bf");
        for not in [
            "sha256:ba7816b",
            "sha256:ba7816bg",
            "ba7816bf",
            "sha256:ba7816bf0",
        ] {
            assert!(!is_fingerprint(not), "{not}");
        }
    }
}
