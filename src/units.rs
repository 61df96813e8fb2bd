//! Number formatting shared by every table.

/// What a table or a sentence shows for a number there is none of.
pub const DASH: &str = "—";

/// Binary size: "48 KiB", "2 MiB", "512 B".
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if value.fract() == 0.0 {
        format!("{value} {}", UNITS[unit])
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// A number as `f64` formats it, with the precision asked for (`{:.1}`),
/// except that a value which shows as zero shows no sign: "0.0", never
/// "-0.0", whether it is −0.0 itself (an empty sum of `f64`s is −0.0) or a
/// small negative number rounded away ("-0.04" at one decimal). Every
/// number the views print with a fixed precision goes through it.
#[derive(Clone, Copy, Debug)]
pub struct Fixed(pub f64);

impl std::fmt::Display for Fixed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let shown = match f.precision() {
            Some(decimals) => format!("{:.decimals$}", self.0),
            None => self.0.to_string(),
        };
        let zero = shown
            .strip_prefix('-')
            .filter(|digits| digits.chars().all(|c| matches!(c, '0' | '.')));
        let shown = match zero {
            Some(zero) if f.sign_plus() => format!("+{zero}"),
            Some(zero) => zero.to_string(),
            None if f.sign_plus() && !shown.starts_with('-') => format!("+{shown}"),
            None => shown,
        };
        // Padded as a number is (to the right unless asked otherwise);
        // `Formatter::pad` would cut the text to the precision.
        let width = f.width().unwrap_or(0);
        match f.align() {
            Some(std::fmt::Alignment::Left) => write!(f, "{shown:<width$}"),
            Some(std::fmt::Alignment::Center) => write!(f, "{shown:^width$}"),
            _ => write!(f, "{shown:>width$}"),
        }
    }
}

/// A signed percentage change with the true minus sign: "+59.0 %", "−35.7 %";
/// a change that rounds to zero is "+0.0 %".
pub fn percent_change(fraction: f64) -> String {
    let shown = format!("{:.1}", Fixed(fraction * 100.0));
    match shown.strip_prefix('-') {
        Some(magnitude) => format!("\u{2212}{magnitude} %"),
        None => format!("+{shown} %"),
    }
}

/// A plain percentage: "0.42 %".
pub fn percent(fraction: f64) -> String {
    format!("{:.2} %", Fixed(fraction * 100.0))
}

/// Four significant figures, for costs per byte and similar.
pub fn sig4(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{}", Fixed(x));
    }
    let digits = (3 - x.abs().log10().floor() as i32).max(0) as usize;
    format!("{:.digits$}", Fixed(x))
}

/// A time in nanoseconds in the largest unit that keeps it at 1 or more:
/// "52.3 ns", "1.20 µs", "2.95 ms" (three significant figures).
pub fn nanos(ns: f64) -> String {
    let (scale, symbol) = [(1e9, "s"), (1e6, "ms"), (1e3, "µs")]
        .into_iter()
        .find(|(scale, _)| ns.abs() >= *scale)
        .unwrap_or((1.0, "ns"));
    let value = ns / scale;
    let digits = if value.abs() >= 100.0 {
        0
    } else if value.abs() >= 10.0 {
        1
    } else {
        2
    };
    format!("{:.digits$} {symbol}", Fixed(value))
}

/// "1 worker", "2 workers": a count with its noun, plural with an "s".
pub fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// The sentence with its first letter in upper case.
pub fn capitalise(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().collect::<String>() + chars.as_str(),
        None => String::new(),
    }
}

/// `text` cut into lines between words: the first at most `first`
/// characters, the others at most `rest`. A number keeps its " %", and a
/// " / " between CPU lists ends a line rather than starts one. A word
/// longer than its line is broken after its last ",", "/", "-" or "_"
/// that fits (a CPU list, a path), else where the line ends. Line breaks
/// already in `text` are kept, and so are the spaces a line starts with.
pub fn wrap_words(text: &str, first: usize, rest: usize) -> Vec<String> {
    let mut lines = Vec::new();
    for paragraph in text.split('\n') {
        let mut left = paragraph;
        loop {
            let width = if lines.is_empty() { first } else { rest }.max(1);
            if left.chars().count() <= width {
                lines.push(left.to_string());
                break;
            }
            // Byte offsets of the first character past the line, and of the one after it.
            let end = left
                .char_indices()
                .nth(width)
                .map_or(left.len(), |(i, _)| i);
            let past = end + left[end..].chars().next().map_or(0, char::len_utf8);
            let indent = left.len() - left.trim_start().len();
            // A space right after the line's last character still breaks it.
            let breaks = |&(i, c): &(usize, char)| {
                c == ' '
                    && i > indent
                    && !left[i + 1..].starts_with('%')
                    && !left[i + 1..].starts_with("/ ")
            };
            let space = left[..past]
                .char_indices()
                .rev()
                .find(breaks)
                .map(|(i, _)| i);
            let cut = space
                .or_else(|| {
                    left[..end]
                        .rfind([',', '/', '-', '_'])
                        .map(|mark| mark + 1)
                        .filter(|&cut| cut > indent)
                })
                .unwrap_or(end);
            lines.push(left[..cut].trim_end().to_string());
            left = left[cut..].trim_start();
        }
    }
    lines
}

/// "0.97 [0.91, 1.02]": a value with its 95 % interval, or the value alone
/// without one, or [`DASH`] without a value.
pub fn with_interval(value: Option<(f64, Option<f64>, Option<f64>)>) -> String {
    match value {
        Some((value, Some(low), Some(high))) => format!(
            "{:.2} [{:.2}, {:.2}]",
            Fixed(value),
            Fixed(low),
            Fixed(high)
        ),
        Some((value, _, _)) => format!("{:.2}", Fixed(value)),
        None => DASH.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_take_their_plural() {
        assert_eq!(count(1, "worker"), "1 worker");
        assert_eq!(count(2, "repetition"), "2 repetitions");
        assert_eq!(count(0, "worker"), "0 workers");
    }

    #[test]
    fn formats() {
        assert_eq!(bytes(48 * 1024), "48 KiB");
        assert_eq!(bytes(2 * 1024 * 1024), "2 MiB");
        assert_eq!(bytes(1000), "1000 B");
        assert_eq!(percent_change(0.59), "+59.0 %");
        assert_eq!(percent_change(-0.357), "\u{2212}35.7 %");
        assert_eq!(sig4(0.6312), "0.6312");
        assert_eq!(sig4(12.3456), "12.35");
    }

    #[test]
    fn zero_never_shows_a_sign() {
        assert_eq!(format!("{:.1}", Fixed(-0.0)), "0.0");
        assert_eq!(format!("{:.1}", Fixed(-0.04)), "0.0");
        assert_eq!(format!("{:.1}", Fixed(-0.06)), "-0.1");
        assert_eq!(format!("{:>6.2}", Fixed(-0.001)), "  0.00");
        assert_eq!(format!("{}", Fixed(-0.0)), "0");
        assert_eq!(format!("{:+.1}", Fixed(-0.01)), "+0.0");
        assert_eq!(format!("{:+.1}", Fixed(2.0)), "+2.0");
        assert_eq!(format!("{:+.1}", Fixed(-2.0)), "-2.0");
        assert_eq!(sig4(-0.0), "0");
        assert_eq!(percent(-0.00001), "0.00 %");
        assert_eq!(percent_change(-0.0001), "+0.0 %");
        assert_eq!(percent_change(-0.001), "\u{2212}0.1 %");
    }

    #[test]
    fn words_wrap_without_cutting_a_word_that_fits() {
        assert_eq!(
            wrap_words("  ! the guest's sibling map is whatever", 16, 12),
            ["  ! the guest's", "sibling map", "is whatever"]
        );
        // No space to break at: after a comma or slash, else at the width.
        assert_eq!(wrap_words("0,2,4,6,8,10,12", 8, 8), ["0,2,4,6,", "8,10,12"]);
        assert_eq!(
            wrap_words("results/run.json", 10, 10),
            ["results/", "run.json"]
        );
        assert_eq!(wrap_words("abcdefghij", 4, 4), ["abcd", "efgh", "ij"]);
        assert_eq!(wrap_words("a\nb c", 3, 3), ["a", "b c"]);
        assert_eq!(wrap_words("fits", 4, 4), ["fits"]);
        assert_eq!(wrap_words("share 15 %", 8, 8), ["share", "15 %"]);
        assert_eq!(wrap_words("0-1 / 2-3", 6, 6), ["0-1 /", "2-3"]);
        assert_eq!(wrap_words("see /sys/bus", 6, 6), ["see", "/sys/", "bus"]);
        // Characters of several bytes: the dash of a range, the minus sign.
        assert_eq!(
            wrap_words("45.3 [43.8–58.7]", 12, 12),
            ["45.3", "[43.8–58.7]"]
        );
        assert_eq!(wrap_words("−5.9 −14.8 ×2", 5, 5), ["−5.9", "−14.8", "×2"]);
        assert_eq!(
            wrap_words("cv-bar static-unpinned", 12, 12),
            ["cv-bar", "static-", "unpinned"]
        );
    }
}
