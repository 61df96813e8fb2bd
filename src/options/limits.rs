//! The limits every option is checked against, and the checks that say
//! which value is out of range and what range it must be in.

use crate::escape::escape_controls;
use anyhow::{Context, Result, bail};
use std::ops::RangeInclusive;
use std::time::Duration;

/// `--rep-ms`: a repetition of at most 10 s; a longer one only makes the
/// whole study longer without making a median steadier.
pub const REP_MS: RangeInclusive<u64> = 1..=10_000;

/// `--warmups`.
pub const WARMUPS: RangeInclusive<usize> = 0..=100;

/// `--max-reps` and `--reps`: at most 1000 repetitions per arm.
pub const MAX_REPS: usize = 1000;

/// The most batches a gate or `pairs` comparison may take (`--batches`,
/// `--max-batches`).
pub const MAX_BATCHES: usize = 100;

/// The longest pause between batches, in milliseconds (`--batch-gap`).
pub const MAX_BATCH_GAP_MS: u64 = 60_000;

/// `--workers`: at most 1024 threads per arm.
pub const WORKERS: RangeInclusive<usize> = 1..=1024;

/// The longest `--unit` name, in characters: a word for a table header.
pub(super) const MAX_UNIT_NAME: usize = 24;

/// `hybrid --rep-ms`: one worker's share, of 50 items of at least 1 ms each,
/// so handing an item out stays far below the invariance tolerance.
pub const HYBRID_REP_MS: RangeInclusive<u64> = 50..=10_000;

/// `--time-budget`: a second to a week.
pub const TIME_BUDGET: RangeInclusive<Duration> =
    Duration::from_secs(1)..=Duration::from_secs(7 * 24 * 3600);

/// `latency --samples`: enough for a 10th percentile, at most 10000.
pub const LATENCY_SAMPLES: RangeInclusive<usize> = 3..=10_000;

/// `latency --parallel`: pairs at once, one at least; 4096 pairs is 8192
/// CPUs, the most the project has probed.
pub const LATENCY_PARALLEL: RangeInclusive<usize> = 1..=4096;

/// `latency --sample-ms`: two milliseconds to ten seconds. A sample is
/// 1000 round trips, a millisecond at 500 ns one way (a guest's or another
/// package's transfer): a 1 ms bound cut a busy 2-vCPU guest's samples
/// short, and its pairs read as stacked, hidden siblings.
pub const LATENCY_SAMPLE_MS: RangeInclusive<u64> = 2..=10_000;

/// `observe --seconds`: a tenth of a second to a week.
pub const OBSERVE_SECONDS: RangeInclusive<Duration> =
    Duration::from_millis(100)..=Duration::from_secs(7 * 24 * 3600);

/// `run --prepare-timeout`: a second to a day.
pub const PREPARE_TIMEOUT: RangeInclusive<Duration> =
    Duration::from_secs(1)..=Duration::from_secs(24 * 3600);

/// `run --max-seconds`: a second to a week.
pub const MAX_SECONDS: RangeInclusive<Duration> =
    Duration::from_secs(1)..=Duration::from_secs(7 * 24 * 3600);

/// `--nfd-expiry`: an hour to 90 days.
pub const NFD_EXPIRY: RangeInclusive<Duration> =
    Duration::from_secs(3600)..=Duration::from_secs(90 * 24 * 3600);
/// `observe --interval`: a millisecond to an hour.
pub const OBSERVE_INTERVAL_MS: RangeInclusive<u64> = 1..=3_600_000;

/// `--tolerance`, or the study's `default` where it is not given.
pub(super) fn tolerance(value: Option<f64>, default: f64) -> Result<f64> {
    let Some(value) = value else {
        return Ok(default);
    };
    if !(value.is_finite() && (0.0..1.0).contains(&value)) {
        bail!("--tolerance {value}: must be a relative tolerance from 0 to below 1, such as 1e-4");
    }
    Ok(value)
}

/// `value` when it lies in `range`; otherwise the error names the option,
/// the value and the range.
pub(super) fn in_range<T: PartialOrd + std::fmt::Display>(
    option: &str,
    value: T,
    range: RangeInclusive<T>,
) -> Result<T> {
    if range.contains(&value) {
        Ok(value)
    } else {
        bail!(
            "{option} {value}: out of range; use {} to {}",
            range.start(),
            range.end()
        )
    }
}

/// A fraction written as `0.15` or `15%`. A bare number above 1 is refused:
/// `--threshold 15` would mean 1500 %, and on real siblings silently say
/// `virtual`.
pub fn fraction(option: &str, text: &str) -> Result<f64> {
    let trimmed = text.trim();
    // As every message below echoes it: escaped, so it stays one line.
    let text = escape_controls(text);
    let (number, scale) = match trimmed.strip_suffix('%') {
        Some(percent) => (percent.trim(), 0.01),
        None => (trimmed, 1.0),
    };
    let value: f64 = number.parse().with_context(|| {
        format!(
            "{option} {text}: not a number; write a fraction like 0.15 or a percentage like 15%"
        )
    })?;
    let fraction = value * scale;
    if !(fraction.is_finite() && fraction > 0.0) {
        bail!("{option} {text}: must be above zero, e.g. 0.15 or 15%");
    }
    if scale == 1.0 && fraction > 1.0 {
        bail!(
            "{option} {text}: a bare number is a fraction, so this is {:.0} %; write {text}% for {text} per cent, or {} as a fraction",
            fraction * 100.0,
            fraction / 100.0
        );
    }
    Ok(fraction)
}

/// A duration written as seconds (`90`, `2.5`) or with a unit (`90s`,
/// `5m`, `1h`), within `range`.
pub fn duration(option: &str, text: &str, range: RangeInclusive<Duration>) -> Result<Duration> {
    let trimmed = text.trim();
    // As every message below echoes it: escaped, so it stays one line.
    let text = escape_controls(text);
    let (number, unit) = match trimmed.find(|c: char| c.is_ascii_alphabetic()) {
        Some(at) => trimmed.split_at(at),
        None => (trimmed, "s"),
    };
    let scale = match unit {
        "s" => 1.0,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        "d" => 86_400.0,
        _ => bail!("{option} {text}: unknown unit '{unit}'; write seconds like 90, or 90s, 5m, 1h"),
    };
    let seconds: f64 = number.trim().parse().with_context(|| {
        format!("{option} {text}: not a duration; write seconds like 90, or 90s, 5m, 1h")
    })?;
    let value = Duration::try_from_secs_f64(seconds * scale)
        .map_err(|_| anyhow::anyhow!("{option} {text}: must be a positive duration such as 90s"))?;
    if !range.contains(&value) {
        // In seconds as written, fractions kept: "0.1 s", not "0 s".
        bail!(
            "{option} {text}: out of range; use {} s to {} s",
            range.start().as_secs_f64(),
            range.end().as_secs_f64()
        );
    }
    Ok(value)
}
