//! `report --markdown OUT FILE…`: saved documents as Markdown (CommonMark
//! with GitHub's pipe tables), to paste into a ticket or a pull request.
//! With several documents, the comparison of their hosts comes first
//! ([`compare::blocks`], the table `report A B` prints, with every
//! column). Each document is a section headed by its host, kind and file,
//! then its view ([`HumanView::blocks`](crate::report::document::HumanView::blocks), with every column, as `--wide` and the HTML
//! page show it) drawn by [`Blocks::to_markdown`]:
//! the same blocks as the terminal's and the page's, so no view is written
//! twice. Figures are left out (Markdown cannot hold them inline; `--html`
//! or `--svg` draw them). The same files give the same bytes. A view of
//! its own (`report --fleet`, `report --baseline`) is [`titled`].

use crate::escape::escape_controls;
use crate::report::blocks::Blocks;
use crate::report::compare;
use crate::report::html::{PAGE_VIEW, PageEntry, compared_hosts};

/// Every entry, in the order given, a `##` section each, after the
/// comparison of their hosts when there are several.
pub fn page(entries: &[PageEntry<'_>]) -> String {
    let mut out = String::from("# placement-study report\n\n");
    if entries.len() > 1 {
        let hosts = compared_hosts(entries);
        out += "## Hosts compared\n\n";
        out += &compare::blocks(&hosts, &PAGE_VIEW).to_markdown();
    }
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

/// A view of its own under the heading `title`, Markdown already (text
/// from outside in it escaped or in backticks); built by the caller with
/// [`PAGE_VIEW`].
pub fn titled(title: &str, blocks: &Blocks) -> String {
    format!("# {title}\n\n{}", blocks.to_markdown())
}
