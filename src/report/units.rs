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
}
