//! How wide the human view may be: the tables fit a standard 80-column
//! terminal unless the user asks for every column (`--wide`), and follow
//! the terminal's width when the view goes to one.

use crate::report::units::wrap_words;

/// The width a table fits, and whether every column is wanted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct View {
    /// Columns a line of a table may take.
    pub width: usize,
    /// `--wide`: every column, however wide the table gets.
    pub wide: bool,
}

impl View {
    /// A standard terminal's width: what a view fits when it does not go
    /// to a terminal (a log, a pipe, a file), so saved output reads the
    /// same everywhere.
    pub const STANDARD_WIDTH: usize = 80;

    /// Below this, a terminal's width is not followed: no table of the
    /// tool's can shrink that far and stay readable.
    pub const NARROWEST: usize = 60;

    /// The view for a terminal `columns` wide (`None`: not a terminal).
    pub fn for_terminal(columns: Option<usize>, wide: bool) -> View {
        View {
            width: columns.map_or(View::STANDARD_WIDTH, |c| c.max(View::NARROWEST)),
            wide,
        }
    }

    /// `line` wrapped at the view's width between words, each further line
    /// indented by `indent` spaces; a line that fits is returned as it is.
    /// For prose: the sentences above and below the tables.
    pub fn wrap(&self, line: &str, indent: usize) -> String {
        let rest = self.width.saturating_sub(indent).max(View::NARROWEST / 2);
        wrap_words(line, self.width, rest).join(&format!("\n{:indent$}", ""))
    }
}

impl Default for View {
    /// 80 columns, the default columns only.
    fn default() -> View {
        View::for_terminal(None, false)
    }
}
