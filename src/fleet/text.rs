//! Showing and sorting what hosts sent: names and reasons escaped so a
//! hostile or garbled line cannot redraw the terminal, reasons cut to one
//! line, and host names in the order people count them.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::fmt::Write;

/// Longest reason shown for a broken host, in characters: a line or two of
/// a terminal, enough for an engine's message and the host's last line.
pub const REASON_CHARS: usize = 200;

/// `text` with what a terminal would act on escaped as Rust writes it:
/// control characters (`\n`, `\u{1b}`) and the bidirectional overrides
/// that can make a line read otherwise than it is (`\u{202e}`). Borrowed
/// when there is nothing to escape, as for every real host name.
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    if !text.chars().any(needs_escape) {
        return Cow::Borrowed(text);
    }
    let mut shown = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        push_shown(&mut shown, c);
    }
    Cow::Owned(shown)
}

/// `text` as one line safe to show: [`escape_controls`], then cut to at
/// most [`REASON_CHARS`] characters, ending with "…" when cut (never
/// inside a character, nor inside an escape).
pub fn one_line(text: &str) -> String {
    let mut shown = String::new();
    let (mut chars, mut fits) = (0, 0);
    for c in text.chars() {
        let before = shown.len();
        push_shown(&mut shown, c);
        chars += shown[before..].chars().count();
        if chars < REASON_CHARS {
            fits = shown.len();
        } else if chars > REASON_CHARS {
            shown.truncate(fits);
            shown.push('…');
            break;
        }
    }
    shown
}

fn needs_escape(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

fn push_shown(shown: &mut String, c: char) {
    if !needs_escape(c) {
        shown.push(c);
    } else if c.is_control() {
        let _ = write!(shown, "{}", c.escape_debug());
    } else {
        let _ = write!(shown, "{}", c.escape_unicode());
    }
}

/// Host names, and the file names of a folder, as people sort them: the
/// numbers in them by value, so that node2 comes before node10.
pub fn natural(a: &str, b: &str) -> Ordering {
    /// The leading run of digits or of other characters, and the rest.
    fn split(s: &str) -> (bool, &str, &str) {
        let digits = s.starts_with(|c: char| c.is_ascii_digit());
        let end = s
            .find(|c: char| c.is_ascii_digit() != digits)
            .unwrap_or(s.len());
        (digits, &s[..end], &s[end..])
    }
    let (mut a, mut b) = (a, b);
    loop {
        match (a.is_empty(), b.is_empty()) {
            (true, true) => return Ordering::Equal,
            (true, false) => return Ordering::Less,
            (false, true) => return Ordering::Greater,
            _ => {}
        }
        let ((a_digits, a_run, a_rest), (b_digits, b_run, b_rest)) = (split(a), split(b));
        let order = if a_digits && b_digits {
            let (a_value, b_value) = (a_run.trim_start_matches('0'), b_run.trim_start_matches('0'));
            a_value
                .len()
                .cmp(&b_value.len())
                .then_with(|| a_value.cmp(b_value))
                .then_with(|| a_run.len().cmp(&b_run.len()))
        } else {
            a_run.cmp(b_run)
        };
        if order != Ordering::Equal {
            return order;
        }
        (a, b) = (a_rest, b_rest);
    }
}
