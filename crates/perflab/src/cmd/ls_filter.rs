//! Which stored runs `perflab ls` lists: `--study`, `--label`, `--since` and `--limit`
//! (issue 34 item 9). A database of a year's runs is hundreds of lines; these pick the
//! ones a person is after without a `grep` that loses the header.

use perflab_store::RunInfo;

use crate::cli::LsArgs;
use crate::exit::input;

/// The filters of one `ls`, checked.
#[derive(Debug, Default)]
pub struct Filter {
    study: Option<String>,
    /// Lowercased: a label matches when it contains this, in any case.
    label: Option<String>,
    /// Seconds since the epoch: runs created at or after it.
    since: Option<f64>,
    limit: Option<usize>,
}

impl Filter {
    /// The filters `a` asks for; `now` (seconds since the epoch) is what an age such as
    /// `--since 7d` counts back from.
    pub fn of(a: &LsArgs, now: f64) -> anyhow::Result<Filter> {
        let since = match &a.since {
            None => None,
            Some(text) => Some(since(text, now).map_err(|e| input(format!("--since {e}")))?),
        };
        Ok(Filter {
            study: a.study.clone(),
            label: a.label.as_ref().map(|l| l.to_lowercase()),
            since,
            limit: a.limit.map(|n| n as usize),
        })
    }

    fn keeps(&self, r: &RunInfo) -> bool {
        self.study.as_ref().is_none_or(|s| r.study == *s)
            && self.label.as_ref().is_none_or(|l| {
                r.label
                    .as_ref()
                    .is_some_and(|have| have.to_lowercase().contains(l))
            })
            && self.since.is_none_or(|t| r.created_at >= t)
    }

    /// `runs` (newest first) that pass, at most `--limit` of them, the newest kept.
    pub fn apply(&self, runs: Vec<RunInfo>) -> Vec<RunInfo> {
        let kept = runs.into_iter().filter(|r| self.keeps(r));
        match self.limit {
            Some(n) => kept.take(n).collect(),
            None => kept.collect(),
        }
    }

    /// The filters as typed, for the line that says none matched: ` matching --study
    /// memxfer --since 7d`.
    pub fn describe(&self, a: &LsArgs) -> String {
        let mut out = String::new();
        for (flag, value) in [
            ("--study", &a.study),
            ("--label", &a.label),
            ("--since", &a.since),
        ] {
            if let Some(v) = value {
                out += &format!(" {flag} {}", crate::cmd::hint::shell_quote(v));
            }
        }
        if out.is_empty() {
            out
        } else {
            format!(" matching{out}")
        }
    }
}

/// `--since`'s time: a UTC date as `ls` prints them (`2026-11-18`, `2026-11-18 14:05`,
/// `2026-11-18T14:05:09`), or an age counted back from `now` (`2h`, `7d`).
fn since(text: &str, now: f64) -> Result<f64, String> {
    let t = text.trim();
    if t.len() >= 10 && t.as_bytes()[4] == b'-' {
        return date(t).ok_or_else(|| {
            format!(
                "{text:?}: expected a UTC date YYYY-MM-DD, optionally with HH:MM[:SS], or an \
                 age such as 2h or 7d"
            )
        });
    }
    let age = perflab_core::parse_duration(t)?;
    Ok(now - age)
}

/// `YYYY-MM-DD[( |T)HH:MM[:SS]]` in UTC as seconds since the epoch.
fn date(t: &str) -> Option<f64> {
    let (day, time) = match t.split_once([' ', 'T']) {
        Some((d, rest)) => (d, Some(rest)),
        None => (t, None),
    };
    let num = |s: &str, lo: u32, hi: u32| -> Option<u32> {
        let ok = !s.is_empty() && s.len() <= 4 && s.bytes().all(|b| b.is_ascii_digit());
        ok.then(|| s.parse().ok())
            .flatten()
            .filter(|v| (lo..=hi).contains(v))
    };
    let mut ymd = day.split('-');
    let (y, m, d) = (ymd.next()?, ymd.next()?, ymd.next()?);
    if ymd.next().is_some() || y.len() != 4 {
        return None;
    }
    let (y, m, d) = (num(y, 1970, 9999)?, num(m, 1, 12)?, num(d, 1, 31)?);
    let mut secs = 0;
    if let Some(time) = time {
        let parts: Vec<&str> = time.split(':').collect();
        if !(2..=3).contains(&parts.len()) {
            return None;
        }
        secs = num(parts[0], 0, 23)? * 3600 + num(parts[1], 0, 59)? * 60;
        if let Some(s) = parts.get(2) {
            secs += num(s, 0, 60)?;
        }
    }
    Some(days_from_civil(y as i64, m as i64, d as i64) as f64 * 86_400.0 + f64::from(secs))
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm, the
/// inverse of the one `ls` prints its dates with).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_read_back_as_ls_prints_them() {
        for epoch in [0.0, 1_795_000_000.0, 951_782_400.0] {
            let shown = perflab_report::fmt::utc(epoch);
            assert_eq!(date(&shown), Some(epoch), "{shown}");
        }
        assert_eq!(date("2026-11-18T11:06:40"), Some(1_795_000_000.0));
        assert_eq!(date("2026-11-18 11:06"), Some(1_794_999_960.0));
        assert_eq!(date("2026-11-18"), Some(1_794_960_000.0));
        for bad in [
            "2026-13-01",
            "2026-11-18 25:00",
            "26-11-18",
            "2026-11",
            "2026-11-18 1",
        ] {
            assert_eq!(date(bad), None, "{bad}");
        }
    }

    #[test]
    fn an_age_counts_back_from_now_and_garbage_is_one_line() {
        assert_eq!(since("2h", 10_000.0), Ok(10_000.0 - 7_200.0));
        assert_eq!(since("1d", 100_000.0), Ok(100_000.0 - 86_400.0));
        let e = since("yesterday", 0.0).unwrap_err();
        assert!(e.contains("not a duration") && !e.contains('\n'), "{e}");
        let e = since("2026-02-30x", 0.0).unwrap_err();
        assert!(e.contains("YYYY-MM-DD"), "{e}");
    }
}
