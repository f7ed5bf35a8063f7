//! Removing what a network path created: used by its guard on restore, on drop and on a
//! failure mid-way, and by `perflab restore` after a kill. Removing an object that is
//! already gone succeeds: the journal records an object before it exists.

use perflab_sys::SysRoot;

use super::cmd;
use super::netns::netns_path;
use crate::journal::Created;

/// Removes one object; an error says why it is still there.
pub fn remove(object: &Created) -> Result<(), String> {
    match object {
        Created::Process {
            pid,
            start_ticks,
            comm,
            ..
        } => crate::guest::process::stop(*pid, *start_ticks, comm.as_deref()),
        Created::TraceInstance { name } => {
            perflab_sys::tracefs_mount::remove_instance_on(&SysRoot::host(), name)
        }
        Created::Dir { path } => match std::fs::remove_dir_all(path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(format!("{}: {e}", path.display())),
        },
        Created::Netns { name } => {
            if !netns_path(name).exists() {
                return Ok(());
            }
            cmd::ip(&["netns", "del", name])
                .map(drop)
                .map_err(|e| e.to_string())
        }
        Created::Link {
            netns: Some(ns),
            name,
        } => {
            // A link dies with its namespace.
            if !netns_path(ns).exists() {
                return Ok(());
            }
            gone_if_missing(cmd::ip_in(ns, &["link", "del", "dev", name]))
        }
        Created::Link { netns: None, name } => {
            if !SysRoot::host().exists(&format!("sys/class/net/{name}")) {
                return Ok(());
            }
            gone_if_missing(cmd::ip(&["link", "del", "dev", name]))
        }
        Created::OvsBridge { name } => {
            if perflab_sys::probe::tools::find_tool("ovs-vsctl").is_none() {
                return Err(format!(
                    "ovs-vsctl is gone, so OVS bridge {name} cannot be removed; reinstall \
                     openvswitch-switch and run `perflab restore` again"
                ));
            }
            cmd::run(
                "ovs-vsctl",
                &["--timeout=10", "--if-exists", "del-br", name],
            )
            .map(drop)
            .map_err(|e| format!("{e} (is ovsdb running? `systemctl start openvswitch-switch`)"))
        }
    }
}

/// A link deleted meanwhile (a veth whose peer went first) is as good as removed.
fn gone_if_missing(result: Result<String, crate::KnobError>) -> Result<(), String> {
    match result {
        Ok(_) => Ok(()),
        Err(e) => {
            let text = e.to_string();
            if text.contains("Cannot find device") || text.contains("does not exist") {
                Ok(())
            } else {
                Err(text)
            }
        }
    }
}
