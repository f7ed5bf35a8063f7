//! A run as the command line names it: its number, `last` (the newest run, the first line
//! of `perflab ls`), or `last~N` (N runs before it, as git counts commits back). Every
//! argument that takes a run parses it here ([`RunRef`]'s `FromStr`, which clap calls)
//! and every command resolves it here ([`resolve`]), so `show last` and `compare last~1
//! last` mean the same runs everywhere (issue 34 item 9: `show last` answered "invalid
//! digit found in string").

use std::str::FromStr;

use perflab_store::{RunId, Store};

use crate::exit::input;

/// A run named on the command line, not yet looked up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunRef {
    /// The run's number.
    Id(RunId),
    /// The run `n` before the newest (`last` is `Last(0)`).
    Last(u32),
}

const EXPECTED: &str = "expected a run number (`perflab ls` lists them), `last` or `last~N`";

impl FromStr for RunRef {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let back = match text.strip_prefix("last") {
            Some("") => return Ok(RunRef::Last(0)),
            Some(rest) => rest.strip_prefix('~'),
            None => {
                // Any number: the store says when it holds no such run.
                return match text.parse::<RunId>() {
                    Ok(id) if id >= 0 => Ok(RunRef::Id(id)),
                    _ => Err(format!("{text:?}: {EXPECTED}")),
                };
            }
        };
        // `last~` alone is git's `last~1`; a sign or a space is not a count.
        match back {
            Some("") => Ok(RunRef::Last(1)),
            Some(n) if n.bytes().all(|b| b.is_ascii_digit()) => n
                .parse()
                .map(RunRef::Last)
                .map_err(|_| format!("{text:?}: {n} runs back is more than any database holds")),
            _ => Err(format!("{text:?}: {EXPECTED}")),
        }
    }
}

impl std::fmt::Display for RunRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunRef::Id(id) => write!(f, "{id}"),
            RunRef::Last(0) => f.write_str("last"),
            RunRef::Last(n) => write!(f, "last~{n}"),
        }
    }
}

/// The run `r` names in `store`. A number is taken as it is (the command's own read of
/// it says when there is no such run); `last~N` counts back over every run the store
/// holds, those whose rows do not read back included, so the count matches `ls`'s ids.
pub fn resolve(store: &Store, r: RunRef) -> anyhow::Result<RunId> {
    let n = match r {
        RunRef::Id(id) => return Ok(id),
        RunRef::Last(n) => n,
    };
    let (runs, bad) = store.readable_runs()?;
    let mut ids: Vec<RunId> = runs
        .iter()
        .map(|r| r.id)
        .chain(bad.iter().map(|(id, _)| *id))
        .collect();
    ids.sort_unstable_by(|a, b| b.cmp(a));
    ids.dedup();
    ids.get(n as usize).copied().ok_or_else(|| {
        input(match ids.len() {
            0 => format!("{r}: there are no runs in {}", store.location()),
            held => format!(
                "{r}: {} holds {held} run(s), so the oldest is last~{}",
                store.location(),
                held - 1
            ),
        })
    })
}

/// Each of `refs` resolved, in order.
pub fn resolve_all(store: &Store, refs: &[RunRef]) -> anyhow::Result<Vec<RunId>> {
    refs.iter().map(|r| resolve(store, *r)).collect()
}

#[cfg(test)]
mod tests {
    use super::RunRef::{self, *};

    #[test]
    fn numbers_last_and_last_n_parse_and_print_back() {
        for (text, want) in [
            ("7", Id(7)),
            ("0", Id(0)),
            ("last", Last(0)),
            ("last~0", Last(0)),
            ("last~1", Last(1)),
            ("last~", Last(1)),
            ("last~12", Last(12)),
        ] {
            assert_eq!(text.parse::<RunRef>(), Ok(want), "{text}");
        }
        assert_eq!(Last(3).to_string(), "last~3");
        assert_eq!(Last(0).to_string(), "last");
    }

    /// Every argument named RUN, in every subcommand at any depth, takes `last~N`: a new
    /// one typed as a bare number fails here.
    #[test]
    fn every_run_argument_takes_last() {
        use clap::error::ErrorKind;
        use clap::{CommandFactory, Parser};
        fn walk(cmd: &clap::Command, path: Vec<String>, found: &mut Vec<String>) {
            for arg in cmd.get_arguments() {
                let names = arg.get_value_names().unwrap_or_default();
                if !names.iter().any(|n| n.as_str() == "RUN") {
                    continue;
                }
                let mut argv = path.clone();
                if let Some(long) = arg.get_long() {
                    argv.push(format!("--{long}"));
                }
                argv.push("last~2".into());
                // Other required arguments may be missing; the value must not be refused.
                if let Err(e) = crate::cli::Cli::try_parse_from(&argv) {
                    assert!(
                        !matches!(
                            e.kind(),
                            ErrorKind::ValueValidation | ErrorKind::InvalidValue
                        ),
                        "{argv:?}: {e}"
                    );
                }
                found.push(format!("{} {}", path.join(" "), arg.get_id()));
            }
            for sub in cmd.get_subcommands() {
                let mut p = path.clone();
                p.push(sub.get_name().to_string());
                walk(sub, p, found);
            }
        }
        let mut found = Vec::new();
        walk(
            &crate::cli::Cli::command(),
            vec!["perflab".into()],
            &mut found,
        );
        for want in [
            "show run",
            "export run",
            "report runs",
            "compare runs",
            "push runs",
            "run resume",
        ] {
            assert!(found.iter().any(|f| f.ends_with(want)), "{want}: {found:?}");
        }
        let cli =
            crate::cli::Cli::try_parse_from(["perflab", "compare", "last~1", "last"]).unwrap();
        match cli.command {
            crate::cli::Command::Compare(a) => assert_eq!(a.runs, vec![Last(1), Last(0)]),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn anything_else_is_one_line_naming_the_forms() {
        for text in [
            "", "x", "-1", "lastt", "last-1", "last~x", "last~-1", "last~ 1", "1.5",
        ] {
            let e = text.parse::<RunRef>().unwrap_err();
            assert!(!e.contains('\n'), "{e}");
            assert!(e.contains("`last~N`"), "{text}: {e}");
        }
        let far = "last~99999999999".parse::<RunRef>().unwrap_err();
        assert!(far.contains("more than any database holds"), "{far}");
    }
}
