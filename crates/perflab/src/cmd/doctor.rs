//! `perflab doctor`: what this machine supports, one line per capability, each ok or
//! missing with the reason and how to enable it.

use perflab_sys::doctor::{probe, Status};

use crate::cli::{DoctorArgs, Global};
use crate::cmd::common;

pub fn run(g: &Global, a: DoctorArgs) -> anyhow::Result<i32> {
    let sys = common::sysroot(g)?;
    let mut checks = probe(&sys);
    checks.extend(super::doctor_vm::checks(&sys));
    if a.json {
        println!("{}", serde_json::to_string_pretty(&checks)?);
        return Ok(0);
    }
    if !sys.is_host() {
        println!("(reading the tree at {})", sys.root().display());
    }
    let width = checks.iter().map(|c| c.name.len()).max().unwrap_or(10);
    for c in &checks {
        let tag = match c.status {
            Status::Ok => "ok     ",
            Status::Partial => "partial",
            Status::Missing => "missing",
        };
        println!("{tag}  {:<width$}  {}", c.name, c.detail);
        if let Some(h) = &c.hint {
            if c.status != Status::Ok {
                println!("         {:<width$}  -> {h}", "");
            }
        }
    }
    Ok(0)
}
