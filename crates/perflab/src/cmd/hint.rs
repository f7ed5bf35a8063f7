//! The commands perflab tells a person to run next (`perflab run --resume 7`, `perflab
//! show 7`) must reach the same database: when `--db` was given they repeat it, quoted for
//! a POSIX shell so that a path with spaces or quotes pastes back as it was.

use crate::cli::Global;

/// ` --db PATH` when `--db` was given, else nothing (the same default applies again).
pub fn db_flag(g: &Global) -> String {
    match &g.db {
        None => String::new(),
        Some(db) => {
            let text = db.to_string_lossy();
            // A value starting with `-` would read as a flag after `--db `.
            if text.starts_with('-') {
                format!(" --db={}", shell_quote(&text))
            } else {
                format!(" --db {}", shell_quote(&text))
            }
        }
    }
}

/// `text` as one word of a POSIX shell: as is when it has only characters no shell
/// treats specially, else in single quotes (a `'` inside becomes `'\''`).
pub fn shell_quote(text: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_-./:@%+,=".contains(c);
    if !text.is_empty() && text.chars().all(plain) {
        return text.to_string();
    }
    format!("'{}'", text.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn global(db: Option<&str>) -> Global {
        Global {
            db: db.map(PathBuf::from),
            sysroot: None,
            journal: None,
        }
    }

    #[test]
    fn repeats_db_only_when_given_and_quotes_it() {
        assert_eq!(db_flag(&global(None)), "");
        assert_eq!(db_flag(&global(Some("/tmp/r.db"))), " --db /tmp/r.db");
        assert_eq!(
            db_flag(&global(Some("/tmp/my results/it's.db"))),
            r" --db '/tmp/my results/it'\''s.db'"
        );
        assert_eq!(db_flag(&global(Some("-odd.db"))), " --db=-odd.db");
        assert_eq!(
            db_flag(&global(Some("postgres://u@h/perflab?sslmode=disable&x=1"))),
            " --db 'postgres://u@h/perflab?sslmode=disable&x=1'"
        );
    }

    #[test]
    fn quoting_round_trips_through_a_shell() {
        for text in [
            "plain",
            "a b",
            "it's",
            "$HOME",
            "`x`",
            "a\"b",
            "tab\there",
            "",
        ] {
            let out = std::process::Command::new("sh")
                .arg("-c")
                .arg(format!("printf %s {}", shell_quote(text)))
                .output()
                .unwrap();
            assert_eq!(String::from_utf8(out.stdout).unwrap(), text, "{text:?}");
        }
    }
}
