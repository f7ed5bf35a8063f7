//! Secret parameters (a peer's token, an `env` value named like a password): what a run
//! stores, prints and reports is a fingerprint, never the secret. The lab seals a secret
//! before it expands a spec ([`seal`]): the fingerprint takes the secret's place in every
//! value that is serialized or printed, and the secret itself stays in this process's
//! memory only, where the workload finds it ([`unseal`]). A run resumed by another
//! process finds nothing here and must be given the secret again (the workload says
//! how), which is checked against the stored fingerprint ([`matches`]).
//!
//! A fingerprint is `hmac:` and 16 hex digits of HMAC-SHA256 keyed with this user's
//! fingerprint key ([`crate::secret_key`]): without the key, a fingerprint found in a
//! database, an export or a report cannot be turned back into a short token by trying
//! candidates offline, as the unkeyed SHA-256 prefix could (a 4-digit token in 7 ms).
//! Fingerprints of earlier perflab versions (`sha256:` and 8 hex digits) are still
//! recognised, and still checked, so their runs resume as before.

use std::collections::BTreeMap;
use std::sync::Mutex;

use hmac::{Hmac, KeyInit, Mac};
use sha2::{Digest, Sha256};

mod mask;

pub use mask::{looks_secret_name, mask_command, mask_env, redact_url, seal_env, url_has_password};

/// What a fingerprint starts with.
pub const PREFIX: &str = "hmac:";
/// What an earlier perflab's fingerprint starts with (an unkeyed SHA-256 prefix).
pub const LEGACY_PREFIX: &str = "sha256:";
/// Hex digits after [`PREFIX`].
const DIGITS: usize = 16;
/// Hex digits after [`LEGACY_PREFIX`].
const LEGACY_DIGITS: usize = 8;

/// Secrets sealed in this process, by fingerprint.
static SEALED: Mutex<BTreeMap<String, String>> = Mutex::new(BTreeMap::new());

/// `hmac:` and the first 16 hex digits of HMAC-SHA256(key, `secret`): enough to tell
/// two secrets apart in a report, and nothing to recover one from without the key.
pub fn fingerprint(secret: &str) -> String {
    fingerprint_with(crate::secret_key::key(), secret)
}

/// [`fingerprint`] with a key given, for a reader that has another process's key file
/// (`secret_key::load_or_create`): a test checking what a perflab it started stored.
pub fn fingerprint_with(key: &[u8], secret: &str) -> String {
    let mut m =
        <Hmac<Sha256> as KeyInit>::new_from_slice(key).expect("HMAC accepts keys of any length");
    m.update(b"perflab secret fingerprint v2\0");
    m.update(secret.as_bytes());
    let tag = m.finalize().into_bytes();
    format!("{PREFIX}{}", hex(&tag[..DIGITS / 2]))
}

/// The fingerprint an earlier perflab stored: `sha256:` and 8 hex digits of the plain
/// SHA-256. Only ever compared against, never made for a new secret.
fn legacy_fingerprint(secret: &str) -> String {
    let digest = Sha256::digest(secret.as_bytes());
    format!("{LEGACY_PREFIX}{}", hex(&digest[..LEGACY_DIGITS / 2]))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// True when `text` has the form of a fingerprint, this version's or an earlier one's
/// (and so is no secret).
pub fn is_fingerprint(text: &str) -> bool {
    let hex_of = |h: &str, n: usize| h.len() == n && h.bytes().all(|b| b.is_ascii_hexdigit());
    text.strip_prefix(PREFIX).is_some_and(|h| hex_of(h, DIGITS))
        || text
            .strip_prefix(LEGACY_PREFIX)
            .is_some_and(|h| hex_of(h, LEGACY_DIGITS))
}

/// Whether `secret` is the secret `fp` was made from: by this user's key, or by the
/// unkeyed rule of a run stored by an earlier perflab.
pub fn matches(secret: &str, fp: &str) -> bool {
    if fp.starts_with(LEGACY_PREFIX) {
        legacy_fingerprint(secret) == fp
    } else {
        fingerprint(secret) == fp
    }
}

/// What to add to a "does not match the stored fingerprint" message when this process
/// fingerprints with a key of its own (no key file: see [`crate::secret_key::problem`]),
/// so that even the right secret cannot match a fingerprint another process stored.
pub fn key_note() -> String {
    match crate::secret_key::problem() {
        Some(why) => format!(
            " (this perflab has no fingerprint key file, {why}: set PERFLAB_FINGERPRINT_KEY \
             to the key file of the perflab that started the run)"
        ),
        None => String::new(),
    }
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
        assert_eq!(unseal("hmac:0000000000000000"), None);
        assert_eq!(unseal("sha256:00000000"), None);
    }

    #[test]
    fn fingerprints_are_keyed_not_the_sha256_prefix() {
        // SHA-256("abc") = ba7816bf…: the old, invertible fingerprint.
        assert_eq!(legacy_fingerprint("abc"), "sha256:ba7816bf");
        let fp = fingerprint("abc");
        assert!(fp.starts_with("hmac:") && fp.len() == 5 + 16, "{fp}");
        assert!(!fp.contains("ba7816bf"), "{fp}");
        // Another key, another fingerprint: without this user's key, candidates cannot
        // be checked against a stored one.
        let a = fingerprint_with(&[1; 32], "1234");
        let b = fingerprint_with(&[2; 32], "1234");
        assert_ne!(a, b);
        assert_eq!(
            a,
            fingerprint_with(&[1; 32], "1234"),
            "deterministic per key"
        );
        assert_ne!(fingerprint_with(&[1; 32], "1235"), a);
        for not in [
            "sha256:ba7816b",
            "sha256:ba7816bg",
            "ba7816bf",
            "sha256:ba7816bf0",
            "hmac:0123456789abcde",
            "hmac:0123456789abcdef0",
        ] {
            assert!(!is_fingerprint(not), "{not}");
        }
        assert!(is_fingerprint("hmac:0123456789abcdef"));
    }

    #[test]
    fn a_process_without_a_key_file_says_so_where_a_match_fails() {
        // No key file is named in this test process: its key is its own.
        fingerprint("x");
        let note = key_note();
        assert!(
            note.contains("no fingerprint key file") && note.contains("PERFLAB_FINGERPRINT_KEY"),
            "{note}"
        );
    }

    #[test]
    fn stored_fingerprints_of_either_kind_are_checked() {
        assert!(matches("abc", "sha256:ba7816bf"));
        assert!(!matches("abd", "sha256:ba7816bf"));
        assert!(matches("abc", &fingerprint("abc")));
        assert!(!matches("abd", &fingerprint("abc")));
    }
}
