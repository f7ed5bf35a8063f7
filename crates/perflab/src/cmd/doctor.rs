//! `perflab doctor`: what this machine supports, one line per capability, each ok or
//! missing with the reason and how to enable it, and the plug-ins a missing one blocks
//! (`perflab_doctor` walks the registries; `perflab_report::views::doctor` shows it).

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use perflab_sys::SysRoot;

use crate::cli::{DoctorArgs, Global};
use crate::cmd::{common, envelope};

pub fn run(g: &Global, a: DoctorArgs) -> anyhow::Result<i32> {
    let sys = common::sysroot(g)?;
    let working = Working::start(&sys);
    let findings = perflab_doctor::examine(&sys, &perflab_doctor::plugins());
    working.done();
    let tree = (!sys.is_host()).then(|| sys.root());
    let text = perflab_doctor::render_text(&findings);
    let view = perflab_report::views::doctor::view(&findings, &text, tree)?;
    if a.format.is_json() {
        // `fleet doctor` reads `checks` (envelope::unwrap_field).
        envelope::print(&view.json())?;
    } else {
        crate::stdout_guard::print(view.text())?;
    }
    Ok(0)
}

/// A line on a terminal's stderr while the machine is examined, gone when it is done:
/// with /dev/kvm the KVM probe boots a vCPU and a guest, which takes seconds (6.5 s on a
/// VM where nested KVM hangs until its timeout), and a silent pause reads as a hang
/// (issue 34 item 7). Nothing when stderr is a file or a pipe: a script's log gets only
/// the findings.
struct Working(Option<ProgressBar>);

impl Working {
    fn start(sys: &SysRoot) -> Working {
        if !std::io::stderr().is_terminal() {
            return Working(None);
        }
        let what = match probes_kvm(sys) {
            true => "checking this machine; the KVM probe boots a vCPU and a guest, a few seconds",
            false => "checking this machine",
        };
        let bar = ProgressBar::new_spinner();
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg}… {elapsed}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.set_message(what);
        bar.tick();
        bar.enable_steady_tick(Duration::from_millis(120));
        Working(Some(bar))
    }

    fn done(self) {
        if let Some(bar) = self.0 {
            bar.finish_and_clear();
        }
    }
}

/// Whether `examine` will run the KVM probe: on the live machine with /dev/kvm, unless
/// `PERFLAB_GUEST_ACCEL` chose the accelerator (`perflab_knobs::guest::accel`).
fn probes_kvm(sys: &SysRoot) -> bool {
    sys.is_host() && sys.exists("dev/kvm") && std::env::var_os("PERFLAB_GUEST_ACCEL").is_none()
}
