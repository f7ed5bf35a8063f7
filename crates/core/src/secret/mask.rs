//! Recognising secrets in text that is not declared secret: `K=V` items whose name says
//! secret (`API_TOKEN`, `PGPASSWORD`, …) or whose value is a URL with a password, in an
//! `env` list or on a command line (what a knob's lock file records of its holder).
//! A value found is replaced by its fingerprint ([`super`]); a URL's password,
//! where only it is replaced, by `***`.

use super::{fingerprint, is_fingerprint, seal};

/// Words that make a name a secret's, matched anywhere in it, in any letter case.
const SECRET_WORDS: &[&str] = &[
    "TOKEN",
    "PASSWORD",
    "PASSWD",
    "SECRET",
    "KEY",
    "CREDENTIAL",
    "AUTH",
];

/// Whether a variable or parameter called `name` holds a secret by its name: it contains
/// TOKEN, PASSWORD, PASSWD, SECRET, KEY, CREDENTIAL or AUTH. Too wide rather than too
/// narrow: a `MONKEY=1` masked costs a reader a value, a token shown costs the token.
pub fn looks_secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    SECRET_WORDS.iter().any(|w| upper.contains(w))
}

/// Whether `value` holds a URL with a password: `scheme://user:password@host…`, or a
/// `password=` query parameter.
pub fn url_has_password(value: &str) -> bool {
    redact_url(value) != value
}

/// `text` with the password of every URL in it replaced by `***`: in the userinfo part
/// (`user:secret@host`) and in a `password=` query parameter. Text around the URL (a
/// `--db=` before it) is kept.
pub fn redact_url(text: &str) -> String {
    let Some((head, rest)) = text.split_once("://") else {
        return text.to_string();
    };
    // The authority ends at the first '/', '?' or '#'; the userinfo at its last '@'.
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let authority = match authority.rsplit_once('@') {
        Some((userinfo, host)) => match userinfo.split_once(':') {
            Some((user, _secret)) => format!("{user}:***@{host}"),
            None => format!("{userinfo}@{host}"),
        },
        None => authority.to_string(),
    };
    let tail = match tail.split_once('?') {
        Some((path, query)) => {
            let query: Vec<String> = query
                .split('&')
                .map(|kv| match kv.split_once('=') {
                    Some((k, _)) if k.eq_ignore_ascii_case("password") => format!("{k}=***"),
                    _ => kv.to_string(),
                })
                .collect();
            format!("{path}?{}", query.join("&"))
        }
        None => tail.to_string(),
    };
    format!("{head}://{authority}{tail}")
}

/// An `env` list (`K=V;K=V`) with each secret value sealed ([`seal`]): kept in this
/// process for the workload, its fingerprint in the text that is stored and printed.
pub fn seal_env(text: &str) -> String {
    replace_env(text, seal)
}

/// An `env` list with each secret value replaced by its fingerprint, for text that is
/// only shown.
pub fn mask_env(text: &str) -> String {
    replace_env(text, fingerprint)
}

fn replace_env(text: &str, hide: impl Fn(&str) -> String) -> String {
    if !text.contains('=') {
        return text.to_string();
    }
    text.split(';')
        .map(|item| match item.split_once('=') {
            Some((k, v)) if is_secret_item(k.trim(), v.trim()) => {
                format!("{}={}", k.trim(), hide(v.trim()))
            }
            _ => item.to_string(),
        })
        .collect::<Vec<_>>()
        .join(";")
}

fn is_secret_item(name: &str, value: &str) -> bool {
    !value.is_empty()
        && !is_fingerprint(value)
        && (looks_secret_name(name) || url_has_password(value))
}

/// A command line's words with every secret in them hidden: the word after a flag named
/// like a secret (`--token X`), the value of `K=V` words named like one (`-p token=X`,
/// `--password=X`), secret items of a `K=V;K=V` value (`-p env=…`), and URL passwords.
pub fn mask_command(words: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(words.len());
    let mut value_is_secret = false;
    for word in words {
        if value_is_secret {
            value_is_secret = false;
            out.push(hidden(word));
            continue;
        }
        let word = redact_url(word);
        let masked = match word.split_once('=') {
            Some((k, v)) if looks_secret_name(k) && !v.is_empty() => {
                format!("{k}={}", hidden(v))
            }
            // A value that is itself a `K=V;K=V` list (`-p env=…`, `-p args=…`).
            Some((k, v)) => format!("{k}={}", mask_env(v)),
            None => {
                value_is_secret = word.starts_with('-') && looks_secret_name(&word);
                word
            }
        };
        out.push(masked);
    }
    out
}

fn hidden(value: &str) -> String {
    if is_fingerprint(value) || value.contains("***") {
        value.to_string()
    } else {
        fingerprint(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split(' ').map(String::from).collect()
    }

    #[test]
    fn secret_names_and_url_passwords_are_recognised() {
        for name in [
            "API_TOKEN",
            "PGPASSWORD",
            "aws_secret_access_key",
            "Credentials",
        ] {
            assert!(looks_secret_name(name), "{name}");
        }
        for name in ["SIZE", "HUGE", "PATH", "cmd"] {
            assert!(!looks_secret_name(name), "{name}");
        }
        assert!(url_has_password("postgres://u:pw@h/db"));
        assert!(url_has_password("https://h/x?password=pw"));
        assert!(!url_has_password("postgres://u@h/db"));
        assert!(!url_has_password("plain"));
    }

    #[test]
    fn env_lists_hide_only_their_secrets() {
        let text = "HUGE=1; API_TOKEN = abc123 ;DB=postgres://me:pw@h/d;X=a=b";
        let m = mask_env(text);
        assert!(!m.contains("abc123") && !m.contains(":pw@"), "{m}");
        assert!(m.contains("HUGE=1") && m.contains("X=a=b"), "{m}");
        assert!(
            m.contains(&format!("API_TOKEN={}", fingerprint("abc123"))),
            "{m}"
        );
        // Masking twice changes nothing; text without items is left alone.
        assert_eq!(mask_env(&m), m);
        assert_eq!(mask_env("plain"), "plain");
        // Sealed values are found again in this process.
        let s = seal_env("K_SECRET=hunter2");
        let fp = s.strip_prefix("K_SECRET=").unwrap();
        assert_eq!(super::super::unseal(fp).as_deref(), Some("hunter2"));
    }

    #[test]
    fn command_lines_keep_their_shape_and_lose_their_secrets() {
        let line = "perflab run --workload netrr -p token=T0K3N -p peer=10.0.0.2:7700 \
                    --db postgres://alice:PASSW0RD@db/lab --token T0K3N2 --password=PW3 \
                    -p env=HUGE=1;MY_KEY=K3Y -ptoken=T0K3N3 --db=postgresql://b:PW4@h \
                    -p args=size=4K;auth=A5";
        let masked = mask_command(&words(line)).join(" ");
        for secret in ["T0K3N", "PASSW0RD", "PW3", "K3Y", "PW4", "A5"] {
            assert!(!masked.contains(secret), "{secret} in {masked}");
        }
        for kept in [
            "perflab run --workload netrr",
            "peer=10.0.0.2:7700",
            "postgres://alice:***@db/lab",
            "HUGE=1",
            "--db=postgresql://b:***@h",
            "args=size=4K;auth=hmac:",
        ] {
            assert!(masked.contains(kept), "{kept} not in {masked}");
        }
        assert!(
            masked.contains(&format!("token={}", fingerprint("T0K3N"))),
            "{masked}"
        );
        assert_eq!(mask_command(&words(&masked)).join(" "), masked);
    }
}
