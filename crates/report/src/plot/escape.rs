//! Escaping for every piece of text a plot emits: names, labels and notes come from users.

/// Escapes `s` for XML text and attribute values (and so for HTML too).
///
/// Control characters other than tab and newline are dropped, since XML 1.0 forbids them
/// and one stray byte in a variant name would make the whole SVG unparseable.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\t' | '\n' => out.push(c),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(
            escape(r#"<a href="x">&'</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;"
        );
    }

    #[test]
    fn drops_control_characters_but_keeps_text() {
        assert_eq!(escape("a\u{0}b\u{1b}c µs"), "abc µs");
    }
}
