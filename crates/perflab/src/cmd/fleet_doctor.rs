//! `perflab fleet doctor`: every host's doctor, asked at once, shown side by side.

use perflab_fleet::doctor::{self, Answer, HostDoctor};
use perflab_fleet::provision::{provision, Local, Unready};
use perflab_fleet::ssh::last_line;

use crate::cli_fleet::FleetDoctorArgs;
use crate::cmd::envelope;
use crate::cmd::fleet_hosts::{host_list, reach_of, ssh_from};

pub fn run(a: FleetDoctorArgs) -> anyhow::Result<i32> {
    let hosts = host_list(&a.hosts)?;
    let (ssh, want) = ssh_from(&reach_of(&a.hosts))?;
    let local = Local::this_build()?;
    let answers: Vec<HostDoctor> = std::thread::scope(|scope| {
        let handles: Vec<_> = hosts
            .iter()
            .map(|h| {
                let (ssh, want, local) = (&ssh, &want, &local);
                scope.spawn(move || {
                    let answer = match provision(ssh, h, want, local) {
                        Err(Unready::Connect(why)) => Answer::Unreachable(why),
                        Err(Unready::Lacks(why)) => Answer::Unreachable(why),
                        Ok(remote) => {
                            // `--json`, which every perflab knows, not `--format json`.
                            let argv = [remote.path.clone(), "doctor".into(), "--json".into()];
                            match ssh.command(h, &argv).output() {
                                Ok(out) if out.status.success() => {
                                    match doctor::parse(&envelope::unwrap_field(
                                        &String::from_utf8_lossy(&out.stdout),
                                        "checks",
                                    )) {
                                        Ok(checks) => Answer::Checks(checks),
                                        Err(e) => Answer::Unreachable(e),
                                    }
                                }
                                Ok(out) => Answer::Unreachable(format!(
                                    "its doctor failed: {}",
                                    last_line(&String::from_utf8_lossy(&out.stderr))
                                )),
                                Err(e) => Answer::Unreachable(format!(
                                    "cannot run {}: {e}",
                                    ssh.program.display()
                                )),
                            }
                        }
                    };
                    HostDoctor {
                        host: h.name.clone(),
                        answer,
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|j| j.join().expect("a doctor thread panicked"))
            .collect()
    });
    if a.format.is_json() {
        #[derive(serde::Serialize)]
        struct Hosts<'a> {
            hosts: &'a [HostDoctor],
        }
        envelope::print(&Hosts { hosts: &answers })?;
    } else {
        crate::stdout_guard::print(doctor::side_by_side(&answers))?;
    }
    // Exit 1 when a host could not be asked, so scripts notice.
    let all = answers
        .iter()
        .all(|h| matches!(h.answer, Answer::Checks(_)));
    Ok(if all { 0 } else { 1 })
}
