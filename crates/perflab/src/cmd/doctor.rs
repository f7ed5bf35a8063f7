//! `perflab doctor`: what this machine supports, one line per capability, each ok or
//! missing with the reason and how to enable it, and the plug-ins a missing one blocks
//! (`perflab_doctor` walks the registries).

use crate::cli::{DoctorArgs, Global};
use crate::cmd::{common, envelope};

pub fn run(g: &Global, a: DoctorArgs) -> anyhow::Result<i32> {
    let sys = common::sysroot(g)?;
    let findings = perflab_doctor::examine(&sys, &perflab_doctor::plugins());
    if a.format.is_json() {
        // `fleet doctor` reads `checks` (envelope::unwrap_field).
        #[derive(serde::Serialize)]
        struct Checks<'a> {
            checks: &'a [perflab_doctor::Finding],
        }
        envelope::print(&Checks { checks: &findings })?;
        return Ok(0);
    }
    if !sys.is_host() {
        println!("(reading the tree at {})", sys.root().display());
    }
    print!("{}", perflab_doctor::render_text(&findings));
    Ok(0)
}
