//! `/proc/<pid>/task/<tid>/sched` (present with CONFIG_SCHED_DEBUG): `key : value` lines.

use std::io::BufRead;

/// Reads `se.nr_migrations`; `None` when the file does not carry it.
pub fn parse_nr_migrations(reader: impl BufRead) -> Option<u64> {
    for line in reader.lines() {
        let line = line.ok()?;
        if let Some((key, value)) = line.split_once(':') {
            if key.trim() == "se.nr_migrations" {
                return value.trim().parse().ok();
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_migrations() {
        let text =
            "cat (1714, #threads: 1)\n----\nse.exec_start : 68973.3\nse.nr_migrations   :   7\n";
        assert_eq!(parse_nr_migrations(text.as_bytes()), Some(7));
        assert_eq!(parse_nr_migrations("nothing here\n".as_bytes()), None);
        assert_eq!(
            parse_nr_migrations("se.nr_migrations : x\n".as_bytes()),
            None
        );
    }
}
