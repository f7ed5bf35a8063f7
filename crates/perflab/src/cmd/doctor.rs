//! `perflab doctor`: what this machine supports, one line per capability, each ok or
//! missing with the reason and how to enable it, and the plug-ins a missing one blocks
//! (`perflab_doctor` walks the registries; `perflab_report::views::doctor` shows it).

use crate::cli::{DoctorArgs, Global};
use crate::cmd::{common, envelope};

pub fn run(g: &Global, a: DoctorArgs) -> anyhow::Result<i32> {
    let sys = common::sysroot(g)?;
    let findings = perflab_doctor::examine(&sys, &perflab_doctor::plugins());
    let tree = (!sys.is_host()).then(|| sys.root());
    let text = perflab_doctor::render_text(&findings);
    let view = perflab_report::views::doctor::view(&findings, &text, tree)?;
    if a.format.is_json() {
        // `fleet doctor` reads `checks` (envelope::unwrap_field).
        envelope::print(&view.json())?;
    } else {
        print!("{}", view.text());
    }
    Ok(0)
}
