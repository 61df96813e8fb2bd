//! `report --html OUT FILE…`: one self-contained HTML page of saved
//! documents, to open offline or attach to a ticket.
//!
//! Each document is shown as its heading (host, kind, the version that
//! wrote it, the file it was read from), its figure inline
//! ([`Document::figure`]) and its text view ([`Document::render`]: the
//! tables, checks and notes `report FILE` prints, warnings among the
//! notes) as preformatted text, so the page says exactly what the terminal
//! says and no second table renderer exists. Documents of one kind are
//! grouped, and within a group each host's document is a column beside the
//! others, so two hosts' runs read side by side.
//!
//! The page holds no script, no web font and no URL to fetch (the only
//! "http" in it is each figure's SVG namespace, which names and fetches
//! nothing); its style is one inline `<style>`. Everything that came from a
//! file (host names, commands, file names) is escaped with
//! [`xml_text`]. It is written as HTML that is also well-formed XML (void
//! elements closed, the figures' XML declarations dropped), so a test can
//! check its structure with an XML parser. Nothing in it depends on the time, the terminal or the
//! order of a hash map: the same files in the same order give the same
//! bytes.

use crate::report::document::Document;
use crate::report::figure::xml_text;
use crate::report::view::View;
use crate::saved::DocumentKind;
use std::fmt::Write;

/// One document to show, with the name of the file it was read from (its
/// last component, or "standard input"), for its heading.
pub struct PageEntry<'a> {
    pub file: String,
    pub document: &'a dyn Document,
}

/// The page's style: columns that wrap on a narrow window, figures that
/// shrink to their column, text views that scroll sideways rather than
/// wrap a table's lines. The page's grey sets each document's white card
/// apart from it.
const STYLE: &str = "\
body{margin:0;padding:16px 24px 32px;background:#EEF0F2;color:#222222;\
font-family:sans-serif;font-size:14px;line-height:1.4}\
h1{font-size:22px;margin:0 0 4px}\
h2{font-size:18px;margin:24px 0 8px}\
h3{font-size:15px;margin:0 0 2px;overflow-wrap:anywhere}\
.about{margin:0 0 10px;color:#555555;font-size:12px;overflow-wrap:anywhere}\
.hosts{display:grid;grid-template-columns:repeat(auto-fit,minmax(560px,1fr));\
gap:16px;align-items:start}\
article{background:#FFFFFF;border:1px solid #C8C8C8;border-radius:4px;\
padding:12px 14px;min-width:0}\
figure{margin:0 0 10px}\
figure svg{display:block;max-width:100%;height:auto}\
pre{margin:0;padding:8px;background:#F7F7F7;border:1px solid #E2E2E2;\
overflow-x:auto;font-family:monospace;font-size:12px;line-height:1.2}";

/// The text views are drawn as `report FILE` draws them to a file or a
/// pipe: 80 columns, the default columns, UTF-8, whatever the terminal
/// `report --html` ran in (so the page does not depend on it), and narrow
/// enough for two columns side by side.
const TEXT_VIEW: View = View {
    width: View::STANDARD_WIDTH,
    wide: false,
    charset: crate::report::view::Charset::Utf8,
};

/// The page of `entries`: grouped by kind in the order each kind first
/// appears, each group's documents side by side in the order given.
pub fn page(entries: &[PageEntry<'_>]) -> String {
    let mut kinds: Vec<DocumentKind> = Vec::new();
    for entry in entries {
        let kind = entry.document.head().kind;
        if !kinds.contains(&kind) {
            kinds.push(kind);
        }
    }
    let mut hosts: Vec<&str> = entries
        .iter()
        .map(|entry| entry.document.head().host.as_str())
        .collect();
    hosts.sort_unstable();
    hosts.dedup();
    let mut html = String::new();
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n\
         <title>placement-study report: {title}</title>\n<style>{STYLE}</style>\n\
         </head>\n<body>\n<h1>placement-study report</h1>\n\
         <p class=\"about\">{count} saved {documents} from {host_count} {host_word}: \
         {title}</p>\n",
        title = xml_text(&hosts.join(", ")),
        count = entries.len(),
        documents = plural(entries.len(), "document", "documents"),
        host_count = hosts.len(),
        host_word = plural(hosts.len(), "host", "hosts"),
    );
    for kind in kinds {
        let _ = write!(html, "<section>\n<h2>{kind}</h2>\n<div class=\"hosts\">\n");
        for entry in entries
            .iter()
            .filter(|entry| entry.document.head().kind == kind)
        {
            html.push_str(&article(entry));
        }
        html.push_str("</div>\n</section>\n");
    }
    html.push_str("</body>\n</html>\n");
    html
}

/// One document's card: its heading, its figure and its text view.
fn article(entry: &PageEntry<'_>) -> String {
    let head = entry.document.head();
    let figure = entry.document.figure();
    let text = entry.document.render(&TEXT_VIEW);
    let text: Vec<String> = text.lines().map(xml_text).collect();
    format!(
        "<article>\n<h3>{host} — {kind}</h3>\n\
         <p class=\"about\">written by placement-study {version}{incomplete} · {file}</p>\n\
         <figure>\n{svg}</figure>\n<pre>{text}</pre>\n</article>\n",
        host = xml_text(&head.host),
        kind = head.kind,
        version = xml_text(&head.tool_version),
        incomplete = if head.complete {
            ""
        } else {
            " · incomplete: a stop signal ended it"
        },
        file = xml_text(&entry.file),
        svg = inline_svg(&figure),
        text = text.join("\n").trim_end(),
    )
}

/// A figure as an element of the page: the XML declaration that starts a
/// standalone SVG file dropped (HTML would read it as a bogus comment).
fn inline_svg(figure: &str) -> &str {
    figure
        .strip_prefix("<?xml")
        .and_then(|rest| rest.split_once("?>\n"))
        .map_or(figure, |(_, svg)| svg)
}

fn plural(count: usize, one: &'static str, many: &'static str) -> &'static str {
    if count == 1 { one } else { many }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_inline_figure_has_no_xml_declaration() {
        assert_eq!(
            inline_svg("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg/>\n"),
            "<svg/>\n"
        );
        assert_eq!(inline_svg("<svg/>\n"), "<svg/>\n");
    }
}
