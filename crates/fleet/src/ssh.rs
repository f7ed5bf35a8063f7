//! Reaching a host through the system `ssh`, so the user's ~/.ssh/config, keys, agent,
//! jump hosts and known_hosts all apply as they do for them by hand.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::hosts::Host;

/// How `ssh` is called.
#[derive(Clone, Debug)]
pub struct Ssh {
    /// The program (`ssh`, or `$PERFLAB_SSH`).
    pub program: PathBuf,
    /// `-F FILE`: an ssh config other than the user's.
    pub config: Option<PathBuf>,
    /// Extra `-o` options, as given.
    pub options: Vec<String>,
    /// How long one connection attempt may take.
    pub connect_timeout: Duration,
}

impl Default for Ssh {
    fn default() -> Self {
        Self {
            program: std::env::var_os("PERFLAB_SSH")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from("ssh")),
            config: None,
            options: Vec::new(),
            connect_timeout: Duration::from_secs(10),
        }
    }
}

/// ssh's own exit status when the connection failed (as opposed to the remote command's).
pub const CONNECTION_FAILED: i32 = 255;

impl Ssh {
    /// `ssh [opts] DEST -- 'quoted argv'`. BatchMode: a fleet runs unattended, so a host
    /// that would ask for a password or a host-key confirmation fails at once with ssh's
    /// reason instead of hanging. ServerAlive: a host that vanishes without closing the
    /// connection (pulled cable, crashed box) is noticed within about 30 s.
    pub fn command(&self, host: &Host, argv: &[String]) -> Command {
        let mut c = Command::new(&self.program);
        if let Some(cfg) = &self.config {
            c.arg("-F").arg(cfg);
        }
        c.args(["-o", "BatchMode=yes"]);
        c.arg("-o").arg(format!(
            "ConnectTimeout={}",
            self.connect_timeout.as_secs().max(1)
        ));
        c.args([
            "-o",
            "ServerAliveInterval=10",
            "-o",
            "ServerAliveCountMax=3",
        ]);
        for o in &self.options {
            c.arg("-o").arg(o);
        }
        c.arg("-T").arg(&host.dest).arg("--");
        c.arg(remote_command(argv));
        c.stdin(Stdio::null());
        c
    }
}

/// The remote side runs the command through the user's login shell, which splits words
/// again: every argument is single-quoted so it arrives as given.
pub fn remote_command(argv: &[String]) -> String {
    argv.iter()
        .map(|a| shell_quote(a))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `it's` → `'it'\''s'`; a word of only safe characters stays bare for readable logs.
pub fn shell_quote(s: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "-_./=:,@+%".contains(c);
    if !s.is_empty() && s.chars().all(safe) {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// A reason from ssh's last line, said to come from ssh once ("ssh: connect to host …"
/// already does).
pub fn ssh_reason(stderr: &str) -> String {
    let line = last_line(stderr);
    if line.starts_with("ssh:") {
        line
    } else {
        format!("ssh: {line}")
    }
}

/// The last non-empty line ssh or the remote printed on stderr, for a one-line reason.
pub fn last_line(stderr: &str) -> String {
    stderr
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .unwrap_or("no message")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_arrive_as_given_through_a_shell() {
        let argv: Vec<String> = ["perflab", "run", "my study", "-p", "cmd=echo 'hi'; ls", ""]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let line = remote_command(&argv);
        let out = Command::new("sh")
            .arg("-c")
            .arg(format!("for a in {line}; do printf '[%s]' \"$a\"; done"))
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "[perflab][run][my study][-p][cmd=echo 'hi'; ls][]"
        );
    }

    #[test]
    fn the_command_line_is_batch_and_ends_the_options() {
        let ssh = Ssh {
            program: "ssh".into(),
            config: Some("/tmp/cfg".into()),
            options: vec!["Port=2222".into()],
            connect_timeout: Duration::from_secs(3),
        };
        let h = Host {
            name: "a".into(),
            dest: "root@a".into(),
        };
        let c = ssh.command(&h, &["perflab".into(), "--version".into()]);
        let args: Vec<String> = c
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let joined = args.join(" ");
        assert!(
            joined.starts_with("-F /tmp/cfg -o BatchMode=yes -o ConnectTimeout=3"),
            "{joined}"
        );
        assert!(
            joined.contains("-o Port=2222 -T root@a -- perflab --version"),
            "{joined}"
        );
    }

    #[test]
    fn ssh_reasons_say_ssh_once() {
        assert_eq!(
            ssh_reason("ssh: connect to host h port 22: Connection refused\n"),
            "ssh: connect to host h port 22: Connection refused"
        );
        assert_eq!(
            ssh_reason("Connection to h closed by remote host.\n"),
            "ssh: Connection to h closed by remote host."
        );
    }

    #[test]
    fn last_line_skips_blank_lines() {
        assert_eq!(
            last_line("a\nssh: connect refused\n\n"),
            "ssh: connect refused"
        );
        assert_eq!(last_line(""), "no message");
    }
}
