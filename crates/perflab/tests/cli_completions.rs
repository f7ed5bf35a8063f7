//! Shell completions and the manual page, generated from the clap definitions: every
//! subcommand that `perflab --help` lists is in them, the scripts parse in their shells
//! and the page is roff that `groff` and `man` read without a warning. Tools missing on
//! this machine are skipped with a line saying so.

use crate::common;

use std::process::Command;

use common::{text, Lab};

/// The subcommands `perflab --help` lists (help's own `help` aside), and those of
/// `perflab fleet --help`.
pub(crate) fn subcommands(lab: &Lab, args: &[&str]) -> Vec<String> {
    let mut args = args.to_vec();
    args.push("--help");
    let (out, _) = text(&lab.run(&args));
    let section = out
        .split("Commands:\n")
        .nth(1)
        .unwrap_or_else(|| panic!("no Commands: section in {out}"));
    let names: Vec<String> = section
        .lines()
        .take_while(|l| l.starts_with("  "))
        // Names start at column 2; wrapped help continues deeper in.
        .filter(|l| l.as_bytes().get(2).is_some_and(|b| *b != b' '))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .filter(|n| n != "help")
        .collect();
    assert!(names.len() >= 3, "{names:?} from {out}");
    names
}

fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn bash_completion_offers_every_subcommand_and_parses() {
    let lab = Lab::new();
    let top = subcommands(&lab, &[]);
    assert!(top.contains(&"completions".to_string()) && top.contains(&"man".to_string()));
    let fleet = subcommands(&lab, &["fleet"]);
    let o = lab.run(&["completions", "bash"]);
    let (script, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(err.is_empty(), "nothing but the script: {err}");
    // The words offered after `perflab`: its flags and subcommands.
    let top_words: Vec<&str> = script
        .lines()
        .map(str::trim)
        .find_map(|l| l.strip_prefix("opts=\"-h -V "))
        .unwrap_or_else(|| panic!("no top-level word list in {script}"))
        .trim_end_matches('"')
        .split(' ')
        .collect();
    for name in &top {
        assert!(
            top_words.contains(&name.as_str()),
            "{name} not in {top_words:?}"
        );
        assert!(script.contains(&format!("perflab,{name})")), "{name}");
    }
    for name in &fleet {
        assert!(
            script.contains(&format!("fleet__subcmd__{name}\"")),
            "fleet {name}"
        );
    }
    // Flags of a subcommand are completed too.
    assert!(script.contains("--dry-run") && script.contains("--html"));
    // It is a bash script bash accepts, and completes `perflab rep` to `report`.
    let file = lab.dir.path().join("perflab.bash");
    std::fs::write(&file, &script).unwrap();
    let o = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "source '{}'; COMP_WORDS=(perflab rep); COMP_CWORD=1; _perflab perflab rep perflab; \
             printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            file.display()
        ))
        .output()
        .unwrap();
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert_eq!(out.trim(), "report", "{err}");
}

/// What bash offers for the words after `perflab` (the last one being completed).
fn bash_completes(lab: &Lab, words: &[&str]) -> Vec<String> {
    let o = lab.run(&["completions", "bash"]);
    let file = lab.dir.path().join("perflab.bash");
    std::fs::write(&file, &o.stdout).unwrap();
    let line: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let o = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "source '{}'; COMP_WORDS=(perflab {}); COMP_CWORD={}; \
             _perflab perflab '{}' '{}'; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            file.display(),
            line.join(" "),
            words.len(),
            words[words.len() - 1],
            words.get(words.len().wrapping_sub(2)).unwrap_or(&"perflab"),
        ))
        .output()
        .unwrap();
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    out.lines().map(str::to_string).collect()
}

#[test]
fn bash_completes_study_names_after_run() {
    let lab = Lab::new();
    assert_eq!(bash_completes(&lab, &["run", "netp"]), ["netpaths"]);
    let all = bash_completes(&lab, &["run", ""]);
    for study in ["idle-ipi", "irq-fill", "memxfer", "netpaths", "quick"] {
        assert!(all.contains(&study.to_string()), "{study} not in {all:?}");
    }
}

#[test]
fn every_shell_gets_a_script_and_the_installed_shells_parse_it() {
    let lab = Lab::new();
    for (shell, check) in [
        ("bash", Some(["bash", "-n"])),
        ("zsh", Some(["zsh", "-n"])),
        ("fish", Some(["fish", "--no-execute"])),
        ("elvish", None),
        ("powershell", None),
    ] {
        let o = lab.run(&["completions", shell]);
        let (script, err) = text(&o);
        assert!(o.status.success(), "{shell}: {err}");
        assert!(
            script.contains("report") && script.contains("--html"),
            "{shell}"
        );
        let Some([tool, flag]) = check else { continue };
        if !have(tool) {
            eprintln!("skipped: {tool} is not installed, its script is not parsed");
            continue;
        }
        let file = lab.dir.path().join(format!("perflab.{shell}"));
        std::fs::write(&file, &script).unwrap();
        let o = Command::new(tool).arg(flag).arg(&file).output().unwrap();
        assert!(o.status.success(), "{tool} {flag}: {:?}", text(&o));
    }
    let o = lab.run(&["completions", "tcsh"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn the_manual_page_is_roff_naming_every_subcommand() {
    let lab = Lab::new();
    let o = lab.run(&["man"]);
    let (page, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(err.is_empty(), "nothing but the page: {err}");
    assert!(page.contains(".TH perflab 1"), "{page}");
    assert!(page.contains(".SH SYNOPSIS") && page.contains(".SH SUBCOMMANDS"));
    for name in subcommands(&lab, &[]) {
        assert!(page.contains(&format!("perflab\\-{name}(1)")), "{name}");
    }
    let file = lab.dir.path().join("perflab.1");
    std::fs::write(&file, &page).unwrap();
    if have("groff") {
        // -ww: every warning; -z: parse and discard the output.
        let o = Command::new("groff")
            .args(["-man", "-Tutf8", "-ww", "-z"])
            .arg(&file)
            .output()
            .unwrap();
        let (_, err) = text(&o);
        assert!(o.status.success() && err.is_empty(), "groff: {err}");
    } else {
        eprintln!("skipped: groff is not installed, the page's roff is not checked");
    }
    if have("man") {
        let o = Command::new("man")
            .arg("-l")
            .arg(&file)
            .env("MANPAGER", "cat")
            .env("MANWIDTH", "80")
            .output()
            .unwrap();
        let (out, err) = text(&o);
        assert!(o.status.success(), "man -l: {err}");
        assert!(
            out.contains("SUBCOMMANDS") && out.contains("perflab-report(1)"),
            "{out}"
        );
        assert!(
            !out.contains(".TH") && !out.contains("\\fB"),
            "rendered: {out}"
        );
    } else {
        eprintln!("skipped: man is not installed, the page is not rendered");
    }
}

#[test]
fn man_out_writes_one_page_per_subcommand() {
    let lab = Lab::new();
    let dir = lab.dir.path().join("man1");
    std::fs::create_dir(&dir).unwrap();
    let o = lab.run(&["man", "--out", dir.to_str().unwrap()]);
    assert!(o.status.success(), "{:?}", text(&o));
    let mut want = vec!["perflab.1".to_string()];
    for name in subcommands(&lab, &[]) {
        want.push(format!("perflab-{name}.1"));
    }
    for name in subcommands(&lab, &["fleet"]) {
        want.push(format!("perflab-fleet-{name}.1"));
    }
    want.sort();
    let mut got: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    got.sort();
    assert_eq!(got, want);
    let run = std::fs::read_to_string(dir.join("perflab-run.1")).unwrap();
    assert!(
        run.contains(".TH perflab-run 1") && run.contains("dry\\-run"),
        "{run}"
    );

    // A directory that is not there is bad input, and nothing is created.
    let missing = lab.dir.path().join("nope");
    let o = lab.run(&["man", "--out", missing.to_str().unwrap()]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(!missing.exists());
}
