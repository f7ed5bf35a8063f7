//! Every `perflab …` command line the documentation shows works as written (issue 31 item
//! 18: docs/exec.md and presets/irq-fill.toml said `-p dmatest=memset`; the parameter is
//! `transfer`). The lines are taken from docs/*.md, README.md and the presets' comments:
//! fenced code blocks (a line starting `perflab` or `sudo perflab`) and inline code
//! (`` `perflab …` ``). A literal `run` goes through `--dry-run`; any other command, and a
//! synopsis (`perflab show RUN --pair A,B`, `[--max-reps N]`, `json|csv`), through argument
//! parsing only (PERFLAB_CHECK_ARGS_ONLY), its placeholders given sample values. Lines that
//! are not commands, or commands that cannot be dry-run here, are listed with the reason.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common;

use common::{text, Lab};

/// Text starting `perflab` that is not a command line, and why.
const NOT_COMMANDS: &[(&str, &str)] = &[(
    "perflab trace (",
    "docs/trace.md quotes lines of `crosscheck trace`'s output",
)];

/// Literal `run` commands checked by parsing only, and why a dry run cannot take them here.
const PARSE_ONLY: &[(&str, &str)] = &[
    (
        "trace:./spans.toml",
        "names a span file of the reader's own, not in the repository",
    ),
    (
        "--db postgres://",
        "needs the team's PostgreSQL server the example names",
    ),
    ("--resume", "resumes a run the reader's database holds"),
];

/// Placeholders of synopses and the sample values they are checked with.
const PLACEHOLDERS: &[(&str, &str)] = &[
    ("RUN", "1"),
    ("RUN_A", "1"),
    ("RUN_B", "2"),
    ("RUNS", "1"),
    ("OLD", "1"),
    ("NEW", "2"),
    ("ID", "1"),
    ("N", "10"),
    ("SEQ", "1"),
    ("A", "0"),
    ("B", "1"),
    ("A,B", "0,1"),
    ("FILE", "run.json"),
    ("NAME", "fio"),
    ("PCT", "5"),
    ("TIME", "10m"),
    ("SHELL", "bash"),
    ("URL", "/tmp/other.db"),
    ("J", "journal.json"),
    ("L", "label"),
    ("T", "0123456789abcdef0123456789abcdef"),
    ("ADDR", "10.0.0.2"),
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The documents that show commands: (path relative to the root, text).
fn documents() -> Vec<(String, String)> {
    let mut paths: Vec<String> = vec!["README.md".into()];
    for dir in ["docs", "presets"] {
        let mut names: Vec<String> = std::fs::read_dir(root().join(dir))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".md") || n.ends_with(".toml"))
            .map(|n| format!("{dir}/{n}"))
            .collect();
        names.sort();
        paths.extend(names);
    }
    paths
        .into_iter()
        .map(|p| {
            let t = std::fs::read_to_string(root().join(&p)).unwrap();
            (p, t)
        })
        .collect()
}

/// Command text in `doc`: lines of fenced blocks, and inline code spans elsewhere (with
/// `true`: prose may name a command or a flag rather than show a command line).
fn command_texts(doc: &str) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let mut prose = String::new();
    let mut fenced = false;
    let mut lines = doc.lines();
    while let Some(line) = lines.next() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            prose.push('\n');
            continue;
        }
        if !fenced {
            prose.push_str(line);
            prose.push('\n');
            continue;
        }
        let l = line.trim().trim_start_matches("$ ");
        // `PERFLAB_LIBCUDA=… perflab run …`: the assignments are the shell's.
        let l = l
            .split(' ')
            .skip_while(|w| is_assignment(w))
            .collect::<Vec<_>>()
            .join(" ");
        let l = l.as_str();
        if l.starts_with("perflab ") || l.starts_with("sudo perflab ") {
            let mut cmd = l.to_string();
            while let Some(head) = cmd.strip_suffix('\\') {
                cmd = format!("{} {}", head.trim_end(), lines.next().unwrap_or("").trim());
            }
            out.push((cmd, false));
        }
    }
    // Inline code may wrap onto the next line.
    for (i, span) in prose.split('`').enumerate() {
        let span = span.split_whitespace().collect::<Vec<_>>().join(" ");
        if i % 2 == 1 && (span.starts_with("perflab ") || span.starts_with("sudo perflab ")) {
            out.push((span, true));
        }
    }
    out
}

/// `NAME=value` before a command: an environment variable for it.
fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty() && name.chars().all(|c| c.is_ascii_uppercase() || c == '_')
    })
}

/// Shell words of `text` up to a comment, each with whether it was quoted; the text is cut
/// into commands at `;`, `&&`, a spaced `|` and redirections.
fn commands(text: &str) -> Vec<Vec<(String, bool)>> {
    let mut cmds = vec![Vec::new()];
    let mut word = String::new();
    let (mut quoted, mut in_word) = (false, false);
    let mut chars = text.chars().peekable();
    let mut quote: Option<char> = None;
    let end_word =
        |cmds: &mut Vec<Vec<(String, bool)>>, w: &mut String, q: &mut bool, iw: &mut bool| {
            if *iw {
                cmds.last_mut().unwrap().push((std::mem::take(w), *q));
            }
            *q = false;
            *iw = false;
        };
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                quoted = true;
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                end_word(&mut cmds, &mut word, &mut quoted, &mut in_word)
            }
            (None, '#') if !in_word => break,
            (None, ';' | '>') => {
                end_word(&mut cmds, &mut word, &mut quoted, &mut in_word);
                cmds.push(Vec::new());
                if c == '>' {
                    // The file written to is not part of the command.
                    while chars.peek().is_some_and(|c| c.is_whitespace()) {
                        chars.next();
                    }
                    while chars.peek().is_some_and(|c| !c.is_whitespace()) {
                        chars.next();
                    }
                }
            }
            (None, '|' | '&') if !in_word => {
                end_word(&mut cmds, &mut word, &mut quoted, &mut in_word);
                while chars.peek().is_some_and(|n| *n == c) {
                    chars.next();
                }
                cmds.push(Vec::new());
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    end_word(&mut cmds, &mut word, &mut quoted, &mut in_word);
    cmds.into_iter()
        .map(|mut c| {
            if c.first().is_some_and(|(w, _)| w == "sudo") {
                c.remove(0);
            }
            c
        })
        .filter(|c| c.first().is_some_and(|(w, _)| w == "perflab"))
        .collect()
}

/// The arguments after `perflab` with a synopsis made concrete, and whether it was one.
fn concrete(words: &[(String, bool)]) -> Result<(Vec<String>, bool), String> {
    let mut out = Vec::new();
    let mut synopsis = false;
    let mut alternative = false;
    for (w, quoted) in &words[1..] {
        if *quoted {
            if !alternative {
                out.push(w.clone());
            }
            continue;
        }
        // `[--format json|csv]`, `[--token-file FILE | --token T]`: the first choice.
        let mut w = w.as_str();
        if let Some(rest) = w.strip_prefix('[') {
            w = rest;
            synopsis = true;
            alternative = false;
        }
        let closes = w.ends_with(']');
        w = w.trim_end_matches(']');
        if w == "|" {
            alternative = true;
            continue;
        }
        let skip = alternative;
        if closes {
            alternative = false;
        }
        if skip || w.is_empty() || w == "…" || w == "..." {
            synopsis |= !w.is_empty();
            continue;
        }
        let w = w.trim_end_matches("...");
        let w = if w.contains('|') && !w.contains('=') {
            synopsis = true;
            w.split('|').next().unwrap()
        } else {
            w
        };
        let upper = w.chars().any(|c| c.is_ascii_uppercase())
            && w.chars()
                .all(|c| c.is_ascii_uppercase() || c == '_' || c == ',');
        if upper {
            let v = PLACEHOLDERS
                .iter()
                .find(|(p, _)| *p == w)
                .ok_or_else(|| format!("placeholder {w} has no sample value in PLACEHOLDERS"))?;
            out.push(v.1.to_string());
            synopsis = true;
        } else {
            out.push(w.to_string());
        }
    }
    Ok((out, synopsis))
}

/// How a documented command is checked.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Check {
    /// A `run` that names what to run: `--dry-run`.
    DryRun,
    /// Argument parsing only (PERFLAB_CHECK_ARGS_ONLY).
    Parse,
    /// Prose naming a command or its flag (`perflab show`, `perflab report --html`): the
    /// subcommand exists and its `--help` lists every flag named.
    Mention,
}

/// A machine of 32 CPUs: the examples name CPUs of larger machines than this one
/// (`--anchor 4`, `--partners 8,24-27`, `cpu_b=1,2,3`).
const BIG_MACHINE: &str = "power-smt4";

struct Checker {
    lab: Lab,
    dma_root: PathBuf,
    big_root: PathBuf,
}

impl Checker {
    fn new() -> Self {
        let lab = Lab::new();
        let dma_root = lab.fixture_copy("dmatest-4chan");
        let big_root = lab.fixture_copy(BIG_MACHINE);
        Self {
            lab,
            dma_root,
            big_root,
        }
    }

    fn perflab(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_perflab"));
        cmd.env("PERFLAB_DB", self.lab.db())
            .env("PERFLAB_JOURNAL", self.lab.journal())
            .env("PERFLAB_LIBCUDA", perflab_testkit::cuda::standin_library())
            .env("PERFLAB_SERVE_TOKEN", "0123456789abcdef0123456789abcdef")
            .current_dir(root());
        cmd
    }

    /// `perflab ARGS` as `how` checks it: `Err` with perflab's message.
    fn attempt(&self, args: &[String], how: Check) -> Result<(), String> {
        let o = match how {
            Check::DryRun => {
                let mut args = args.to_vec();
                if !args.iter().any(|a| a == "--dry-run") {
                    args.push("--dry-run".into());
                }
                let mut cmd = self.perflab();
                if args.iter().any(|a| a.contains("dmatest")) {
                    // A machine with DMA channels: this one has none.
                    cmd.arg("--sysroot").arg(&self.dma_root);
                }
                let o = cmd.args(&args).output().expect("run perflab");
                let (_, err) = text(&o);
                if err.contains("is not online on this machine") {
                    let mut cmd = self.perflab();
                    cmd.arg("--sysroot").arg(&self.big_root);
                    cmd.args(&args).output().expect("run perflab")
                } else {
                    o
                }
            }
            Check::Parse => self
                .perflab()
                .env("PERFLAB_CHECK_ARGS_ONLY", "1")
                .args(args)
                .output()
                .expect("run perflab"),
            Check::Mention => return self.mentioned(args),
        };
        if o.status.success() {
            return Ok(());
        }
        Err(format!(
            "exit {:?}: {}",
            o.status.code(),
            text(&o).1.trim_end()
        ))
    }

    /// The subcommand path of `args` exists and its help lists each `--flag` of `args`.
    fn mentioned(&self, args: &[String]) -> Result<(), String> {
        let path: Vec<&String> = args.iter().take_while(|a| !a.starts_with('-')).collect();
        let o = self
            .perflab()
            .args(&path)
            .arg("--help")
            .output()
            .expect("run perflab");
        let (help, err) = text(&o);
        if !o.status.success() {
            return Err(format!("no such command: {}", err.trim_end()));
        }
        match args
            .iter()
            .find(|a| a.starts_with("--") && !help.contains(a.as_str()))
        {
            Some(flag) => Err(format!(
                "{flag} is not in the help of `perflab {}`",
                path.iter()
                    .map(|p| p.as_str())
                    .collect::<Vec<_>>()
                    .join(" ")
            )),
            None => Ok(()),
        }
    }

    /// One documented command: `Err` says where it is and why it fails.
    fn check(
        &self,
        doc: &str,
        shown: &str,
        inline: bool,
        words: &[(String, bool)],
    ) -> Result<(), String> {
        let (args, synopsis) = concrete(words).map_err(|e| format!("{doc}: `{shown}`: {e}"))?;
        let line = args.join(" ");
        let is_run = args.first().map(String::as_str) == Some("run");
        // A study or --workload: something to run.
        let names_what = args.get(1).is_some_and(|a| !a.starts_with('-'))
            || args.iter().any(|a| a == "--workload");
        let how = if !is_run || synopsis || PARSE_ONLY.iter().any(|(m, _)| line.contains(m)) {
            Check::Parse
        } else if names_what {
            Check::DryRun
        } else {
            Check::Mention
        };
        let result = match self.attempt(&args, how) {
            // Prose that names a command or a flag without its values.
            Err(e)
                if inline
                    && how == Check::Parse
                    && (e.contains("required arguments were not provided")
                        || e.contains("but none was supplied")) =>
            {
                self.attempt(&args, Check::Mention)
            }
            r => r,
        };
        result.map_err(|e| format!("{doc}: `{shown}` ({how:?} of `perflab {line}`): {e}"))
    }
}

#[test]
fn every_documented_command_line_works_as_written() {
    let checker = Checker::new();
    let mut checked = 0;
    let mut failures = Vec::new();
    for (doc, text) in documents() {
        for (shown, inline) in command_texts(&text) {
            if NOT_COMMANDS.iter().any(|(p, _)| shown.contains(p)) {
                continue;
            }
            for words in commands(&shown) {
                checked += 1;
                if let Err(e) = checker.check(&doc, &shown, inline, &words) {
                    failures.push(e);
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {checked} documented command(s) fail:\n{}",
        failures.len(),
        failures.join("\n")
    );
    // README, docs and presets show about 250.
    assert!(checked > 200, "only {checked} checked");
    let lab = &checker.lab;
    assert!(
        !lab.db().exists() || text(&lab.run(&["ls"])).0.starts_with("no runs"),
        "a documented command stored a run"
    );
}

/// The extraction finds what a reader sees as a command, and nothing else.
#[test]
fn commands_are_read_as_a_shell_reads_them() {
    let words = |t: &str| -> Vec<Vec<String>> {
        commands(t)
            .into_iter()
            .map(|c| c.into_iter().map(|(w, _)| w).collect())
            .collect()
    };
    assert_eq!(
        words("sudo perflab run x -p 'regex=a b' # note"),
        [["perflab", "run", "x", "-p", "regex=a b"]]
    );
    assert_eq!(
        words("perflab ls; perflab show 12 | head > f"),
        [vec!["perflab", "ls"], vec!["perflab", "show", "12"]]
    );
    assert_eq!(words("perflab man | man -l -"), [["perflab", "man"]]);
    let c = &commands("perflab export RUN --format json|csv [-o FILE]")[0];
    assert_eq!(
        concrete(c).unwrap(),
        (
            "export 1 --format json -o run.json"
                .split(' ')
                .map(String::from)
                .collect(),
            true
        )
    );
    let c = &commands("perflab serve [--listen ADDR] [--token-file FILE | --token T]")[0];
    assert_eq!(
        concrete(c).unwrap().0.join(" "),
        "serve --listen 10.0.0.2 --token-file run.json"
    );
    let c = &commands("perflab run --workload dmatest -p transfer=memset")[0];
    assert!(!concrete(c).unwrap().1);
    assert_eq!(
        command_texts("see `perflab run\n--quick` and\n```\n$ X_Y=1 perflab ls \\\n  --all\n```\n"),
        [
            ("perflab ls --all".to_string(), false),
            ("perflab run --quick".to_string(), true)
        ]
    );
}
