//! `fleet doctor`: each host's `perflab doctor --json`, side by side, with the checks on
//! which the hosts differ first (those are what make their numbers differ).

use serde::{Deserialize, Serialize};

/// One line of `perflab doctor --json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Check {
    pub name: String,
    pub status: String,
    pub detail: String,
    #[serde(default)]
    pub hint: Option<String>,
}

/// What one host answered: its checks, or why it could not be asked.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HostDoctor {
    pub host: String,
    #[serde(flatten)]
    pub answer: Answer,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Answer {
    Checks(Vec<Check>),
    Unreachable(String),
}

pub fn parse(json: &str) -> Result<Vec<Check>, String> {
    serde_json::from_str(json).map_err(|e| format!("its doctor output is not perflab's: {e}"))
}

/// The table: a row per check (in the first answering host's order, those that differ
/// first and marked `*`), a column per host; then each differing check's details per host,
/// and the hosts that could not be asked.
pub fn side_by_side(hosts: &[HostDoctor]) -> String {
    let answered: Vec<(&str, &[Check])> = hosts
        .iter()
        .filter_map(|h| match &h.answer {
            Answer::Checks(c) => Some((h.host.as_str(), c.as_slice())),
            Answer::Unreachable(_) => None,
        })
        .collect();
    let mut names: Vec<&str> = Vec::new();
    for (_, checks) in &answered {
        for c in *checks {
            if !names.contains(&c.name.as_str()) {
                names.push(&c.name);
            }
        }
    }
    let find = |checks: &'_ [Check], name: &str| checks.iter().find(|c| c.name == name).cloned();
    let differs = |name: &str| {
        let first = answered.first().and_then(|(_, c)| find(c, name));
        answered.iter().any(|(_, c)| {
            let this = find(c, name);
            this.as_ref().map(|x| (&x.status, &x.detail))
                != first.as_ref().map(|x| (&x.status, &x.detail))
        })
    };
    let (mut rows, same): (Vec<&str>, Vec<&str>) = names.iter().partition(|n| differs(n));
    let differing = rows.len();
    rows.extend(same);

    let mut out = String::new();
    for h in hosts {
        if let Answer::Unreachable(why) = &h.answer {
            out.push_str(&format!("{}: not asked: {why}\n", h.host));
        }
    }
    if answered.is_empty() {
        return out;
    }
    let name_w = rows.iter().map(|n| n.len()).max().unwrap_or(5).max(5) + 2;
    let col_w: Vec<usize> = answered.iter().map(|(h, _)| h.len().max(8) + 2).collect();
    let mut header = format!("  {:<name_w$}", "check");
    for ((h, _), w) in answered.iter().zip(&col_w) {
        header.push_str(&format!("{h:<w$}"));
    }
    out.push_str(header.trim_end());
    out.push('\n');
    for (i, name) in rows.iter().enumerate() {
        let mark = if i < differing { "* " } else { "  " };
        let mut line = format!("{mark}{name:<name_w$}");
        for ((_, checks), w) in answered.iter().zip(&col_w) {
            let s = find(checks, name).map_or("-".to_string(), |c| c.status);
            line.push_str(&format!("{s:<w$}"));
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    if differing > 0 {
        out.push_str(&format!(
            "\n* {differing} check(s) differ between the hosts:\n"
        ));
        for name in &rows[..differing] {
            out.push_str(&format!("{name}\n"));
            for (h, checks) in &answered {
                let d = find(checks, name).map_or("(no such check)".to_string(), |c| {
                    format!("{}: {}", c.status, c.detail)
                });
                out.push_str(&format!("  {h}: {d}\n"));
            }
        }
    } else {
        out.push_str("\nthe hosts answer every check alike\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(name: &str, status: &str, detail: &str) -> Check {
        Check {
            name: name.into(),
            status: status.into(),
            detail: detail.into(),
            hint: None,
        }
    }

    #[test]
    fn differences_come_first_with_their_details() {
        let a = vec![
            check("privileges", "ok", "running as root"),
            check("cpuidle", "ok", "driver intel_idle, 4 states"),
            check("perf hardware events", "ok", "cycles open"),
        ];
        let b = vec![
            check("privileges", "ok", "running as root"),
            check("cpuidle", "missing", "no cpuidle driver"),
            check("perf hardware events", "ok", "cycles open"),
        ];
        let text = side_by_side(&[
            HostDoctor {
                host: "x86-a".into(),
                answer: Answer::Checks(a),
            },
            HostDoctor {
                host: "arm".into(),
                answer: Answer::Checks(b),
            },
            HostDoctor {
                host: "power".into(),
                answer: Answer::Unreachable(
                    "ssh: connect to host power port 22: No route to host".into(),
                ),
            },
        ]);
        let expected = "\
power: not asked: ssh: connect to host power port 22: No route to host
  check                 x86-a     arm
* cpuidle               ok        missing
  privileges            ok        ok
  perf hardware events  ok        ok

* 1 check(s) differ between the hosts:
cpuidle
  x86-a: ok: driver intel_idle, 4 states
  arm: missing: no cpuidle driver
";
        assert_eq!(text, expected);
    }

    #[test]
    fn doctor_json_parses_and_garbage_is_named() {
        let c =
            parse(r#"[{"name":"privileges","status":"ok","detail":"root","hint":null}]"#).unwrap();
        assert_eq!(c[0].name, "privileges");
        assert!(parse("bash: perflab: command not found")
            .unwrap_err()
            .contains("not perflab's"));
    }
}
