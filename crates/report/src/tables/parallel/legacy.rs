//! LEGACY: runs stored before the parallel verdict's metrics carried `busy_measured`
//! (perflab before issue 15) keep the verdict's reasons only in a note's text. For those
//! runs alone the reasons are read back from that text; newer runs are judged again from
//! their stored thread records (`crate::tables::parallel`). Do not extend this reader: the note
//! is for people, its wording may change.

/// The note's fixed start when summing is not valid.
const NOT_VALID: &str = "summing per-thread bandwidths is NOT valid: ";

/// The reasons of an old-form verdict note (what follows its figures), or `None` when
/// the note is not one that says summing is not valid.
pub(crate) fn reasons(note: &str) -> Option<Vec<String>> {
    let rest = note.strip_prefix(NOT_VALID)?;
    let mut parts = rest.split("; ");
    parts.next()?;
    Some(parts.map(str::to_string).collect())
}

/// The first reason in the first of `notes` that is an old-form "NOT valid" note.
pub(crate) fn first_reason(notes: &[String]) -> Option<String> {
    notes
        .iter()
        .find_map(|n| reasons(n).and_then(|r| r.into_iter().next()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A note exactly as perflab wrote it before issue 15 (from a stored xfer run).
    #[test]
    fn an_old_form_note_gives_its_first_reason() {
        let old = "summing per-thread bandwidths is NOT valid: 4 threads: aggregate 2000 \
                   MiB/s, summed 5120 MiB/s, overlap 40%, parallelism 1.30; thread c3t0 \
                   started 10.0 ms after thread c0t0 ended: they never ran together; 4 \
                   threads ran on 1 CPU";
        let notes = vec!["huge pages: 100%".to_string(), old.to_string()];
        assert_eq!(
            first_reason(&notes).as_deref(),
            Some("thread c3t0 started 10.0 ms after thread c0t0 ended: they never ran together")
        );
        assert_eq!(reasons(old).map(|r| r.len()), Some(2));
        let valid = "summing per-thread bandwidths is valid: 2 threads: aggregate 1 MiB/s";
        assert_eq!(first_reason(&[valid.to_string()]), None);
        assert_eq!(reasons(NOT_VALID), Some(vec![]));
    }
}
