//! Number formatting shared by every table.

/// Binary size: "48 KiB", "2 MiB", "512 B".
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() && value.fract() == 0.0 {
        value /= 1024.0;
        unit += 1;
    }
    if value.fract() == 0.0 {
        format!("{value} {}", UNITS[unit])
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// A signed percentage change with the true minus sign: "+59.0 %", "−35.7 %".
pub fn percent_change(fraction: f64) -> String {
    let pct = fraction * 100.0;
    if pct < 0.0 {
        format!("\u{2212}{:.1} %", -pct)
    } else {
        format!("+{pct:.1} %")
    }
}

/// A plain percentage: "0.42 %".
pub fn percent(fraction: f64) -> String {
    format!("{:.2} %", fraction * 100.0)
}

/// Four significant figures, for costs per byte and similar.
pub fn sig4(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let digits = (3 - x.abs().log10().floor() as i32).max(0) as usize;
    format!("{x:.digits$}")
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
