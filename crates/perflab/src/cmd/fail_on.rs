//! `compare --fail-on`: the CI gate. The tables print as usual; when any row reads a
//! verdict the gate fails on, the rows that did are listed last (on stderr, so a script
//! reading stdout keeps its table or JSON) and perflab exits [`crate::exit::GATE`].

use perflab_report::ComparisonTable;
use perflab_stats::Verdict;

use crate::cli::FailOn;

/// Whether `verdict` trips any of `gates`.
fn trips(verdict: Verdict, gates: &[FailOn]) -> bool {
    gates.iter().any(|g| match g {
        FailOn::Worse => verdict == Verdict::Regressed,
        FailOn::Better => verdict == Verdict::Improved,
        FailOn::Changed => verdict.moved(),
        FailOn::Undecided => verdict == Verdict::Undecided,
    })
}

/// The rows of `table` that trip `gates`, each as `label (change verdict)`.
pub fn tripped(table: &ComparisonTable, gates: &[FailOn]) -> Vec<String> {
    table
        .rows
        .iter()
        .filter(|r| trips(r.cmp.verdict, gates))
        .map(|r| {
            let change = r
                .cmp
                .change_pct
                .map_or("n/a".to_string(), |c| format!("{c:+.2}%"));
            format!("{} ({change} {})", r.label, r.cmp.symbol())
        })
        .collect()
}

/// The last line of a gate that failed.
pub fn line(gates: &[FailOn], rows: &[String], of: usize) -> String {
    let names: Vec<String> = gates
        .iter()
        .map(|g| format!("{g:?}").to_lowercase())
        .collect();
    format!(
        "perflab: --fail-on {}: {} of {of} rows: {}",
        names.join(","),
        rows.len(),
        rows.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_gate_trips_on_its_verdicts_only() {
        use Verdict::*;
        let all = [Improved, Regressed, Changed, Same, Undecided];
        let hit = |g: FailOn| -> Vec<Verdict> {
            all.iter().copied().filter(|v| trips(*v, &[g])).collect()
        };
        assert_eq!(hit(FailOn::Worse), [Regressed]);
        assert_eq!(hit(FailOn::Better), [Improved]);
        assert_eq!(hit(FailOn::Changed), [Improved, Regressed, Changed]);
        assert_eq!(hit(FailOn::Undecided), [Undecided]);
        assert!(!trips(
            Same,
            &[FailOn::Worse, FailOn::Better, FailOn::Undecided]
        ));
    }
}
