//! The control protocol of `perflab serve`.
//!
//! Every message is a 4-byte big-endian length followed by that many bytes of JSON (one
//! object with a `type` field). A length above [`MAX_MESSAGE`] is refused before any of
//! the body is read, so a peer cannot make the server allocate or wait for more.
//!
//! A session, one control connection (protocol version 2; see [`super::auth`]):
//!
//! ```text
//! client → hello {version}            server → challenge {nonce}
//! client → auth {client_nonce, mac}   server → welcome {session_time_s, server_mac}
//! client → open {proto, size, load_streams}
//!                                     server → opened {data_port, sink_port}
//! … measurement traffic on data_port (echoed), bulk load into sink_port (discarded) …
//! client → close                      server → closed
//! ```
//!
//! Nonces and MACs are hex. The token itself is never sent. Hello through open must
//! arrive within one deadline from the connection's accept.
//!
//! Any problem (a MAC that does not verify, garbage, oversized, an unknown message, the
//! session limit, the session's time limit) is answered with `error {message}` and the
//! connection is closed; the server goes on serving others.

use std::io::{Read, Write};

use serde::{Deserialize, Serialize};

/// Protocol version; a peer speaking another one is refused by name. Version 1 sent the
/// token in clear in its hello.
pub const VERSION: u32 = 2;

/// The largest control message body, in bytes. Real messages are under 200.
pub const MAX_MESSAGE: usize = 4096;

/// Largest measurement message: what fits in one UDP datagram over IPv4.
pub const MAX_DATA_SIZE: usize = 65_507;

/// Messages from the client (the measuring side).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Request {
    Hello { version: u32 },
    Auth { client_nonce: String, mac: String },
    Open(OpenRequest),
    Close,
}

/// What the client asks the server to answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpenRequest {
    /// `udp` or `tcp`.
    pub proto: String,
    /// Bytes per request and per reply.
    pub size: usize,
    /// Bulk TCP streams the client will send into the sink (0: no sink).
    pub load_streams: u32,
}

/// Messages from the server.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Reply {
    Challenge {
        nonce: String,
    },
    Welcome {
        session_time_s: f64,
        server_mac: String,
    },
    Opened {
        data_port: u16,
        sink_port: Option<u16>,
    },
    Closed,
    Error {
        message: String,
    },
}

/// Why a message could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum ProtoError {
    #[error("control message of {len} bytes is over the {MAX_MESSAGE}-byte limit")]
    Oversized { len: usize },
    #[error("control message is not valid: {0}")]
    Malformed(String),
    #[error("control connection closed by the peer")]
    Closed,
    #[error("control connection: no message within the time limit")]
    TimedOut,
    #[error("control connection: {0}")]
    Io(#[source] std::io::Error),
}

fn io_error(e: std::io::Error) -> ProtoError {
    match e.kind() {
        std::io::ErrorKind::UnexpectedEof => ProtoError::Closed,
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => ProtoError::TimedOut,
        _ => ProtoError::Io(e),
    }
}

/// Writes one framed message.
pub fn write_message<T: Serialize>(w: &mut impl Write, msg: &T) -> Result<(), ProtoError> {
    let body = serde_json::to_vec(msg).map_err(|e| ProtoError::Malformed(e.to_string()))?;
    if body.len() > MAX_MESSAGE {
        return Err(ProtoError::Oversized { len: body.len() });
    }
    let mut frame = Vec::with_capacity(4 + body.len());
    frame.extend_from_slice(&(body.len() as u32).to_be_bytes());
    frame.extend_from_slice(&body);
    w.write_all(&frame).map_err(io_error)?;
    w.flush().map_err(io_error)
}

/// Reads the body of one framed message, refusing oversized lengths before reading them.
pub fn read_frame(r: &mut impl Read) -> Result<Vec<u8>, ProtoError> {
    let mut len = [0u8; 4];
    r.read_exact(&mut len).map_err(io_error)?;
    let len = u32::from_be_bytes(len) as usize;
    if len > MAX_MESSAGE {
        return Err(ProtoError::Oversized { len });
    }
    let mut body = vec![0u8; len];
    r.read_exact(&mut body).map_err(io_error)?;
    Ok(body)
}

/// Decodes a message body.
pub fn decode<T: for<'de> Deserialize<'de>>(body: &[u8]) -> Result<T, ProtoError> {
    serde_json::from_slice(body).map_err(|e| {
        let shown: String = String::from_utf8_lossy(body).chars().take(60).collect();
        ProtoError::Malformed(format!("{e} in {shown:?}"))
    })
}

/// Reads and decodes one message.
pub fn read_message<T: for<'de> Deserialize<'de>>(r: &mut impl Read) -> Result<T, ProtoError> {
    decode(&read_frame(r)?)
}

/// The version a hello of any protocol version names (`None`: not a hello, or no
/// version in it), so another version is refused by name rather than as malformed.
pub fn hello_version(body: &[u8]) -> Option<u64> {
    let v: serde_json::Value = serde_json::from_slice(body).ok()?;
    if v.get("type")?.as_str()? != "hello" {
        return None;
    }
    v.get("version")?.as_u64()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn messages_round_trip_through_frames() {
        let msgs = [
            Request::Hello { version: VERSION },
            Request::Auth {
                client_nonce: "00ff".into(),
                mac: "ab".into(),
            },
            Request::Open(OpenRequest {
                proto: "udp".into(),
                size: 64,
                load_streams: 3,
            }),
            Request::Close,
        ];
        for m in msgs {
            let mut buf = Vec::new();
            write_message(&mut buf, &m).unwrap();
            assert_eq!(
                u32::from_be_bytes(buf[..4].try_into().unwrap()) as usize,
                buf.len() - 4
            );
            let back: Request = read_message(&mut &buf[..]).unwrap();
            assert_eq!(back, m);
        }
        let mut buf = Vec::new();
        write_message(
            &mut buf,
            &Reply::Error {
                message: "x".into(),
            },
        )
        .unwrap();
        assert!(String::from_utf8_lossy(&buf).contains(r#""type":"error""#));
    }

    #[test]
    fn oversized_lengths_are_refused_before_reading_the_body() {
        let frame = (MAX_MESSAGE as u32 + 1).to_be_bytes();
        let e = read_frame(&mut &frame[..]).unwrap_err();
        assert!(
            matches!(e, ProtoError::Oversized { len } if len == MAX_MESSAGE + 1),
            "{e}"
        );
        assert!(e.to_string().contains("4096-byte limit"), "{e}");
    }

    #[test]
    fn unknown_fields_and_types_are_malformed() {
        for body in [
            &br#"{"type":"hello","version":2,"x":1}"#[..],
            br#"{"type":"hello","token":"t","version":2}"#,
            br#"{"type":"shell","cmd":"rm"}"#,
            b"\xff\xfe",
        ] {
            assert!(matches!(
                decode::<Request>(body),
                Err(ProtoError::Malformed(_))
            ));
        }
    }

    #[test]
    fn a_hello_of_any_version_tells_its_version() {
        assert_eq!(
            hello_version(br#"{"type":"hello","token":"t","version":1}"#),
            Some(1)
        );
        assert_eq!(hello_version(br#"{"type":"hello","version":2}"#), Some(2));
        assert_eq!(hello_version(br#"{"type":"close"}"#), None);
        assert_eq!(hello_version(br#"{"type":"hello","version":"x"}"#), None);
        assert_eq!(hello_version(b"\xff"), None);
    }

    proptest! {
        #[test]
        fn random_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..300)) {
            let _ = read_message::<Request>(&mut &data[..]);
            let _ = decode::<Reply>(&data);
            let _ = hello_version(&data);
        }
    }
}
