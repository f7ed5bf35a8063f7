//! Blocks as one self-contained HTML page: inline CSS, inline SVG figures, no script and
//! no reference to anything outside the file, so it opens offline and can be attached
//! to a mail or a bug.

use std::fmt::Write as _;

use crate::doc::Block;
pub use crate::plot::escape;

/// The page's style: readable tables, figures that fit the window, print-friendly.
const STYLE: &str = "\
body{font-family:system-ui,sans-serif;margin:2em auto;max-width:72em;padding:0 1em;color:#1a1a1a}
h1{font-size:1.6em;border-bottom:2px solid #ccc;padding-bottom:.2em}
h2{font-size:1.3em;margin-top:2em;border-bottom:1px solid #ddd}
h3{font-size:1.1em;margin-top:1.5em}
table{border-collapse:collapse;margin:.8em 0;font-size:.9em}
th,td{padding:.2em .6em;border-bottom:1px solid #e4e4e4;white-space:nowrap}
th{background:#f4f4f4;text-align:left}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
tr:hover td{background:#fafae0}
figure.plot{margin:1em 0}
p.no-plot{color:#555;font-style:italic}
figure.plot svg{width:100%;height:auto;border:1px solid #eee}
figcaption{font-size:.9em;color:#444;margin-bottom:.3em}
p.note,li{font-size:.95em}
.verdict-better{color:#06702b;font-weight:600}
.verdict-worse{color:#b00020;font-weight:600}
.verdict-same{color:#555}
.verdict-undecided{color:#8a6d00;font-style:italic}
";

/// Nothing outside the file may load, even if a name in the report looked like a URL:
/// the page is safe to open from a mail attachment and works offline by construction.
pub const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src data:";

/// The whole page for `blocks`, titled `title`.
pub fn render(title: &str, blocks: &[Block]) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">\n\
         <meta name=\"generator\" content=\"perflab {}\">\n<title>{}</title>\n\
         <style>\n{STYLE}</style>\n</head>\n<body>\n",
        perflab_core::VERSION,
        escape(title)
    );
    for b in blocks {
        match b {
            Block::Heading { level, text } => {
                let l = (*level).clamp(1, 6);
                let _ = writeln!(out, "<h{l}>{}</h{l}>", escape(text));
            }
            Block::Pre(text) => {
                let _ = writeln!(out, "<pre>{}</pre>", escape(text));
            }
            Block::Caption(text) => {
                let _ = writeln!(out, "<p><strong>{}</strong></p>", escape(text));
            }
            Block::Para(text) | Block::Note(text) => {
                for p in text.split('\n') {
                    let _ = writeln!(out, "<p>{}</p>", escape(p));
                }
            }
            Block::Table(t) => {
                out.push_str("<table>\n<thead><tr>");
                for (i, h) in t.joined_head().iter().enumerate() {
                    let _ = write!(out, "<th{}>{}</th>", class(t.left.contains(&i)), escape(h));
                }
                out.push_str("</tr></thead>\n<tbody>\n");
                for row in &t.rows {
                    out.push_str("<tr>");
                    for (i, c) in row.iter().enumerate() {
                        let _ = write!(
                            out,
                            "<td{}>{}</td>",
                            cell_class(t.left.contains(&i), c),
                            escape(c)
                        );
                    }
                    out.push_str("</tr>\n");
                }
                out.push_str("</tbody>\n</table>\n");
            }
            Block::List { title, items } => {
                if items.is_empty() {
                    continue;
                }
                let _ = writeln!(
                    out,
                    "<p class=\"note\"><strong>{}:</strong></p>\n<ul>",
                    escape(title)
                );
                for i in items {
                    let _ = writeln!(out, "<li>{}</li>", escape(i));
                }
                out.push_str("</ul>\n");
            }
            Block::Figure(html) => {
                out.push_str(html);
                out.push('\n');
            }
        }
    }
    out.push_str("</body>\n</html>\n");
    out
}

fn class(left: bool) -> &'static str {
    if left {
        ""
    } else {
        " class=\"num\""
    }
}

/// Verdict words stand out; numbers line up on the right.
fn cell_class(left: bool, cell: &str) -> &'static str {
    match cell {
        "better" => " class=\"verdict-better\"",
        "WORSE" => " class=\"verdict-worse\"",
        "same" => " class=\"verdict-same\"",
        "undecided" => " class=\"verdict-undecided\"",
        _ => class(left),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doc::Table;

    #[test]
    fn page_escapes_text_and_keeps_figures() {
        let page = render(
            "run <1>",
            &[
                Block::heading(2, "a & b"),
                Block::Table(Table::new(
                    vec!["point".into(), "median".into(), "verdict".into()],
                    vec![vec!["<x>".into(), "1.00".into(), "WORSE".into()]],
                    vec![0, 2],
                )),
                Block::Figure("<figure class=\"plot\"><svg></svg></figure>".into()),
            ],
        );
        assert!(page.contains("<title>run &lt;1&gt;</title>"));
        assert!(page.contains("<h2>a &amp; b</h2>"));
        assert!(page.contains("<td>&lt;x&gt;</td><td class=\"num\">1.00</td>"));
        assert!(page.contains("<td class=\"verdict-worse\">WORSE</td>"));
        assert!(page.contains("<figure class=\"plot\"><svg></svg></figure>"));
        assert!(
            !page.contains("http:") && !page.contains("https:"),
            "no address"
        );
        assert!(page.contains(CSP), "nothing may load from the network");
    }
}
