//! Word wrapping for plain-text output.

/// Wraps `text` at `width` columns: words move to the next line, which starts with
/// `indent`; a word longer than a line is cut, so no line is ever wider than `width`.
/// Existing line breaks are kept.
pub fn wrap(text: &str, width: usize, indent: &str) -> Vec<String> {
    // A line must hold the indent and at least one character after it.
    let width = width.max(indent.chars().count() + 1);
    let mut out = Vec::new();
    for (n, source) in text.split('\n').enumerate() {
        let mut line = if n == 0 {
            String::new()
        } else {
            indent.to_string()
        };
        let mut has_word = false;
        for word in source.split(' ').filter(|w| !w.is_empty()) {
            let len = line.chars().count();
            let wlen = word.chars().count();
            if has_word && len + 1 + wlen > width {
                out.push(line);
                line = indent.to_string();
                has_word = false;
            }
            if has_word {
                line.push(' ');
            }
            let mut rest: Vec<char> = word.chars().collect();
            // A word that cannot fit a fresh line is cut into pieces that do.
            while line.chars().count() + rest.len() > width {
                let room = width - line.chars().count();
                if room == 0 {
                    out.push(line);
                    line = indent.to_string();
                    continue;
                }
                line.extend(rest.drain(..room));
                out.push(line);
                line = indent.to_string();
            }
            line.extend(rest);
            has_word = true;
        }
        out.push(line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_at_words_and_cuts_long_ones() {
        assert_eq!(wrap("aa bb cc", 5, ""), vec!["aa bb", "cc"]);
        assert_eq!(
            wrap("x 0123456789012345", 10, "  "),
            vec!["x", "  01234567", "  89012345"]
        );
        assert_eq!(wrap("one\ntwo", 72, "  "), vec!["one", "  two"]);
        assert_eq!(wrap("", 72, ""), vec![""]);
    }

    proptest::proptest! {
        #[test]
        fn no_line_is_wider_than_asked(text in "[a-z µ×\\n]{0,300}", width in 10usize..100) {
            for line in wrap(&text, width, "    ") {
                proptest::prop_assert!(line.chars().count() <= width, "{line:?}");
            }
        }
    }
}
