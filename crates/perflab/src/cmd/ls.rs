//! `perflab ls`: the stored runs, newest first.

use crate::cli::{Global, LsArgs};
use crate::cmd::common;

pub fn run(g: &Global, a: LsArgs) -> anyhow::Result<i32> {
    let store = common::read_store(g)?;
    let runs = store.runs()?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&runs)?);
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
    for r in runs {
        let host = r.fingerprint["hostname"]
            .as_str()
            .unwrap_or("?")
            .to_string();
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
    Ok(0)
}
