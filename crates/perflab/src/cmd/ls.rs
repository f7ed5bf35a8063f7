//! `perflab ls`: the stored runs, newest first.

use crate::cli::{Global, LsArgs};
use crate::cmd::{common, envelope, hint};
use perflab_store::RunStatus;

pub fn run(g: &Global, a: LsArgs) -> anyhow::Result<i32> {
    let store = common::read_store(g)?;
    let runs = store.runs()?;
    if a.format.is_json() {
        #[derive(serde::Serialize)]
        struct Runs<'a> {
            runs: &'a [perflab_store::RunInfo],
        }
        envelope::print(&Runs { runs: &runs })?;
        return Ok(0);
    }
    if runs.is_empty() {
        println!("no runs in {}", store.location());
        return Ok(0);
    }
    println!(
        "{:>4}  {:<19}  {:<12}  {:<11}  {:>9}  {:<20}  label",
        "run", "created (UTC)", "study", "status", "done/plan", "host"
    );
    let mut interrupted = Vec::new();
    for r in runs {
        if r.status == RunStatus::Interrupted {
            interrupted.push(r.id);
        }
        let host = r.fingerprint.hostname.clone().unwrap_or_else(|| "?".into());
        println!(
            "{:>4}  {:<19}  {:<12}  {:<11}  {:>9}  {:<20}  {}",
            r.id,
            common::utc(r.created_at),
            r.study,
            r.status.as_str(),
            format!("{}/{}", r.done, r.planned),
            host,
            r.label.unwrap_or_default()
        );
    }
    // Oldest first, as a person would pick them up again; a killed run is among these
    // (its claim went with its process).
    for id in interrupted.iter().rev() {
        println!(
            "run {id} interrupted: resume with: perflab run --resume {id}{}",
            hint::db_flag(g)
        );
    }
    Ok(0)
}
