//! How wide the human view may be: the tables fit a standard 80-column
//! terminal unless the user asks for every column (`--wide`), and follow
//! the terminal's width when the view goes to one; and which characters it
//! may use: UTF-8, or ASCII where the locale's charset is not UTF-8.

use crate::escape::escape_controls_keeping_lines;
use crate::units::wrap_words;
use std::borrow::Cow;

/// The width a table fits, whether every column is wanted, and in which
/// characters the view is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct View {
    /// Columns a line of a table may take.
    pub width: usize,
    /// `--wide`: every column, however wide the table gets.
    pub wide: bool,
    /// Box drawing and signs such as "−" and "×" in UTF-8, or in ASCII.
    pub charset: Charset,
}

/// The characters a view may use: the locale's charset, as tools that draw
/// boxes choose theirs (decided once, from the environment, by `options`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Charset {
    #[default]
    Utf8,
    /// Boxes of `+`, `-` and `|`; "−" as "-", "×" as "x", "→" as "->".
    Ascii,
}

impl Charset {
    /// The charset of the locale in force: the first of `LC_ALL`,
    /// `LC_CTYPE` and `LANG` that is set and not empty, as setlocale picks
    /// it (`locales`, in that order). UTF-8 when its codeset is UTF-8
    /// ("en_US.UTF-8", "C.utf8"); ASCII for any other ("C", "POSIX",
    /// "de_DE.ISO-8859-1", "en_US" without a codeset, which is Latin-1).
    /// With none set the view stays UTF-8: where nobody set a locale (a
    /// container, a cron job) the output is most often read on a UTF-8
    /// terminal, and the tool drew UTF-8 there before.
    pub fn of_locale<'a>(locales: impl IntoIterator<Item = Option<&'a str>>) -> Charset {
        let Some(locale) = locales.into_iter().flatten().find(|l| !l.is_empty()) else {
            return Charset::Utf8;
        };
        let codeset = locale
            .split_once('.')
            .map_or("", |(_, rest)| rest.split('@').next().unwrap_or(""));
        let codeset: String = codeset
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .map(|c| c.to_ascii_lowercase())
            .collect();
        if codeset == "utf8" {
            Charset::Utf8
        } else {
            Charset::Ascii
        }
    }
}

/// `text` in ASCII: box drawing as `+`, `-` and `|`, each sign the tool
/// prints as its usual ASCII spelling, and any other character outside
/// ASCII (from a host or CPU name) as "?", as `ls` shows what the
/// locale's charset cannot.
pub fn to_ascii(text: &str) -> Cow<'_, str> {
    if text.is_ascii() {
        return Cow::Borrowed(text);
    }
    let mut ascii = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            c if c.is_ascii() => ascii.push(c),
            '─' | '━' | '═' | '−' | '–' | '—' | '‐' | '‑' => ascii.push('-'),
            '│' | '┃' | '║' => ascii.push('|'),
            '\u{2500}'..='\u{257f}' => ascii.push('+'),
            '×' => ascii.push('x'),
            '÷' => ascii.push('/'),
            '·' | '•' => ascii.push('*'),
            'µ' | 'μ' => ascii.push('u'),
            '≈' | '∼' => ascii.push('~'),
            '‘' | '’' => ascii.push('\''),
            '“' | '”' => ascii.push('"'),
            '±' => ascii.push_str("+-"),
            '→' => ascii.push_str("->"),
            '←' => ascii.push_str("<-"),
            '≤' => ascii.push_str("<="),
            '≥' => ascii.push_str(">="),
            '≠' => ascii.push_str("!="),
            '…' => ascii.push_str("..."),
            'Σ' => ascii.push_str("sum"),
            _ => ascii.push('?'),
        }
    }
    Cow::Owned(ascii)
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
    pub fn for_terminal(columns: Option<usize>, wide: bool, charset: Charset) -> View {
        View {
            width: columns.map_or(View::STANDARD_WIDTH, |c| c.max(View::NARROWEST)),
            wide,
            charset,
        }
    }

    /// `text` as it may reach the terminal: every control character but
    /// the line breaks escaped (the last guard for text from outside that a
    /// view showed unescaped), and in the view's charset.
    pub fn for_terminal_text<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let escaped = escape_controls_keeping_lines(text);
        match (self.charset, escaped) {
            (Charset::Utf8, escaped) => escaped,
            (Charset::Ascii, Cow::Borrowed(text)) => to_ascii(text),
            (Charset::Ascii, Cow::Owned(text)) => Cow::Owned(to_ascii(&text).into_owned()),
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
        View::for_terminal(None, false, Charset::Utf8)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_charset_follows_the_locale_setlocale_picks() {
        let charset = |all, ctype, lang| Charset::of_locale([all, ctype, lang]);
        assert_eq!(charset(None, None, Some("en_US.UTF-8")), Charset::Utf8);
        assert_eq!(charset(None, None, Some("C.utf8")), Charset::Utf8);
        assert_eq!(
            charset(Some("C"), None, Some("en_US.UTF-8")),
            Charset::Ascii
        );
        assert_eq!(
            charset(Some(""), Some("POSIX"), Some("C.UTF-8")),
            Charset::Ascii
        );
        assert_eq!(
            charset(None, Some("de_DE.UTF-8@euro"), Some("C")),
            Charset::Utf8
        );
        assert_eq!(
            charset(None, None, Some("de_DE.ISO-8859-1")),
            Charset::Ascii
        );
        assert_eq!(charset(None, None, Some("en_US")), Charset::Ascii);
        assert_eq!(charset(None, None, None), Charset::Utf8);
    }

    #[test]
    fn ascii_spells_every_sign_in_ascii() {
        assert_eq!(to_ascii("plain"), Cow::Borrowed("plain"));
        assert_eq!(
            to_ascii("┌─┬─┐ │ −5.9 % ±2 ×3 µs → … Σ ≤ é"),
            "+-+-+ | -5.9 % +-2 x3 us -> ... sum <= ?"
        );
        let ascii = View {
            charset: Charset::Ascii,
            ..View::default()
        };
        assert_eq!(ascii.for_terminal_text("a\u{1b}[31m—\n"), "a\\u{1b}[31m-\n");
    }
}
