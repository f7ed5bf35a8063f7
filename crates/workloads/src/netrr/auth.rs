//! The challenge-response of `perflab serve`'s handshake (protocol version 2).
//!
//! The server sends a fresh 32-byte nonce; the client answers with a nonce of its own and
//! `HMAC-SHA256(key = token, CLIENT_DOMAIN ‖ server nonce ‖ client nonce)`; the server
//! proves it holds the token too with the same MAC under `SERVER_DOMAIN`. The token never
//! crosses the wire, and a recorded answer is worthless on another connection, whose
//! server nonce differs. The two domains keep one side's MAC from being reflected as the
//! other's. MACs are checked in constant time (`hmac`'s `verify_slice`).

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// Bytes of each nonce.
pub const NONCE_LEN: usize = 32;

const CLIENT_DOMAIN: &[u8] = b"perflab-serve v2 client auth\0";
const SERVER_DOMAIN: &[u8] = b"perflab-serve v2 server auth\0";

pub type Nonce = [u8; NONCE_LEN];

/// A nonce from the kernel's random source.
pub fn nonce() -> Result<Nonce, String> {
    let mut buf = [0u8; NONCE_LEN];
    let mut got = 0;
    while got < buf.len() {
        // SAFETY: getrandom writes at most the given length into the part of our buffer
        // that is left.
        let n = unsafe { libc::getrandom(buf[got..].as_mut_ptr().cast(), buf.len() - got, 0) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(format!("cannot get random bytes for a nonce: {e}"));
        }
        got += n as usize;
    }
    Ok(buf)
}

fn mac(domain: &[u8], token: &str, server: &Nonce, client: &Nonce) -> Hmac<Sha256> {
    // HMAC takes a key of any length; this cannot fail.
    let mut m = <Hmac<Sha256> as KeyInit>::new_from_slice(token.as_bytes())
        .expect("HMAC accepts keys of any length");
    m.update(domain);
    m.update(server);
    m.update(client);
    m
}

/// The client's proof, as hex.
pub fn client_mac(token: &str, server: &Nonce, client: &Nonce) -> String {
    hex(&mac(CLIENT_DOMAIN, token, server, client)
        .finalize()
        .into_bytes())
}

/// The server's proof, as hex.
pub fn server_mac(token: &str, server: &Nonce, client: &Nonce) -> String {
    hex(&mac(SERVER_DOMAIN, token, server, client)
        .finalize()
        .into_bytes())
}

/// Checks the client's proof in constant time; malformed hex is simply not a match.
pub fn verify_client(token: &str, server: &Nonce, client: &Nonce, given_hex: &str) -> bool {
    verify(CLIENT_DOMAIN, token, server, client, given_hex)
}

/// Checks the server's proof in constant time.
pub fn verify_server(token: &str, server: &Nonce, client: &Nonce, given_hex: &str) -> bool {
    verify(SERVER_DOMAIN, token, server, client, given_hex)
}

fn verify(domain: &[u8], token: &str, s: &Nonce, c: &Nonce, given_hex: &str) -> bool {
    match unhex(given_hex) {
        Some(given) => mac(domain, token, s, c).verify_slice(&given).is_ok(),
        None => false,
    }
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Lowercase or uppercase hex to bytes; `None` for anything else (odd length included).
pub fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) || text.len() > 2 * 64 {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

/// A nonce sent as hex: exactly [`NONCE_LEN`] bytes.
pub fn nonce_from_hex(text: &str) -> Option<Nonce> {
    unhex(text)?.try_into().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn macs_verify_only_with_the_same_token_nonces_and_side() {
        let (s, c) = (nonce().unwrap(), nonce().unwrap());
        assert_ne!(s, c, "two nonces from getrandom");
        let m = client_mac("tok", &s, &c);
        assert_eq!(m.len(), 64);
        assert!(verify_client("tok", &s, &c, &m));
        assert!(verify_client("tok", &s, &c, &m.to_uppercase()));
        assert!(!verify_client("tok2", &s, &c, &m));
        assert!(!verify_client("tok", &c, &s, &m));
        assert!(!verify_client("tok", &nonce().unwrap(), &c, &m));
        // The server's MAC is another one: a client's cannot be reflected as it.
        assert!(!verify_server("tok", &s, &c, &m));
        assert!(verify_server("tok", &s, &c, &server_mac("tok", &s, &c)));
        for junk in ["", "zz", "abc", &m[..62]] {
            assert!(!verify_client("tok", &s, &c, junk), "{junk}");
        }
    }

    #[test]
    fn the_mac_is_hmac_sha256_as_specified() {
        // RFC 4231 test case 2: key "Jefe", data "what do ya want for nothing?".
        let mut m = <Hmac<Sha256> as KeyInit>::new_from_slice(b"Jefe").unwrap();
        m.update(b"what do ya want for nothing?");
        assert_eq!(
            hex(&m.finalize().into_bytes()),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn nonces_round_trip_through_hex_and_bad_hex_is_refused() {
        let n = nonce().unwrap();
        assert_eq!(nonce_from_hex(&hex(&n)), Some(n));
        assert_eq!(nonce_from_hex(&hex(&n[..31])), None);
        assert_eq!(nonce_from_hex("g".repeat(64).as_str()), None);
        assert_eq!(unhex("é1"), None);
    }
}
