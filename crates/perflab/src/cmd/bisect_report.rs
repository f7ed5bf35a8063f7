//! What `perflab bisect` prints: the outcome first (the first bad commit with its change
//! and interval, or why none is named), then every tested commit with its evidence, what
//! could not be decided, and what it cost; as text, Markdown, mail or JSON.

use perflab_bisect::{Bisection, Class, Outcome, Row, Step};
use serde::Serialize;

use crate::cli_bisect::BisectFormat;

/// A tested commit with its hash and subject.
#[derive(Clone, Debug, Serialize)]
pub struct TestedCommit {
    pub sha: String,
    pub subject: String,
    #[serde(flatten)]
    pub step: Step,
}

/// Everything the report shows.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub repo: String,
    pub study: String,
    pub metric: String,
    pub point: u32,
    /// Commits in the range, both ends included.
    pub commits: usize,
    pub good: String,
    pub bad: String,
    /// The first bad commit's hash and subject, when one is named.
    pub first_bad: Option<(String, String)>,
    pub tested: Vec<TestedCommit>,
    pub bisection: Bisection,
    /// Builds run by this invocation (the others came from the cache).
    pub builds_run: usize,
    /// Runs this invocation started, and measurements they took (the rest were stored).
    pub runs_started: usize,
    pub measured_now: usize,
    /// The label prefix of the bisection's runs (`perflab ls` shows them).
    pub label: String,
    pub elapsed_s: f64,
    #[serde(skip)]
    pub shas: Vec<String>,
}

pub fn render(r: &Report, f: BisectFormat) -> String {
    match f {
        BisectFormat::Json => {
            let doc = crate::cmd::envelope::wrap_as("perflab-bisect", r);
            serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n"
        }
        BisectFormat::Text => text(r, false, 12),
        BisectFormat::Mail => text(r, true, 8),
        BisectFormat::Markdown => markdown(r),
    }
}

fn short(sha: &str, n: usize) -> &str {
    &sha[..n.min(sha.len())]
}

/// `+12.3% [+10.1%, +14.6%] worse`, or `undecided` without an interval.
fn row(r: Option<&Row>) -> String {
    let Some(r) = r else {
        return "-".into();
    };
    let change = r.change_pct.map_or("?".into(), |c| format!("{c:+.1}%"));
    let ci = r
        .interval_pct
        .map_or(String::new(), |(lo, hi)| format!(" [{lo:+.1}, {hi:+.1}]"));
    format!("{change}{ci} {}", r.verdict.name())
}

/// The outcome in one or two sentences.
fn outcome(r: &Report, n: usize) -> Vec<String> {
    let b = &r.bisection;
    let sha = |i: usize| short(&r.shas[i], n).to_string();
    match &b.outcome {
        Outcome::NoDifference => vec![format!(
            "good and bad do not differ: bad vs good {} (within ±{:.1}%); nothing to bisect",
            row(Some(&b.ends)),
            b.ends.threshold_pct
        )],
        Outcome::EndsUndecided => vec![format!(
            "could not tell whether good and bad differ after {} pairs: bad vs good {}; \
             nothing bisected",
            b.ends_pairs,
            row(Some(&b.ends))
        )],
        Outcome::FirstBad { commit, last_good } => {
            let (fb, subject) = r.first_bad.clone().unwrap_or_default();
            let step = b.step(*commit);
            vec![
                format!("first bad commit: {} {}", short(&fb, n), subject),
                format!(
                    "  its change vs good: {}; vs bad: {}",
                    row(step.and_then(|s| s.vs_good.as_ref())),
                    row(step.and_then(|s| s.vs_bad.as_ref()))
                ),
                format!(
                    "  last good: {}{}",
                    sha(*last_good),
                    if *last_good == 0 {
                        " (the good end)"
                    } else {
                        ""
                    }
                ),
            ]
        }
        Outcome::Candidates {
            last_good,
            first_bad,
            untested,
        } => vec![format!(
            "the first bad commit is one of {} or {} (last good {}): the others were {}",
            untested
                .iter()
                .map(|&i| sha(i))
                .collect::<Vec<_>>()
                .join(", "),
            sha(*first_bad),
            sha(*last_good),
            "skipped or undecided, so no one commit is named"
        )],
        Outcome::TwoChanges {
            commit,
            class,
            last_good,
            first_bad,
        } => vec![
            format!(
                "the range holds two changes: commit {} is {} (not the same as either end), \
                 so no single commit is named",
                sha(*commit),
                class.words()
            ),
            format!(
                "  bisect {}..{} and {}..{} separately (between last good {} and first bad {})",
                short(&r.good, n),
                sha(*commit),
                sha(*commit),
                short(&r.bad, n),
                sha(*last_good),
                sha(*first_bad)
            ),
        ],
    }
}

fn undecided(r: &Report, n: usize) -> String {
    let left: Vec<String> = r
        .tested
        .iter()
        .filter(|t| matches!(t.step.class, Class::Undecided | Class::Skipped))
        .map(|t| {
            format!(
                "{} {}{}",
                short(&t.sha, n),
                t.step.class.words(),
                t.step
                    .skipped
                    .as_ref()
                    .map_or(String::new(), |w| format!(" ({w})"))
            )
        })
        .collect();
    if left.is_empty() {
        "could not decide: nothing (every tested commit was decided)".into()
    } else {
        format!("could not decide: {}", left.join("; "))
    }
}

fn cost(r: &Report) -> String {
    format!(
        "spent: {} measurements ({} taken now in {} run(s), the rest read back from the \
         store), {} build(s) now, {:.1} s; runs labelled \"{} …\"",
        r.bisection.measurements,
        r.measured_now,
        r.runs_started,
        r.builds_run,
        r.elapsed_s,
        r.label
    )
}

fn header(r: &Report, n: usize) -> String {
    format!(
        "bisect: {} commits from {} (good) to {} (bad) in {}; study {}, metric {}, \
         point {}",
        r.commits,
        short(&r.good, n),
        short(&r.bad, n),
        r.repo,
        r.study,
        r.metric,
        r.point
    )
}

fn text(r: &Report, mail: bool, n: usize) -> String {
    let mut out = Vec::new();
    out.push(header(r, n));
    out.push(format!(
        "ends: bad vs good {} ({} pairs, threshold {:.1}%)",
        row(Some(&r.bisection.ends)),
        r.bisection.ends_pairs,
        r.bisection.ends.threshold_pct
    ));
    out.extend(outcome(r, n));
    if !r.tested.is_empty() {
        out.push(
            "tested, in order (vs good and vs bad: change [interval] verdict at half the \
                  ends' change):"
                .into(),
        );
        for t in &r.tested {
            let s = &t.step;
            if mail {
                out.push(format!(
                    "  {} {:<12} {:>3} rounds  {}",
                    short(&t.sha, n),
                    s.class.words(),
                    s.rounds,
                    t.subject
                ));
                out.push(format!("      vs good {}", row(s.vs_good.as_ref())));
                out.push(format!("      vs bad  {}", row(s.vs_bad.as_ref())));
            } else {
                out.push(format!(
                    "  {}  {:<12} {:>3} rounds  vs good {:<30} vs bad {:<30} {}{}",
                    short(&t.sha, n),
                    s.class.words(),
                    s.rounds,
                    row(s.vs_good.as_ref()),
                    row(s.vs_bad.as_ref()),
                    t.subject,
                    if s.confirmed { " (confirmed)" } else { "" }
                ));
            }
        }
    }
    out.push(undecided(r, n));
    out.push(cost(r));
    let mut text = String::new();
    for line in out {
        if mail {
            text.push_str(&wrap(&line, 72));
        } else {
            text.push_str(&line);
            text.push('\n');
        }
    }
    text
}

/// Wraps at spaces, continuation lines indented by 4.
fn wrap(line: &str, width: usize) -> String {
    let indent = line.len() - line.trim_start().len();
    let mut out = String::new();
    let mut cur = String::new();
    for word in line.split_whitespace() {
        if !cur.is_empty() && cur.len() + 1 + word.len() > width {
            out.push_str(&cur);
            out.push('\n');
            cur = " ".repeat(indent + 4);
        } else if !cur.is_empty() {
            cur.push(' ');
        } else {
            cur = " ".repeat(indent);
        }
        cur.push_str(word);
    }
    out.push_str(&cur);
    out.push('\n');
    out
}

fn markdown(r: &Report) -> String {
    let mut s = format!("### {}\n\n", header(r, 12));
    s.push_str(&format!(
        "Ends: bad vs good **{}** ({} pairs, threshold {:.1}%).\n\n",
        row(Some(&r.bisection.ends)),
        r.bisection.ends_pairs,
        r.bisection.ends.threshold_pct
    ));
    for line in outcome(r, 12) {
        s.push_str(&format!("- {}\n", line.trim()));
    }
    if !r.tested.is_empty() {
        s.push_str("\n| commit | reading | rounds | vs good | vs bad | subject |\n");
        s.push_str("|---|---|---:|---|---|---|\n");
        for t in &r.tested {
            s.push_str(&format!(
                "| `{}` | {}{} | {} | {} | {} | {} |\n",
                short(&t.sha, 12),
                t.step.class.words(),
                if t.step.confirmed { " (confirmed)" } else { "" },
                t.step.rounds,
                row(t.step.vs_good.as_ref()),
                row(t.step.vs_bad.as_ref()),
                t.subject.replace('|', "\\|")
            ));
        }
    }
    s.push_str(&format!("\n{}\n\n{}\n", undecided(r, 12), cost(r)));
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use perflab_bisect::sim::{levels, sim_settings, SimOracle, COMMITS, NOISE};

    /// A report of a simulated bisection (a step at commit 700, commit 300 skipped).
    fn report() -> Report {
        let mut o = SimOracle::new(levels(&[(700, 1.03)]), NOISE, 5);
        o.skipped.insert(511);
        let b = perflab_bisect::bisect(COMMITS, &mut o, &sim_settings()).unwrap();
        let shas: Vec<String> = (0..COMMITS).map(|i| format!("{i:040x}")).collect();
        Report {
            repo: "/src/prog".into(),
            study: "study.toml".into(),
            metric: "time_us".into(),
            point: 0,
            commits: COMMITS,
            good: shas[0].clone(),
            bad: shas[COMMITS - 1].clone(),
            first_bad: Some((shas[700].clone(), "make it slow".into())),
            tested: b
                .steps
                .iter()
                .map(|s| TestedCommit {
                    sha: shas[s.commit].clone(),
                    subject: format!("commit number {} with a subject of some length", s.commit),
                    step: s.clone(),
                })
                .collect(),
            bisection: b,
            builds_run: 3,
            runs_started: 12,
            measured_now: 300,
            label: "bisect 0123456789ab".into(),
            elapsed_s: 12.5,
            shas,
        }
    }

    #[test]
    fn every_format_names_the_commit_and_mail_stays_within_72_columns() {
        let r = report();
        let first = format!("first bad commit: {}", &r.shas[700][..12]);
        let text = render(&r, BisectFormat::Text);
        assert!(text.contains(&first), "{text}");
        assert!(
            text.contains(&format!("{} skipped", &r.shas[511][..12])),
            "{text}"
        );
        let mail = render(&r, BisectFormat::Mail);
        assert!(
            mail.contains(&format!("first bad commit: {}", &r.shas[700][..8])),
            "{mail}"
        );
        for line in mail.lines() {
            assert!(
                line.chars().count() <= 72,
                "{} columns: {line}",
                line.chars().count()
            );
        }
        let md = render(&r, BisectFormat::Markdown);
        assert!(md.contains("| commit | reading | rounds | vs good | vs bad | subject |"));
        assert_eq!(
            md.lines().filter(|l| l.starts_with("| `")).count(),
            r.tested.len()
        );
        let json: serde_json::Value =
            serde_json::from_str(&render(&r, BisectFormat::Json)).unwrap();
        assert_eq!(json["format"], "perflab-bisect");
        assert_eq!(json["bisection"]["outcome"]["kind"], "first_bad");
        assert_eq!(json["bisection"]["outcome"]["commit"], 700);
    }
}
