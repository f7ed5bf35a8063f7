//! The width of the terminal standard output goes to, for the text that is fitted to it
//! (`perflab_report::doc::text::set_terminal_width`): `$COLUMNS` when set, as `ls` and
//! other programs take it, else the terminal's own window size, else 80. None in a pipe
//! or a file: a script, `grep` or a diff gets every table whole, one line per row.

use std::io::IsTerminal;

/// Where a terminal says nothing of its size (a serial console).
const FALLBACK: usize = 80;

/// The columns standard output has, or `None` when it is not a terminal.
pub fn stdout_columns() -> Option<usize> {
    if !std::io::stdout().is_terminal() {
        return None;
    }
    let env = std::env::var("COLUMNS").ok();
    Some(
        from_env(env.as_deref())
            .or_else(window_columns)
            .unwrap_or(FALLBACK),
    )
}

/// `$COLUMNS` when it is a positive number.
fn from_env(value: Option<&str>) -> Option<usize> {
    value?.trim().parse().ok().filter(|&c| c > 0)
}

/// The window size the terminal reports for standard output (0 columns: it does not know).
fn window_columns() -> Option<usize> {
    let mut ws = libc::winsize {
        ws_row: 0,
        ws_col: 0,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCGWINSZ writes one winsize into the struct we own; fd 1 is only read.
    let rc = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut ws) };
    (rc == 0 && ws.ws_col > 0).then_some(usize::from(ws.ws_col))
}

#[cfg(test)]
mod tests {
    #[test]
    fn columns_is_a_positive_number_or_nothing() {
        assert_eq!(super::from_env(Some("132")), Some(132));
        assert_eq!(super::from_env(Some(" 90\n")), Some(90));
        for bad in [None, Some(""), Some("0"), Some("-5"), Some("wide")] {
            assert_eq!(super::from_env(bad), None, "{bad:?}");
        }
    }
}
