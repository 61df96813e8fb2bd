//! The view model: what a kind's view says, as a list of blocks (lines of
//! prose, headings, tables, gaps) that any renderer draws. A kind's view
//! builds [`Blocks`] once; the terminal ([`Blocks::to_terminal`], 80
//! columns or `--wide`), `report --html` ([`Blocks::to_html`]) and
//! `report --markdown` ([`Blocks::to_markdown`]) draw the same blocks, so
//! no format keeps a second copy of a view.
//!
//! Text from outside (a host name, a command line, a thread name, a
//! warning's words) reaches a view inside a block's text, and each block
//! is one line of the view's meaning: a line break inside it came from
//! outside. So every renderer escapes every control character of a block's
//! text, line breaks included, in this one place, before the terminal
//! wraps it: a saved document whose host reads "x\n\nvalid study" shows
//! `x\n\nvalid study` on one line, in every view of every kind.

use crate::escape::escape_controls;
use crate::report::figure::xml_text;
use crate::report::view::{Charset, View};
use crate::units::wrap_words;
use std::fmt::Write;
use tabled::builder::Builder;
use tabled::settings::object::{Columns, Segment};
use tabled::settings::style::HorizontalLine;
use tabled::settings::{Alignment, Format, Style};
use tabled::{Table, Tabled};

/// A word longer than this may be broken when its column must narrow (a
/// path, a long CPU list); shorter ones, every number among them, never are.
const LONGEST_UNBROKEN: usize = 16;

/// Draws `table`. In the default view a table wider than the view has
/// columns wrapped between words until it fits: first the headings wider
/// than their column's cells, then the widest columns, the widest first. A
/// column never narrows below its longest word (up to `LONGEST_UNBROKEN`
/// characters), so no number is cut, and a table that cannot shrink that
/// far stays wider. `--wide` draws every cell on one line. Every cell is
/// first escaped and put in the view's charset ([`View::for_terminal_text`]):
/// done on the cells, before their widths are measured, a host name's
/// escape or an "→" spelt "->" widens its column and the columns stay in
/// line.
pub fn fit(mut table: Table, view: &View) -> String {
    let shown = *view;
    table.modify(
        Segment::all(),
        Format::content(move |text| shown.for_terminal_text(text).into_owned()),
    );
    match view.charset {
        Charset::Utf8 => table.with(Style::sharp()),
        // Drawn as sharp is, in ASCII: a line under the heading only.
        Charset::Ascii => table.with(
            Style::ascii()
                .remove_horizontal()
                .horizontals([(1, HorizontalLine::full('-', '+', '+', '+'))]),
        ),
    };
    let mut excess = table.total_width().saturating_sub(view.width);
    if view.wide || excess == 0 {
        return table.to_string();
    }
    let columns = table.count_columns();
    let longest =
        |words: &mut dyn Iterator<Item = &str>| words.map(|w| w.chars().count()).max().unwrap_or(0);
    // Per column: its width, its widest cell below the heading, its longest word.
    let mut widths = vec![0; columns];
    let mut cells = vec![0; columns];
    let mut words = vec![1; columns];
    for (row, records) in table.get_records().iter().enumerate() {
        for (column, cell) in records.iter().enumerate() {
            let text = cell.as_ref();
            let width = longest(&mut text.lines());
            widths[column] = widths[column].max(width);
            if row > 0 {
                cells[column] = cells[column].max(width);
            }
            let word = longest(&mut text.split_whitespace()).min(LONGEST_UNBROKEN);
            words[column] = words[column].max(word);
        }
    }
    let natural = widths.clone();
    let headings_only: Vec<usize> = cells.iter().zip(&words).map(|(&c, &w)| c.max(w)).collect();
    for floors in [headings_only, words] {
        while excess > 0 {
            // The widest column that can still narrow; of equals, the rightmost.
            let Some(column) = (0..columns)
                .filter(|&c| widths[c] > floors[c])
                .max_by_key(|&c| (widths[c], c))
            else {
                break;
            };
            widths[column] -= 1;
            excess -= 1;
        }
    }
    for (column, (&width, &natural)) in widths.iter().zip(&natural).enumerate() {
        if width < natural {
            table.modify(
                Columns::one(column),
                Format::content(move |text| wrap_words(text, width, width).join("\n")),
            );
        }
    }
    table.to_string()
}

/// The human view, as blocks ([`Blocks`]): each kind's in its view's
/// module (`report::gate`, …).
pub trait HumanView {
    /// The view with the columns `view` asks for (`--wide` or not).
    fn blocks(&self, view: &View) -> Blocks;

    /// The view as the terminal shows it, as wide as `view` allows.
    fn render(&self, view: &View) -> String {
        self.blocks(view).to_terminal(view)
    }
}

/// How a line of prose stands out where a renderer can show it (HTML,
/// Markdown); the terminal draws every line alike.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tone {
    /// An ordinary line.
    Plain,
    /// The answer: a verdict or the study's sentence.
    Answer,
    /// A `*** … ***` banner: what every number below must be read with.
    Banner,
}

/// One block of a view.
#[derive(Clone, Debug, PartialEq)]
pub enum Block {
    /// A line of prose: wrapped at the terminal's width, its further lines
    /// indented by `indent` spaces.
    Line {
        text: String,
        indent: usize,
        tone: Tone,
    },
    /// A line of an aligned listing (a core, an environment field): never
    /// wrapped, so it reads, and greps, as one line.
    Fixed(String),
    /// The title of the part that follows ("Checks", "Notes").
    Heading(String),
    /// An empty line between parts.
    Gap,
    /// A table.
    Table(Grid),
    /// Checks, each its status, name and detail: on a terminal a line
    /// each, the detail wrapped under itself; elsewhere a table.
    Checks(Vec<[String; 3]>),
}

/// A table's cells, the header row first: text as the terminal shows it,
/// marks and all. Each cell is one line of meaning, as a [`Block::Line`]
/// is: the terminal wraps it to fit, and escapes a line break in it. A
/// cell may hold several such lines, one under the other (a host over its
/// CPU in `report A B`): the terminal draws them so, HTML and Markdown
/// break the cell's line between them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Grid {
    /// Each row's cells, each cell its lines.
    rows: Vec<Vec<Vec<String>>>,
    /// The columns of counts, aligned to the right.
    right: Vec<usize>,
}

impl Grid {
    /// Adds a row below the others, a line a cell: the first is the header.
    pub fn push<S: Into<String>>(&mut self, row: impl IntoIterator<Item = S>) {
        self.rows
            .push(row.into_iter().map(|cell| vec![cell.into()]).collect());
    }

    /// Adds a row whose cells are each the lines given.
    pub fn push_lines(&mut self, row: impl IntoIterator<Item = Vec<String>>) {
        self.rows.push(row.into_iter().collect());
    }

    /// A table of `rows`, headed by their fields' names.
    pub fn of_rows<T: Tabled>(rows: impl IntoIterator<Item = T>) -> Grid {
        let mut grid = Grid::default();
        grid.push(T::headers());
        for row in rows {
            grid.push(row.fields());
        }
        grid
    }

    /// Aligns the cells of `columns` (counts), the header's too, to the
    /// right.
    pub fn align_right(&mut self, columns: &[usize]) -> &mut Grid {
        self.right.extend_from_slice(columns);
        self
    }

    /// No row below the header.
    pub fn is_empty(&self) -> bool {
        self.rows.len() <= 1
    }

    /// The header and the rows, each line of each cell escaped as
    /// [`Block`]s are.
    fn escaped_rows(&self) -> impl Iterator<Item = Vec<Vec<String>>> + '_ {
        self.rows.iter().map(|row| {
            row.iter()
                .map(|lines| {
                    lines
                        .iter()
                        .map(|line| escape_controls(line).into_owned())
                        .collect()
                })
                .collect()
        })
    }

    /// Whether `column` is aligned to the right.
    fn is_right(&self, column: usize) -> bool {
        self.right.contains(&column)
    }

    /// The table as the terminal draws it ([`fit`]): a cell's lines one
    /// under the other.
    pub fn to_terminal(&self, view: &View) -> String {
        let mut builder = Builder::default();
        for row in self.escaped_rows() {
            builder.push_record(row.iter().map(|lines| lines.join("\n")));
        }
        let mut table = builder.build();
        for &column in &self.right {
            table.modify(Columns::one(column), Alignment::right());
        }
        fit(table, view)
    }
}

/// A view: its blocks in order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Blocks {
    blocks: Vec<Block>,
}

impl Blocks {
    pub fn new() -> Blocks {
        Blocks::default()
    }

    /// The blocks in order.
    pub fn iter(&self) -> std::slice::Iter<'_, Block> {
        self.blocks.iter()
    }

    /// A line of prose, its further lines indented by `indent`.
    pub fn line(&mut self, text: impl Into<String>, indent: usize) -> &mut Blocks {
        self.toned(text, indent, Tone::Plain)
    }

    /// A line of prose that stands out as `tone`.
    pub fn toned(&mut self, text: impl Into<String>, indent: usize, tone: Tone) -> &mut Blocks {
        self.blocks.push(Block::Line {
            text: text.into(),
            indent,
            tone,
        });
        self
    }

    /// The answer: a verdict or a study's sentence, wrapped flush left.
    pub fn answer(&mut self, text: impl Into<String>) -> &mut Blocks {
        self.toned(text, 0, Tone::Answer)
    }

    /// A `*** text ***` banner.
    pub fn banner(&mut self, text: &str) -> &mut Blocks {
        self.toned(format!("*** {text} ***"), 4, Tone::Banner)
    }

    /// Each of `lines`, indented by `indent` when wrapped.
    pub fn lines<S: Into<String>>(
        &mut self,
        lines: impl IntoIterator<Item = S>,
        indent: usize,
    ) -> &mut Blocks {
        for line in lines {
            self.line(line, indent);
        }
        self
    }

    /// A line of an aligned listing, never wrapped.
    pub fn fixed(&mut self, text: impl Into<String>) -> &mut Blocks {
        self.blocks.push(Block::Fixed(text.into()));
        self
    }

    /// A part's title.
    pub fn heading(&mut self, text: impl Into<String>) -> &mut Blocks {
        self.blocks.push(Block::Heading(text.into()));
        self
    }

    /// An empty line.
    pub fn gap(&mut self) -> &mut Blocks {
        self.blocks.push(Block::Gap);
        self
    }

    /// `table`; or, when it has no row, one line saying so (`empty`)
    /// rather than a header over nothing.
    pub fn table(&mut self, table: Grid, empty: &str) -> &mut Blocks {
        if table.is_empty() {
            return self.line(empty, 2);
        }
        self.blocks.push(Block::Table(table));
        self
    }

    /// Checks: each its status, name and detail.
    pub fn checks(&mut self, checks: Vec<[String; 3]>) -> &mut Blocks {
        if !checks.is_empty() {
            self.blocks.push(Block::Checks(checks));
        }
        self
    }

    /// `other`'s blocks after these.
    pub fn extend(&mut self, other: Blocks) -> &mut Blocks {
        self.blocks.extend(other.blocks);
        self
    }

    /// Is there no block at all?
    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }

    /// The view as the terminal shows it: each line wrapped at `view`'s
    /// width, each table fitted to it.
    pub fn to_terminal(&self, view: &View) -> String {
        let mut out = String::new();
        for block in &self.blocks {
            match block {
                Block::Line { text, indent, .. } => {
                    out += &view.wrap(&escape_controls(text), *indent);
                }
                Block::Fixed(text) | Block::Heading(text) => out += &escape_controls(text),
                Block::Gap => {}
                Block::Table(table) => out += &table.to_terminal(view),
                Block::Checks(checks) => {
                    let lines: Vec<String> = checks
                        .iter()
                        .map(|[status, name, detail]| {
                            let line = format!("  {status:<12} {name:<22} {detail}");
                            view.wrap(&escape_controls(&line), 38)
                        })
                        .collect();
                    out += &lines.join("\n");
                }
            }
            out.push('\n');
        }
        out
    }

    /// The view as HTML: a `<p>` per line, an `<h4>` per heading, a real
    /// `<table>` per table (its header row in `<th>`), every text escaped
    /// for XML after its control characters are.
    pub fn to_html(&self) -> String {
        let mut out = String::new();
        let text = |text: &str| xml_text(&escape_controls(text));
        for block in &self.blocks {
            match block {
                Block::Line {
                    text: line,
                    tone,
                    indent,
                } => {
                    let class = match (tone, indent) {
                        (Tone::Answer, _) => " class=\"answer\"",
                        (Tone::Banner, _) => " class=\"banner\"",
                        (Tone::Plain, 0) => "",
                        (Tone::Plain, _) => " class=\"detail\"",
                    };
                    let _ = writeln!(out, "<p{class}>{}</p>", text(line.trim_start()));
                }
                Block::Fixed(line) => {
                    let _ = writeln!(out, "<p class=\"fixed\">{}</p>", text(line));
                }
                Block::Heading(heading) => {
                    let _ = writeln!(out, "<h4>{}</h4>", text(heading));
                }
                Block::Gap => {}
                Block::Checks(checks) => {
                    out.push_str("<table class=\"checks\">\n");
                    for row in checks {
                        out.push_str("<tr>");
                        for cell in row {
                            let _ = write!(out, "<td>{}</td>", text(cell));
                        }
                        out.push_str("</tr>\n");
                    }
                    out.push_str("</table>\n");
                }
                Block::Table(table) => {
                    out.push_str("<table>\n");
                    for (index, row) in table.escaped_rows().enumerate() {
                        let cell = if index == 0 { "th" } else { "td" };
                        out.push_str("<tr>");
                        for (column, lines) in row.iter().enumerate() {
                            let class = if table.is_right(column) {
                                " class=\"number\""
                            } else {
                                ""
                            };
                            let lines: Vec<String> =
                                lines.iter().map(|line| xml_text(line)).collect();
                            let value = lines.join("<br/>");
                            let _ = write!(out, "<{cell}{class}>{value}</{cell}>");
                        }
                        out.push_str("</tr>\n");
                    }
                    out.push_str("</table>\n");
                }
            }
        }
        out
    }

    /// The view as Markdown (CommonMark with GitHub's pipe tables), for a
    /// ticket or a pull request: consecutive lines form one paragraph with
    /// a hard break after each, headings are `####`, tables pipe tables.
    /// Every text is escaped (control characters first, then Markdown's
    /// punctuation), so nothing from outside becomes a link or a heading.
    pub fn to_markdown(&self) -> String {
        let mut out = String::new();
        let mut in_paragraph = false;
        for block in &self.blocks {
            // A paragraph ends at anything but a line, with a blank line.
            if !matches!(block, Block::Line { .. } | Block::Fixed(_)) && in_paragraph {
                out.push_str("\n\n");
                in_paragraph = false;
            }
            match block {
                Block::Line { text, tone, .. } => {
                    if in_paragraph {
                        out.push_str("\\\n");
                    }
                    let text = markdown_text(text.trim_start());
                    match tone {
                        Tone::Plain => out += &text,
                        Tone::Answer | Tone::Banner => {
                            let _ = write!(out, "**{text}**");
                        }
                    }
                    in_paragraph = true;
                }
                Block::Fixed(line) => {
                    if in_paragraph {
                        out.push_str("\\\n");
                    }
                    let _ = write!(out, "`{}`", escape_controls(line).replace('`', "'"));
                    in_paragraph = true;
                }
                Block::Heading(heading) => {
                    let _ = writeln!(out, "#### {}\n", markdown_text(heading));
                }
                Block::Gap => {}
                Block::Checks(checks) => {
                    let _ = writeln!(out, "| status | check | detail |\n|---|---|---|");
                    for row in checks {
                        let cells: Vec<String> =
                            row.iter().map(|cell| markdown_text(cell)).collect();
                        let _ = writeln!(out, "| {} |", cells.join(" | "));
                    }
                    out.push('\n');
                }
                Block::Table(table) => {
                    for (index, row) in table.escaped_rows().enumerate() {
                        // A cell's lines apart: GitHub's tables take `<br>`.
                        let cells: Vec<String> = row
                            .iter()
                            .map(|lines| {
                                let lines: Vec<String> =
                                    lines.iter().map(|line| markdown_text(line)).collect();
                                lines.join("<br>")
                            })
                            .collect();
                        let _ = writeln!(out, "| {} |", cells.join(" | "));
                        if index == 0 {
                            let rule: String = (0..cells.len())
                                .map(|column| {
                                    if table.is_right(column) {
                                        "---:|"
                                    } else {
                                        "---|"
                                    }
                                })
                                .collect();
                            let _ = writeln!(out, "|{rule}");
                        }
                    }
                    out.push('\n');
                }
            }
        }
        if in_paragraph {
            out.push('\n');
        }
        out
    }
}

/// `text` safe in Markdown: its control characters escaped, then every
/// ASCII punctuation character that could start markup backslash-escaped
/// (CommonMark lets any ASCII punctuation be escaped so).
fn markdown_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in escape_controls(text).chars() {
        if "\\`*_[]<>|#~!".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A table of a host name from outside and signs the tool prints.
    fn drawn(charset: Charset) -> String {
        let mut table = Grid::default();
        table.push(["host", "change"]);
        table.push(["evil\u{1b}[31m\0", "\u{2212}5.9 % → ±2"]);
        table.push(["node1", "—"]);
        let view = View {
            charset,
            ..View::default()
        };
        table.to_terminal(&view)
    }

    #[test]
    fn cells_are_escaped_and_the_columns_stay_in_line() {
        for charset in [Charset::Utf8, Charset::Ascii] {
            let text = drawn(charset);
            assert!(!text.contains(['\u{1b}', '\0']), "{text:?}");
            assert!(text.contains(r"evil\u{1b}[31m\0"), "{text}");
            let widths: Vec<usize> = text.lines().map(|l| l.chars().count()).collect();
            assert!(widths.iter().all(|&w| w == widths[0]), "{text}");
        }
    }

    fn hostile() -> Blocks {
        let mut blocks = Blocks::new();
        blocks.answer("verdict: physical (exit 0)");
        blocks.line("host evil\n\nFAKE-LINE: valid study (exit 0)", 2);
        let mut grid = Grid::default();
        grid.push(["host", "n"]);
        grid.push(["a\u{1b}[31m\nb", "1"]);
        blocks.gap().heading("Checks").table(grid, "no rows");
        blocks
    }

    #[test]
    fn a_line_break_from_outside_is_escaped_in_every_renderer() {
        let blocks = hostile();
        let terminal = blocks.to_terminal(&View::default());
        assert!(
            !terminal.lines().any(|l| l.starts_with("FAKE-LINE")),
            "{terminal}"
        );
        assert!(terminal.contains(r"host evil\n\nFAKE-LINE"), "{terminal}");
        assert!(!terminal.contains('\u{1b}'), "{terminal}");
        let html = blocks.to_html();
        assert!(html.contains(r"<p class=&quot;") || html.contains(r"host evil\n\nFAKE-LINE"));
        assert!(!html.contains('\u{1b}'));
        assert!(html.contains("<th>host</th>"), "{html}");
        let markdown = blocks.to_markdown();
        assert!(
            !markdown.lines().any(|l| l.starts_with("FAKE-LINE")),
            "{markdown}"
        );
        assert!(markdown.contains("| host | n |\n|---|---|\n"), "{markdown}");
    }

    #[test]
    fn an_empty_table_is_one_line() {
        let mut blocks = Blocks::new();
        let mut grid = Grid::default();
        grid.push(["pair", "penalty"]);
        blocks.table(grid, "no pair was measured");
        assert_eq!(
            blocks.to_terminal(&View::default()),
            "no pair was measured\n"
        );
    }

    /// A host over its CPU in one cell, and a column of counts.
    fn host_over_cpu() -> Blocks {
        let mut grid = Grid::default();
        grid.push(["host, CPU", "hosts"]);
        grid.push_lines([
            vec!["node1".to_string(), "Xeon|<b>\nFAKE".to_string()],
            vec!["12".to_string()],
        ]);
        grid.align_right(&[1]);
        let mut blocks = Blocks::new();
        blocks.table(grid, "no host");
        blocks
    }

    #[test]
    fn a_cell_of_several_lines_and_a_column_of_counts_in_every_renderer() {
        let blocks = host_over_cpu();
        assert_eq!(
            blocks.to_terminal(&View::default()),
            "┌────────────────┬───────┐\n\
             │ host, CPU      │ hosts │\n\
             ├────────────────┼───────┤\n\
             │ node1          │    12 │\n\
             │ Xeon|<b>\\nFAKE │       │\n\
             └────────────────┴───────┘\n"
        );
        assert_eq!(
            blocks.to_html(),
            "<table>\n<tr><th>host, CPU</th><th class=\"number\">hosts</th></tr>\n\
             <tr><td>node1<br/>Xeon|&lt;b&gt;\\nFAKE</td><td class=\"number\">12</td></tr>\n\
             </table>\n"
        );
        assert_eq!(
            blocks.to_markdown(),
            "| host, CPU | hosts |\n|---|---:|\n\
             | node1<br>Xeon\\|\\<b\\>\\\\nFAKE | 12 |\n\n"
        );
    }

    #[test]
    fn an_ascii_view_draws_its_tables_in_ascii() {
        let text = drawn(Charset::Ascii);
        assert!(text.is_ascii(), "{text}");
        assert!(text.starts_with("+----"), "{text}");
        assert!(text.contains("| -5.9 % -> +-2 |"), "{text}");
        assert!(drawn(Charset::Utf8).starts_with('┌'));
    }
}
