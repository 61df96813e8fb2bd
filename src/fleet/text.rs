//! Showing and sorting what hosts sent: names and reasons escaped so a
//! hostile or garbled line cannot redraw the terminal, reasons cut to one
//! line, and host names in the order people count them.

use std::cmp::Ordering;

/// Longest reason shown for a broken host, in characters: a line or two of
/// a terminal, enough for an engine's message and the host's last line.
pub const REASON_CHARS: usize = 200;

/// `text` as one line safe to show, cut to at most [`REASON_CHARS`]
/// characters (see [`crate::escape::one_line`]).
pub fn one_line(text: &str) -> String {
    crate::escape::one_line(text, REASON_CHARS)
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
