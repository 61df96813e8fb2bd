//! Text from outside (host names, CPU models, command names, paths, option
//! values) made safe to show: what a terminal would act on is escaped as
//! Rust writes it, so a hostile or garbled name can neither redraw the
//! terminal nor split a line. The lowest layer, so that every view and
//! every error message escapes the same way.

use std::borrow::Cow;
use std::fmt::Write;
use std::path::Path;

/// `text` with what a terminal would act on escaped as Rust writes it:
/// control characters (`\n`, `\u{1b}`) and the bidirectional overrides
/// that can make a line read otherwise than it is (`\u{202e}`). Borrowed
/// when there is nothing to escape, as for every real host name.
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    escape_where(text, needs_escape)
}

/// A path as a message names it: [`escape_controls`] of its display, so a
/// newline or an escape sequence in a file name neither splits a one-line
/// error nor reaches the terminal.
pub fn escape_path(path: &Path) -> String {
    escape_controls(&path.display().to_string()).into_owned()
}

/// [`escape_controls`] for text of several lines (a whole view): its line
/// breaks are kept, every other control character is escaped.
pub fn escape_controls_keeping_lines(text: &str) -> Cow<'_, str> {
    escape_where(text, |c| c != '\n' && needs_escape(c))
}

/// `text` as one line of at most `limit` characters, safe to show:
/// [`escape_controls`], then cut, ending with "…" when cut (never inside a
/// character, nor inside an escape).
pub fn one_line(text: &str, limit: usize) -> String {
    let mut shown = String::new();
    let (mut chars, mut fits) = (0, 0);
    for c in text.chars() {
        let before = shown.len();
        push_shown(&mut shown, c, needs_escape);
        chars += shown[before..].chars().count();
        if chars < limit {
            fits = shown.len();
        } else if chars > limit {
            shown.truncate(fits);
            shown.push('…');
            break;
        }
    }
    shown
}

fn escape_where(text: &str, escaped: impl Fn(char) -> bool + Copy) -> Cow<'_, str> {
    if !text.chars().any(escaped) {
        return Cow::Borrowed(text);
    }
    let mut shown = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        push_shown(&mut shown, c, escaped);
    }
    Cow::Owned(shown)
}

fn needs_escape(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

fn push_shown(shown: &mut String, c: char, escaped: impl Fn(char) -> bool) {
    if !escaped(c) {
        shown.push(c);
    } else if c.is_control() {
        let _ = write!(shown, "{}", c.escape_debug());
    } else {
        let _ = write!(shown, "{}", c.escape_unicode());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_and_overrides_are_escaped() {
        assert_eq!(escape_controls("node1"), Cow::Borrowed("node1"));
        assert_eq!(
            escape_controls("a\u{1b}[31mb\0c\nd\u{202e}e"),
            "a\\u{1b}[31mb\\0c\\nd\\u{202e}e"
        );
        assert_eq!(
            escape_controls_keeping_lines("a\u{1b}b\nc\rd\n"),
            "a\\u{1b}b\nc\\rd\n"
        );
        assert_eq!(one_line("abcdef", 4), "abc…");
    }
}
