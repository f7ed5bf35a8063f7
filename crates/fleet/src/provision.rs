//! Finding, or putting, a perflab on a host that is this very build: the agent and this
//! side must speak the same stream, and a fleet's numbers must come from one build.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use sha2::{Digest, Sha256};

use crate::hosts::Host;
use crate::ssh::{last_line, Ssh};

/// What the user asked for (`--remote-perflab`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Want {
    /// A copy of this build cached on the host, else a `perflab` on its PATH of the same
    /// version, else copy this binary there (same architecture only).
    Auto,
    /// Always copy this binary (a development build whose version did not change).
    Copy,
    /// Use this path on the host as it is.
    Path(String),
}

/// This perflab: its file, version and content hash (which names the cached copy).
#[derive(Clone, Debug)]
pub struct Local {
    pub exe: PathBuf,
    pub version: String,
    pub sha: String,
}

impl Local {
    pub fn this_build() -> std::io::Result<Local> {
        let exe = std::env::current_exe()?;
        let sha = sha256_file(&exe)?;
        Ok(Local {
            exe,
            version: perflab_core::VERSION.to_string(),
            sha,
        })
    }

    /// The cached copy's file name on a host.
    pub fn cache_name(&self) -> String {
        format!("perflab-{}-{}", self.version, &self.sha[..16])
    }
}

pub fn sha256_file(path: &Path) -> std::io::Result<String> {
    let mut f = std::fs::File::open(path)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// What a host said about itself.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Probe {
    pub arch: String,
    pub cached: Option<String>,
    pub path: Option<String>,
    pub version: Option<String>,
}

/// The probe's shell script: key=value lines, nothing that needs more than POSIX sh.
fn probe_script(cache_name: &str) -> String {
    format!(
        r#"printf 'arch=%s\n' "$(uname -m)"
c="$HOME/.cache/perflab/{cache_name}"
if [ -x "$c" ]; then printf 'cached=%s\n' "$c"; fi
if p=$(command -v perflab 2>/dev/null); then
  printf 'path=%s\n' "$p"
  printf 'version=%s\n' "$("$p" --version 2>/dev/null | head -n 1)"
fi"#
    )
}

pub fn parse_probe(text: &str) -> Result<Probe, String> {
    let mut p = Probe::default();
    for line in text.lines() {
        let Some((k, v)) = line.split_once('=') else {
            continue;
        };
        let v = v.trim().to_string();
        match k.trim() {
            "arch" => p.arch = v,
            "cached" => p.cached = Some(v),
            "path" => p.path = Some(v),
            // `perflab 0.1.0` → `0.1.0`
            "version" => p.version = v.split_whitespace().last().map(str::to_string),
            _ => {}
        }
    }
    if p.arch.is_empty() {
        return Err("the host's shell did not answer `uname -m`".into());
    }
    Ok(p)
}

/// `uname -m` words for the architecture this binary was built for.
pub fn same_arch(uname: &str) -> bool {
    let norm = match uname {
        "arm64" | "aarch64" | "aarch64_be" => "aarch64",
        "amd64" | "x86_64" => "x86_64",
        "ppc64le" | "ppc64" | "powerpc64" | "powerpc64le" => "powerpc64",
        "i386" | "i486" | "i586" | "i686" => "x86",
        other => other,
    };
    let endian_ok = match uname {
        "ppc64le" | "powerpc64le" => cfg!(target_endian = "little"),
        "ppc64" | "powerpc64" | "aarch64_be" => cfg!(target_endian = "big"),
        _ => true,
    };
    norm == std::env::consts::ARCH && endian_ok
}

/// How perflab was found or put on the host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Remote {
    /// The path to run on the host.
    pub path: String,
    /// One line for the progress output.
    pub how: String,
}

/// Decides from a probe; `Ok(None)` means "copy it".
pub fn decide(want: &Want, local: &Local, p: &Probe) -> Result<Option<Remote>, String> {
    if let Want::Path(path) = want {
        return Ok(Some(Remote {
            path: path.clone(),
            how: format!("using {path} as given"),
        }));
    }
    if *want == Want::Auto {
        if let Some(c) = &p.cached {
            return Ok(Some(Remote {
                path: c.clone(),
                how: "using the copy of this build cached there".into(),
            }));
        }
        if let (Some(path), Some(v)) = (&p.path, &p.version) {
            if *v == local.version {
                return Ok(Some(Remote {
                    path: path.clone(),
                    how: format!("using {path} (perflab {v}, the same version)"),
                }));
            }
        }
    }
    if !same_arch(&p.arch) {
        return Err(format!(
            "the host is {}, this perflab is built for {}: install perflab {} there, or \
             give its path with --remote-perflab",
            p.arch,
            std::env::consts::ARCH,
            local.version
        ));
    }
    Ok(None)
}

/// Why a host could not be given a perflab.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unready {
    /// ssh could not connect (worth trying again later).
    Connect(String),
    /// The host lacks something; trying again will not help.
    Lacks(String),
}

/// ssh exits 255 when the connection itself failed; anything else is the host's answer.
fn unready(out: &std::process::Output, what: &str) -> Unready {
    if out.status.code() == Some(crate::ssh::CONNECTION_FAILED) {
        Unready::Connect(crate::ssh::ssh_reason(&String::from_utf8_lossy(
            &out.stderr,
        )))
    } else {
        let line = last_line(&String::from_utf8_lossy(&out.stderr));
        Unready::Lacks(format!("{what}: {line}"))
    }
}

fn spawn_error(ssh: &Ssh, e: std::io::Error) -> Unready {
    Unready::Lacks(format!("cannot run {}: {e}", ssh.program.display()))
}

/// Probes the host and finds or copies perflab there.
pub fn provision(ssh: &Ssh, host: &Host, want: &Want, local: &Local) -> Result<Remote, Unready> {
    let script = probe_script(&local.cache_name());
    let out = ssh
        .command(host, &["sh".into(), "-c".into(), script])
        .output()
        .map_err(|e| spawn_error(ssh, e))?;
    if !out.status.success() {
        return Err(unready(&out, "its shell did not answer the probe"));
    }
    let probe = parse_probe(&String::from_utf8_lossy(&out.stdout)).map_err(Unready::Lacks)?;
    let remote = match decide(want, local, &probe).map_err(Unready::Lacks)? {
        Some(r) => r,
        None => copy(ssh, host, local)?,
    };
    check_runs(ssh, host, &remote)?;
    Ok(remote)
}

/// Sends this binary over the ssh connection itself (no scp or rsync needed there), to a
/// temporary name renamed into place, so hosts sharing a home directory never run a
/// half-written copy.
fn copy(ssh: &Ssh, host: &Host, local: &Local) -> Result<Remote, Unready> {
    let name = local.cache_name();
    let script = format!(
        r#"set -e
d="$HOME/.cache/perflab"
mkdir -p "$d"
t="$d/.incoming.$$"
cat > "$t"
chmod 755 "$t"
mv -f "$t" "$d/{name}"
printf '%s\n' "$d/{name}""#
    );
    let file = std::fs::File::open(&local.exe)
        .map_err(|e| Unready::Lacks(format!("cannot read {}: {e}", local.exe.display())))?;
    let out = ssh
        .command(host, &["sh".into(), "-c".into(), script])
        .stdin(Stdio::from(file))
        .output()
        .map_err(|e| spawn_error(ssh, e))?;
    if !out.status.success() {
        return Err(unready(&out, "copying perflab there failed"));
    }
    let path = String::from_utf8_lossy(&out.stdout).trim().to_string();
    Ok(Remote {
        how: format!("copied this build to {path}"),
        path,
    })
}

/// A copy that does not start there (an older C library, a noexec home) is a host that
/// lacks a capability, said with the host's own words.
fn check_runs(ssh: &Ssh, host: &Host, remote: &Remote) -> Result<(), Unready> {
    let out = ssh
        .command(host, &[remote.path.clone(), "--version".into()])
        .output()
        .map_err(|e| spawn_error(ssh, e))?;
    if out.status.success() {
        return Ok(());
    }
    Err(unready(
        &out,
        &format!("{} does not run there", remote.path),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn local() -> Local {
        Local {
            exe: "/x/perflab".into(),
            version: "0.1.0".into(),
            sha: "0123456789abcdef0123456789abcdef".into(),
        }
    }

    fn probe(text: &str) -> Probe {
        parse_probe(text).unwrap()
    }

    #[test]
    fn probes_parse() {
        let p = probe("arch=x86_64\ncached=/h/.cache/perflab/p\npath=/usr/bin/perflab\nversion=perflab 0.1.0\n");
        assert_eq!(p.arch, "x86_64");
        assert_eq!(p.version.as_deref(), Some("0.1.0"));
        assert!(parse_probe("Last login: yesterday\n").is_err());
    }

    #[test]
    fn the_cached_build_then_the_same_version_then_a_copy() {
        let here = std::env::consts::ARCH;
        let cached = probe(&format!(
            "arch={here}\ncached=/c\npath=/p\nversion=perflab 0.1.0"
        ));
        assert_eq!(
            decide(&Want::Auto, &local(), &cached)
                .unwrap()
                .unwrap()
                .path,
            "/c"
        );
        let same = probe(&format!("arch={here}\npath=/p\nversion=perflab 0.1.0"));
        assert_eq!(
            decide(&Want::Auto, &local(), &same).unwrap().unwrap().path,
            "/p"
        );
        let older = probe(&format!("arch={here}\npath=/p\nversion=perflab 0.0.9"));
        assert_eq!(decide(&Want::Auto, &local(), &older).unwrap(), None);
        assert_eq!(decide(&Want::Copy, &local(), &cached).unwrap(), None);
        let given = decide(&Want::Path("/opt/perflab".into()), &local(), &older).unwrap();
        assert_eq!(given.unwrap().path, "/opt/perflab");
    }

    #[test]
    fn another_architecture_is_a_stated_reason() {
        let other = if std::env::consts::ARCH == "aarch64" {
            "x86_64"
        } else {
            "aarch64"
        };
        let e = decide(&Want::Auto, &local(), &probe(&format!("arch={other}"))).unwrap_err();
        assert!(e.contains(&format!("the host is {other}")), "{e}");
        assert!(e.contains("--remote-perflab"), "{e}");
    }

    #[test]
    fn the_cache_name_carries_version_and_content() {
        assert_eq!(local().cache_name(), "perflab-0.1.0-0123456789abcdef");
    }
}
