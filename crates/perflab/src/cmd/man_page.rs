//! The manual pages, from the clap definitions plus what clap does not know: EXIT STATUS
//! (read from `exit.rs`), ENVIRONMENT and FILES (`man_env`), SEE ALSO (the pages written
//! beside it, and no other, so no reference dangles). clap_mangen renders each page's
//! title, synopsis, options and subcommands; its "EXTRA" section (the after-help text)
//! becomes NOTES, or on `perflab.1` gives way to EXIT STATUS, which it repeated.

use clap::Command;

use crate::cmd::man_env::{ENVIRONMENT, FILES};

/// One page: its file name (`perflab-fleet-run.1`) and its roff text.
pub struct Page {
    pub file: String,
    pub roff: String,
}

/// The manual's section.
const SECTION: &str = "1";

/// `cmd` (the top-level command) ready to be rendered: no `help` subcommand (it has no
/// page), display names set (`perflab-fleet-run`).
pub fn prepared(cmd: Command) -> Command {
    let mut cmd = cmd.disable_help_subcommand(true);
    cmd.build();
    cmd
}

/// The page of `cmd` (`prepared`'s or a visible subcommand of it, at any depth), whose
/// parent page, if any, is `parent`.
pub fn page(cmd: &Command, parent: Option<&str>) -> std::io::Result<Page> {
    let man = clap_mangen::Man::new(cmd.clone());
    let name = name_of(cmd);
    let subs = visible(cmd);
    let mut out: Vec<u8> = Vec::new();
    man.render_title(&mut out)?;
    man.render_name_section(&mut out)?;
    man.render_synopsis_section(&mut out)?;
    man.render_description_section(&mut out)?;
    if cmd.get_arguments().any(|a| !a.is_hide_set()) {
        man.render_options_section(&mut out)?;
    }
    if !subs.is_empty() {
        man.render_subcommands_section(&mut out)?;
    }
    let top = parent.is_none();
    let mut roff = String::from_utf8_lossy(&out).into_owned();
    if !top {
        if let Some(notes) = cmd.get_after_long_help().or_else(|| cmd.get_after_help()) {
            roff += &section("NOTES", &paragraphs(&notes.to_string()));
        }
    }
    roff += &section("EXIT STATUS", &exit_status());
    if top {
        roff += &section("ENVIRONMENT", &tagged(ENVIRONMENT));
        roff += &section("FILES", &tagged(FILES));
    }
    let mut also: Vec<String> = Vec::new();
    if let Some(p) = parent {
        also.push(p.to_string());
    }
    also.extend(subs.iter().map(|s| name_of(s)));
    if also.is_empty() {
        also.push("perflab".into());
    }
    let refs: Vec<String> = also
        .iter()
        .map(|n| format!("\\fB{}\\fR({SECTION})", esc(n)))
        .collect();
    roff += &section("SEE ALSO", &format!("{}\n", refs.join(",\n")));
    let mut version: Vec<u8> = Vec::new();
    if cmd.get_version().is_some() {
        man.render_version_section(&mut version)?;
    }
    roff += &String::from_utf8_lossy(&version);
    Ok(Page {
        file: format!("{name}.{SECTION}"),
        roff,
    })
}

/// Every page: `cmd`'s and its visible subcommands', depth first, each with its parent.
pub fn pages(cmd: &Command) -> std::io::Result<Vec<Page>> {
    fn walk(cmd: &Command, parent: Option<&str>, out: &mut Vec<Page>) -> std::io::Result<()> {
        out.push(page(cmd, parent)?);
        let name = name_of(cmd);
        for sub in visible(cmd) {
            walk(sub, Some(&name), out)?;
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk(cmd, None, &mut out)?;
    Ok(out)
}

fn visible(cmd: &Command) -> Vec<&Command> {
    cmd.get_subcommands().filter(|s| !s.is_hide_set()).collect()
}

fn name_of(cmd: &Command) -> String {
    cmd.get_display_name()
        .unwrap_or_else(|| cmd.get_name())
        .to_string()
}

fn section(title: &str, body: &str) -> String {
    format!(".SH \"{title}\"\n{body}")
}

/// Each exit code as a tagged paragraph.
fn exit_status() -> String {
    let mut out = String::new();
    for c in crate::exit::codes() {
        out += &format!(".TP\n\\fB{}\\fR\n{}\n", c.code, inline(&c.doc));
    }
    out
}

fn tagged(items: &[(&str, &str)]) -> String {
    let mut out = String::new();
    for (tag, text) in items {
        out += &format!(".TP\n\\fB{}\\fR\n{}\n", esc(tag), inline(text));
    }
    out
}

/// Text with its blank lines as paragraph breaks and its indented lines (examples) kept
/// as they are.
fn paragraphs(text: &str) -> String {
    let mut out = String::new();
    let mut literal = false;
    for line in text.lines() {
        if line.trim().is_empty() {
            out += if literal { ".fi\n.PP\n" } else { ".PP\n" };
            literal = false;
        } else if line.starts_with("  ") {
            if !literal {
                out += ".nf\n";
                literal = true;
            }
            out += &format!("{}\n", esc(line));
        } else {
            out += &format!("{}\n", inline(line));
        }
    }
    if literal {
        out += ".fi\n";
    }
    out
}

/// [`esc`], and a `command` in backticks in bold.
fn inline(text: &str) -> String {
    let mut out = String::new();
    for (i, part) in esc(text).split('`').enumerate() {
        if i % 2 == 1 {
            out += &format!("\\fB{part}\\fR");
        } else {
            out += part;
        }
    }
    out
}

/// `text` safe as roff running text: backslashes and hyphens escaped, and no line taken
/// for a request.
fn esc(text: &str) -> String {
    let s = text.replace('\\', "\\e").replace('-', "\\-");
    if s.starts_with('.') || s.starts_with('\'') {
        format!("\\&{s}")
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn every_page_has_its_sections_and_refers_only_to_pages_written() {
        let pages = pages(&prepared(crate::cli::Cli::command())).unwrap();
        let files: Vec<&str> = pages.iter().map(|p| p.file.as_str()).collect();
        assert!(files.contains(&"perflab.1") && files.contains(&"perflab-fleet-run.1"));
        assert!(!files
            .iter()
            .any(|f| f.contains("help") || f.contains("agent")));
        for p in &pages {
            for s in ["NAME", "SYNOPSIS", "EXIT STATUS", "SEE ALSO"] {
                assert!(
                    p.roff.contains(&format!(".SH \"{s}\""))
                        || p.roff.contains(&format!(".SH {s}")),
                    "{}: {s}",
                    p.file
                );
            }
            assert!(!p.roff.contains("EXTRA"), "{}", p.file);
        }
        let top = &pages[0];
        assert!(top.roff.contains(".SH \"ENVIRONMENT\"") && top.roff.contains(".SH \"FILES\""));
        assert!(top.roff.contains("perflab\\-run\\fR(1)"), "{}", top.roff);
    }

    #[test]
    fn text_cannot_become_a_request() {
        assert_eq!(esc(".hidden"), "\\&.hidden");
        assert_eq!(esc("a-b \\x"), "a\\-b \\ex");
        assert_eq!(inline("run `ls -l` now"), "run \\fBls \\-l\\fR now");
    }
}
