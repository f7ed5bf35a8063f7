//! Which hosts a fleet runs on: `--hosts h1,h2` or a hosts file, each entry an ssh
//! destination as the user's `ssh` understands it (an alias from ~/.ssh/config,
//! `user@host`, `host`), optionally named: `arm-board=root@10.0.0.7`.

use std::io::BufRead;

/// One host of a fleet.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Host {
    /// What reports and progress call it; the destination unless named.
    pub name: String,
    /// What `ssh` is given.
    pub dest: String,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum HostsError {
    #[error("no hosts given (--hosts h1,h2 or --hosts-file FILE)")]
    Empty,
    #[error("host {0:?}: {1}")]
    Bad(String, &'static str),
    #[error("host name {0:?} appears twice; name them apart, e.g. a={0} b={0}")]
    Twice(String),
    #[error("hosts file line {line}: {why}")]
    Line { line: usize, why: String },
}

/// Parses one entry. A destination must not start with `-` (ssh would read it as an
/// option) nor hold whitespace or shell metacharacters (it is never given to a shell, but
/// such a name is a typo, not a host).
pub fn parse_entry(entry: &str) -> Result<Host, HostsError> {
    let entry = entry.trim();
    let (name, dest, named) = match entry.split_once('=') {
        Some((n, d)) => (n.trim(), d.trim(), true),
        None => (entry, entry, false),
    };
    let bad = |why| Err(HostsError::Bad(entry.to_string(), why));
    if dest.is_empty() || name.is_empty() {
        return bad("empty name or destination");
    }
    if dest.starts_with('-') || name.starts_with('-') {
        return bad("a name or destination cannot start with '-'");
    }
    let allowed = |c: char| c.is_ascii_alphanumeric() || "._-@:[]%".contains(c);
    if !dest.chars().all(allowed) {
        return bad("a destination holds only letters, digits and . _ - @ : [ ] %");
    }
    if named
        && !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-@".contains(c))
    {
        return bad("a name holds only letters, digits and . _ - @");
    }
    Ok(Host {
        name: name.to_string(),
        dest: dest.to_string(),
    })
}

/// `h1,h2,h3`.
pub fn parse_list(list: &str) -> Result<Vec<Host>, HostsError> {
    let hosts = list
        .split(',')
        .filter(|e| !e.trim().is_empty())
        .map(parse_entry)
        .collect::<Result<Vec<_>, _>>()?;
    check(hosts)
}

/// A hosts file: one entry per line; blank lines and `#` comments are skipped.
pub fn parse_file(r: impl BufRead) -> Result<Vec<Host>, HostsError> {
    let mut hosts = Vec::new();
    for (i, line) in r.lines().enumerate() {
        let line = line.map_err(|e| HostsError::Line {
            line: i + 1,
            why: e.to_string(),
        })?;
        let text = line.split('#').next().unwrap_or("").trim();
        if text.is_empty() {
            continue;
        }
        hosts.push(parse_entry(text).map_err(|e| HostsError::Line {
            line: i + 1,
            why: e.to_string(),
        })?);
    }
    check(hosts)
}

fn check(hosts: Vec<Host>) -> Result<Vec<Host>, HostsError> {
    if hosts.is_empty() {
        return Err(HostsError::Empty);
    }
    for (i, h) in hosts.iter().enumerate() {
        if hosts[..i].iter().any(|o| o.name == h.name) {
            return Err(HostsError::Twice(h.name.clone()));
        }
    }
    Ok(hosts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn lists_and_names() {
        let h = parse_list("h1, arm=root@10.0.0.7,[fe80::1%eth0]").unwrap();
        assert_eq!(
            h[0],
            Host {
                name: "h1".into(),
                dest: "h1".into()
            }
        );
        assert_eq!(h[1].name, "arm");
        assert_eq!(h[1].dest, "root@10.0.0.7");
        assert_eq!(h[2].dest, "[fe80::1%eth0]");
    }

    #[test]
    fn bad_entries_are_named() {
        assert_eq!(parse_list(""), Err(HostsError::Empty));
        for entry in ["h1,-oProxyCommand=x", "-x", "a=-x"] {
            let e = parse_list(entry).unwrap_err();
            assert!(e.to_string().contains("cannot start with '-'"), "{e}");
        }
        let e = parse_list("h1,h 2").unwrap_err();
        assert!(e.to_string().contains("\"h 2\""), "{e}");
        assert!(parse_list("a;rm -rf /").is_err());
        assert_eq!(parse_list("h1,h1"), Err(HostsError::Twice("h1".into())));
    }

    #[test]
    fn files_skip_comments_and_name_the_line() {
        let text = "# lab\nh1\n\nb=user@b.lab  # the ARM board\n";
        let h = parse_file(text.as_bytes()).unwrap();
        assert_eq!(h.len(), 2);
        assert_eq!(h[1].dest, "user@b.lab");
        let e = parse_file("h1\n-x\n".as_bytes()).unwrap_err();
        assert!(e.to_string().starts_with("hosts file line 2:"), "{e}");
    }

    proptest! {
        #[test]
        fn never_panics(s in ".{0,80}") {
            let _ = parse_list(&s);
            let _ = parse_file(s.as_bytes());
        }
    }
}
