//! Sizes and durations as people write them: parsed from `32K`, `2M`, `500ms`, `1d`, and
//! printed back the same way, so an error states a bound in the form the user would type
//! (`1d`, not `86400s`; `1G`, not `1073741824`).

pub mod with_units;

/// Parses a size in bytes: `4096`, `32K`, `32KiB`, `2M`, `1G`, `1T` (binary multiples;
/// a trailing `B` is allowed).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let bad = || format!("{text:?} is not a size (try 4096, 32K, 2M or 1G)");
    let t = text.trim();
    let t = t
        .strip_suffix("iB")
        .or_else(|| t.strip_suffix('B'))
        .unwrap_or(t);
    let (num, shift) = match t.chars().last() {
        Some('K' | 'k') => (&t[..t.len() - 1], 10),
        Some('M' | 'm') => (&t[..t.len() - 1], 20),
        Some('G' | 'g') => (&t[..t.len() - 1], 30),
        Some('T' | 't') => (&t[..t.len() - 1], 40),
        _ => (t, 0),
    };
    let n: u64 = num.trim().parse().map_err(|_| bad())?;
    n.checked_mul(1u64 << shift).ok_or_else(bad)
}

const SIZE_UNITS: [(u32, &str); 4] = [(40, "T"), (30, "G"), (20, "M"), (10, "K")];

/// Formats bytes the way people write buffer sizes: `32K`, `2M`, `1G`, else bytes. The
/// text parses back to exactly `bytes` (it names parameter values and pools).
pub fn format_size(bytes: u64) -> String {
    for (shift, suffix) in SIZE_UNITS {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{}{suffix}", bytes >> shift);
        }
    }
    bytes.to_string()
}

/// An amount of memory for a person to read, in the same units as [`format_size`]: exact
/// where it is a whole number of them (`1M`), else three significant digits of the
/// largest that fits (`95.4M` for 100,000,000 bytes), so a message never mixes `1M` with
/// `100000000`.
pub fn format_bytes(bytes: u64) -> String {
    for (shift, suffix) in SIZE_UNITS {
        if bytes >= 1 << shift {
            if bytes.is_multiple_of(1 << shift) {
                return format!("{}{suffix}", bytes >> shift);
            }
            let v = bytes as f64 / (1u64 << shift) as f64;
            let decimals = if v >= 100.0 {
                0
            } else if v >= 10.0 {
                1
            } else {
                2
            };
            return format!("{v:.decimals$}{suffix}");
        }
    }
    bytes.to_string()
}

/// Suffixes of [`parse_duration`], longest first where one ends another (`ms` before
/// `s`), with the seconds they stand for as (multiplier, divisor): sub-second units
/// divide, so 50us is 50 / 1e6, the 5e-5 that the stored text reads back as (50 × 1e-6
/// is not, and a stored run would no longer match its plan).
const DURATION_UNITS: [(&str, f64, f64); 7] = [
    ("ns", 1.0, 1e9),
    ("us", 1.0, 1e6),
    ("ms", 1.0, 1e3),
    ("s", 1.0, 1.0),
    ("m", 60.0, 1.0),
    ("h", 3600.0, 1.0),
    ("d", 86_400.0, 1.0),
];

/// Parses a duration: `10s`, `250ms`, `50us`, `100ns`, `2m`, `1h`, `1d`, `1.5` (seconds).
pub fn parse_duration(text: &str) -> Result<f64, String> {
    let bad = || format!("{text:?} is not a duration (try 10s, 500ms, 2m or 1d)");
    let t = text.trim();
    let (num, mul, div) = DURATION_UNITS
        .iter()
        .find_map(|&(suffix, mul, div)| t.strip_suffix(suffix).map(|n| (n, mul, div)))
        .unwrap_or((t, 1.0, 1.0));
    let v: f64 = num.trim().parse().map_err(|_| bad())?;
    if !v.is_finite() || v < 0.0 {
        return Err(bad());
    }
    Ok(v * mul / div)
}

/// A duration in seconds as a person writes it: the largest unit of [`parse_duration`]
/// that holds it a whole number of times (`1d`, `2m`, `500ms`, `1ns`), else seconds.
pub fn format_duration(seconds: f64) -> String {
    if seconds == 0.0 {
        return "0s".into();
    }
    for &(suffix, mul, div) in DURATION_UNITS.iter().rev() {
        let n = seconds * div / mul;
        // 5e-5 × 1e6 is 50 give or take the last bit: whole within rounding.
        let whole = n.round();
        if (1.0..1e15).contains(&whole) && (n - whole).abs() <= 1e-9 * whole {
            return format!("{whole}{suffix}");
        }
    }
    format!("{}s", format_number(seconds))
}

/// A number as a person reads it in an error: `-1e308`, not its 309 digits.
pub fn format_number(v: f64) -> String {
    if v.is_finite() && (v.abs() >= 1e12 || (v != 0.0 && v.abs() < 1e-4)) {
        format!("{v:e}")
    } else {
        v.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_and_format() {
        assert_eq!(parse_size("32K").unwrap(), 32 << 10);
        assert_eq!(parse_size("64KiB").unwrap(), 64 << 10);
        assert_eq!(parse_size("2MB").unwrap(), 2 << 20);
        assert_eq!(parse_size("1g").unwrap(), 1 << 30);
        assert_eq!(parse_size("1 GiB").unwrap(), 1 << 30);
        assert_eq!(parse_size("4096").unwrap(), 4096);
        assert!(parse_size("1.5G").is_err());
        assert!(parse_size("99999999999T").is_err());
        assert!(parse_size("").is_err());
        assert_eq!(format_size(32 << 10), "32K");
        assert_eq!(format_size(1 << 30), "1G");
        assert_eq!(format_size(1000), "1000");
    }

    /// The stand-in's free memory (100,000,000 bytes) and a 1 MiB buffer in one message:
    /// one way of writing both.
    #[test]
    fn amounts_read_in_the_units_of_sizes() {
        assert_eq!(format_bytes(100_000_000), "95.4M");
        assert_eq!(format_bytes(1 << 20), "1M");
        assert_eq!(format_bytes(4 << 30), "4G");
        assert_eq!(format_bytes(1536), "1.50K");
        assert_eq!(format_bytes(150 << 30), "150G");
        assert_eq!(format_bytes(1000), "1000");
        assert_eq!(format_bytes(0), "0");
    }

    #[test]
    fn durations_parse_in_every_unit_from_ns_to_days() {
        assert_eq!(parse_duration("2m").unwrap(), 120.0);
        assert_eq!(parse_duration("250ms").unwrap(), 0.25);
        assert_eq!(parse_duration("3").unwrap(), 3.0);
        assert_eq!(parse_duration("1d").unwrap(), 86_400.0);
        assert_eq!(parse_duration("1h").unwrap(), 3600.0);
        assert_eq!(parse_duration("1ns").unwrap(), 1e-9);
        // Exactly the value the text of the result reads back as.
        assert_eq!(parse_duration("50us").unwrap(), 5e-5);
        assert_eq!(parse_duration("0.3ms").unwrap(), 3e-4);
        assert!(parse_duration("fast").is_err());
        assert!(parse_duration("NaNs").is_err());
        assert!(parse_duration("-1s").is_err());
        assert!(parse_duration("1w").is_err());
    }

    #[test]
    fn durations_print_in_the_largest_whole_unit() {
        for (s, text) in [
            (86_400.0, "1d"),
            (3600.0, "1h"),
            (120.0, "2m"),
            (90.0, "90s"),
            (0.5, "500ms"),
            (0.001, "1ms"),
            (5e-5, "50us"),
            (1e-9, "1ns"),
            (0.0, "0s"),
            (1.5e-10, "1.5e-10s"),
        ] {
            assert_eq!(format_duration(s), text);
            if s > 1e-9 || s == 0.0 {
                assert_eq!(parse_duration(text).unwrap(), s, "{text}");
            }
        }
    }
}
