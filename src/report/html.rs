//! `report --html OUT FILE…`: one self-contained HTML page of saved
//! documents, to open offline or attach to a ticket.
//!
//! The page opens with a summary: one row per document (host, kind, its
//! verdict, the file), each linking to the document below; with several
//! documents, the comparison of their hosts follows
//! ([`compare::blocks`], the table `report A B` prints, with every
//! column). Each document is
//! then shown as its heading (host, kind, the version that wrote it, the
//! file it was read from), its figure inline ([`Figure::figure`](crate::report::document::Figure::figure)) and its
//! view ([`HumanView::blocks`](crate::report::document::HumanView::blocks), the same blocks `report FILE` prints, with
//! every column, as `--wide` shows them): its lines as paragraphs, its
//! tables as real `<table>`s. No format keeps a second copy of a view.
//! Documents of one kind are grouped, and within a group each host's
//! document is a column beside the others, so two hosts' runs read side by
//! side. A view of its own (`report --fleet`, `report --baseline`) is a
//! page of one card ([`view_page`]).
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

use crate::escape::escape_controls;
use crate::report::blocks::{Block, Blocks, Tone};
use crate::report::compare::{self, HostSummary};
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
/// shrink to their column, views whose wide tables scroll sideways rather
/// than squeeze. The page's grey sets each document's white card apart
/// from it.
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
.view{overflow-x:auto}\
.view p{margin:2px 0}\
.view p.detail{margin-left:1.5em}\
.view p.answer{font-weight:bold}\
.view p.banner{font-weight:bold;color:#A00000}\
.view p.fixed{font-family:monospace;white-space:pre;font-size:12px}\
h4{font-size:14px;margin:12px 0 4px}\
table{border-collapse:collapse;font-size:12px;margin:4px 0 6px}\
th,td{border:1px solid #D0D0D0;padding:2px 6px;text-align:left;vertical-align:top}\
th{background:#F0F2F4}\
th.number,td.number{text-align:right}\
table.summary{font-size:13px;background:#FFFFFF}\
.compared table{background:#FFFFFF}";

/// The views are built as `report FILE --wide` builds them, whatever the
/// terminal `report --html` ran in (so the page does not depend on it):
/// every column, the marks spelt out ("(not quotable)"), UTF-8.
pub const PAGE_VIEW: View = View {
    width: View::STANDARD_WIDTH,
    wide: true,
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
    let mut html = head(&format!("placement-study report: {}", hosts.join(", ")));
    let _ = write!(
        html,
        "<h1>placement-study report</h1>\n\
         <p class=\"about\">{count} saved {documents} from {host_count} {host_word}: \
         {title}</p>\n",
        title = xml_text(&escape_controls(&hosts.join(", "))),
        count = entries.len(),
        documents = plural(entries.len(), "document", "documents"),
        host_count = hosts.len(),
        host_word = plural(hosts.len(), "host", "hosts"),
    );
    html.push_str(&summary(entries));
    if entries.len() > 1 {
        html.push_str(&compared(entries));
    }
    for kind in kinds {
        let _ = write!(html, "<section>\n<h2>{kind}</h2>\n<div class=\"hosts\">\n");
        for (index, entry) in entries.iter().enumerate() {
            if entry.document.head().kind == kind {
                html.push_str(&article(index, entry));
            }
        }
        html.push_str("</div>\n</section>\n");
    }
    html.push_str("</body>\n</html>\n");
    html
}

/// A page of one view of its own, titled `title`: `report --fleet`'s, or
/// `report --baseline`'s with its `figure` (an SVG file's text) above it.
/// The view is built by the caller with [`PAGE_VIEW`].
pub fn view_page(title: &str, figure: Option<&str>, blocks: &Blocks) -> String {
    let mut html = head(title);
    let _ = write!(
        html,
        "<h1>{}</h1>\n<article>\n",
        xml_text(&escape_controls(title))
    );
    if let Some(figure) = figure {
        let _ = write!(html, "<figure>\n{}</figure>\n", inline_svg(figure));
    }
    let _ = write!(
        html,
        "<div class=\"view\">\n{}</div>\n</article>\n</body>\n</html>\n",
        blocks.to_html()
    );
    html
}

/// Everything a page holds before its heading: its title (escaped here),
/// its style, up to the opening `<body>`.
fn head(title: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n\
         <title>{title}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        title = xml_text(&escape_controls(title)),
    )
}

/// The documents' hosts, each named by its file as the page names it: the
/// rows of the comparison a page of several documents opens with.
pub fn compared_hosts(entries: &[PageEntry<'_>]) -> Vec<HostSummary> {
    entries
        .iter()
        .map(|entry| entry.document.summary(entry.file.clone()))
        .collect()
}

/// The comparison of the documents' hosts, as `report A B` prints it
/// with every column ([`compared_hosts`]).
fn compared(entries: &[PageEntry<'_>]) -> String {
    let hosts = compared_hosts(entries);
    format!(
        "<section>\n<h2>Hosts compared</h2>\n<div class=\"view compared\">\n{}</div>\n\
         </section>\n",
        compare::blocks(&hosts, &PAGE_VIEW).to_html()
    )
}

/// The summary every page opens with: per document, in the order given,
/// its host, kind, first line (its verdict) and file, linking to its card.
fn summary(entries: &[PageEntry<'_>]) -> String {
    let mut rows = String::new();
    for (index, entry) in entries.iter().enumerate() {
        let head = entry.document.head();
        let blocks = entry.document.blocks(&PAGE_VIEW);
        let verdict = blocks.iter().find_map(|block| match block {
            Block::Line {
                text,
                tone: Tone::Answer,
                ..
            } => Some(text.as_str()),
            _ => None,
        });
        let _ = writeln!(
            rows,
            "<tr><td><a href=\"#document-{index}\">{host}</a></td><td>{kind}</td><td>{verdict}</td>\
             <td>{file}</td></tr>",
            host = xml_text(&escape_controls(&head.host)),
            kind = head.kind,
            verdict = xml_text(&escape_controls(verdict.unwrap_or("—"))),
            file = xml_text(&escape_controls(&entry.file)),
        );
    }
    format!(
        "<h2>Summary</h2>\n<table class=\"summary\">\n<tr><th>host</th><th>kind</th>\
         <th>verdict</th><th>file</th></tr>\n{rows}</table>\n"
    )
}

/// One document's card, `document-INDEX` to the summary's links: its
/// heading, its figure and its view.
fn article(index: usize, entry: &PageEntry<'_>) -> String {
    let head = entry.document.head();
    let figure = entry.document.figure();
    let view = entry.document.blocks(&PAGE_VIEW).to_html();
    format!(
        "<article id=\"document-{index}\">\n<h3>{host} — {kind}</h3>\n\
         <p class=\"about\">written by placement-study {version}{incomplete} · {file}</p>\n\
         <figure>\n{svg}</figure>\n<div class=\"view\">\n{view}</div>\n</article>\n",
        host = xml_text(&escape_controls(&head.host)),
        kind = head.kind,
        version = xml_text(&escape_controls(&head.tool_version)),
        incomplete = if head.complete {
            ""
        } else {
            " · incomplete: a stop signal ended it"
        },
        file = xml_text(&escape_controls(&entry.file)),
        svg = inline_svg(&figure),
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
