//! `report --markdown OUT FILE…`: saved documents as Markdown (CommonMark
//! with GitHub's pipe tables), to paste into a ticket or a pull request.
//! Each document is a section headed by its host, kind and file, then its
//! view ([`HumanView::blocks`](crate::report::document::HumanView::blocks), with every column, as `--wide` and the HTML
//! page show it) drawn by [`Blocks::to_markdown`](crate::report::blocks::Blocks::to_markdown):
//! the same blocks as the terminal's and the page's, so no view is written
//! twice. Figures are left out (Markdown cannot hold them inline; `--html`
//! or `--svg` draw them). The same files give the same bytes.

use crate::escape::escape_controls;
use crate::report::html::PageEntry;
use crate::report::view::{Charset, View};

/// The views are built as `report FILE --wide` builds them, whatever the
/// terminal: every column, the marks spelt out, UTF-8.
pub const PAGE_VIEW: View = View {
    width: View::STANDARD_WIDTH,
    wide: true,
    charset: Charset::Utf8,
};

/// Every entry, in the order given, a `##` section each.
pub fn page(entries: &[PageEntry<'_>]) -> String {
    let mut out = String::from("# placement-study report\n\n");
    for entry in entries {
        let head = entry.document.head();
        // Headings are text: backticks keep a host name from being markup.
        out += &format!(
            "## `{}` — {} (`{}`)\n\n",
            escape_controls(&head.host).replace('`', "'"),
            head.kind,
            escape_controls(&entry.file).replace('`', "'"),
        );
        out += &entry.document.blocks(&PAGE_VIEW).to_markdown();
        out.push('\n');
    }
    out
}
