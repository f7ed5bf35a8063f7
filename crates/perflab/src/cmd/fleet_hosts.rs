//! The hosts and the ssh of `perflab fleet` (run, resume, doctor) as their flags say:
//! shared by `fleet` and `fleet_doctor`, in a file of its own so that those two do not
//! import each other.

use std::time::Duration;

use perflab_fleet::hosts::{self, Host};
use perflab_fleet::provision::Want;
use perflab_fleet::ssh::Ssh;

use crate::cli_fleet::{HostArgs, ReachArgs};
use crate::exit::input;

/// The hosts of `--hosts` or `--hosts-file`.
pub fn host_list(a: &HostArgs) -> anyhow::Result<Vec<Host>> {
    match (&a.hosts, &a.hosts_file) {
        (Some(list), _) => hosts::parse_list(list).map_err(|e| input(e.to_string())),
        (None, Some(path)) => {
            let f = std::fs::File::open(path)
                .map_err(|e| input(format!("--hosts-file {}: {e}", path.display())))?;
            hosts::parse_file(std::io::BufReader::new(f))
                .map_err(|e| input(format!("--hosts-file {}: {e}", path.display())))
        }
        (None, None) => Err(input("give --hosts h1,h2 or --hosts-file FILE")),
    }
}

/// ssh as the flags say.
pub fn ssh_from(reach: &ReachArgs) -> anyhow::Result<(Ssh, Want)> {
    let timeout = duration("--connect-timeout", &reach.connect_timeout)?;
    if let Some(cfg) = &reach.ssh_config {
        if !cfg.is_file() {
            return Err(input(format!(
                "--ssh-config {}: no such file",
                cfg.display()
            )));
        }
    }
    let want = match reach.remote_perflab.as_str() {
        "auto" => Want::Auto,
        "copy" => Want::Copy,
        "" => return Err(input("--remote-perflab is empty")),
        path => Want::Path(path.to_string()),
    };
    let ssh = Ssh {
        config: reach.ssh_config.clone(),
        options: reach.ssh_options.clone(),
        connect_timeout: timeout,
        ..Ssh::default()
    };
    Ok((ssh, want))
}

pub fn reach_of(h: &HostArgs) -> ReachArgs {
    ReachArgs {
        ssh_config: h.ssh_config.clone(),
        ssh_options: h.ssh_options.clone(),
        connect_timeout: h.connect_timeout.clone(),
        remote_perflab: h.remote_perflab.clone(),
    }
}

/// A duration flag, e.g. `--connect-timeout 5s`: above 0 and at most a day.
pub fn duration(flag: &str, text: &str) -> anyhow::Result<Duration> {
    let s = perflab_core::limits::flag_seconds(flag, text).map_err(input)?;
    Ok(Duration::from_secs_f64(s))
}
