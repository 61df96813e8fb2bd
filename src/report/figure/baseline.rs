//! The figure of a baseline comparison: each row's change from the
//! baseline as a dot on its 95 % interval, against the threshold band
//! (±threshold, shaded) and zero. A row is coloured by its verdict:
//! regressed vermillion, improved bluish green, unchanged blue,
//! inconclusive grey and dashed.

use super::text_width;
use super::{Anchor, INK, PALETTE, Paint, Scale, Svg, TEXT, UNQUOTABLE, grid, legend};
use crate::judge::baseline::RowVerdict;
use crate::report::baseline::BaselineReport;
use crate::units::percent_change;

const ROW_HEIGHT: f64 = 22.0;
const WIDTH: f64 = 760.0;
/// The threshold band's shade.
const BAND: &str = "#E8EEF4";

/// The colour of a verdict.
fn colour(verdict: RowVerdict) -> &'static str {
    match verdict {
        RowVerdict::Regressed => PALETTE[5],
        RowVerdict::Improved => PALETTE[2],
        RowVerdict::Unchanged => PALETTE[0],
        RowVerdict::Inconclusive => UNQUOTABLE,
    }
}

/// The whole figure: see the module docs.
pub fn figure(report: &BaselineReport) -> String {
    let rows: Vec<(String, &crate::report::baseline::RowJudgement)> = report
        .judged
        .iter()
        .flat_map(|judged| {
            let prefix = if report.judged.len() > 1 {
                format!("{}: ", judged.new.file)
            } else {
                String::new()
            };
            judged
                .rows
                .iter()
                .map(move |row| (format!("{prefix}{}", row.row), row))
        })
        .collect();
    let title = format!(
        "Change from the baseline ({}, {})",
        report.baseline.kind, report.baseline.file
    );
    let mut svg = Svg::new(WIDTH, 200.0, &title);
    let top = svg.heading(&[format!(
        "each row: new / old − 1 (Hodges–Lehmann, log values) with its distribution-free 95 % \
         interval; shaded: ±{} threshold",
        percent_change(report.threshold).trim_start_matches('+')
    )]);
    // The scale holds the band, zero and every interval, with a margin.
    let (mut low, mut high) = (-report.threshold, report.threshold);
    for (_, row) in &rows {
        let change = &row.change;
        for value in change
            .ci95
            .iter()
            .flat_map(|i| [i.low, i.high])
            .chain(change.change)
        {
            low = low.min(value);
            high = high.max(value);
        }
    }
    let margin = (high - low) * 0.08;
    let label_width = rows
        .iter()
        .map(|(label, _)| text_width(label, TEXT))
        .fold(60.0, f64::max)
        .min(260.0)
        + 12.0;
    let scale = Scale {
        low: low - margin,
        high: high + margin,
        start: 10.0 + label_width,
        end: WIDTH - 20.0,
    };
    let bottom = top + ROW_HEIGHT * rows.len().max(1) as f64;
    svg.rect(
        scale.at(-report.threshold),
        top,
        scale.at(report.threshold) - scale.at(-report.threshold),
        bottom - top,
        Paint::fill(BAND),
    );
    let below = grid(&mut svg, (&scale, 6), None, (top, bottom), |tick| {
        percent_change(tick)
    });
    svg.line(
        scale.at(0.0),
        top,
        scale.at(0.0),
        bottom,
        Paint::stroke(INK, 1.0),
    );
    for (index, (label, row)) in rows.iter().enumerate() {
        let y = top + ROW_HEIGHT * (index as f64 + 0.5);
        svg.text(10.0 + label_width - 8.0, y + 4.0, TEXT, Anchor::End, label);
        let verdict = row.change.verdict;
        let paint = match verdict {
            RowVerdict::Inconclusive => Paint::stroke(colour(verdict), 2.0).dashed(),
            _ => Paint::stroke(colour(verdict), 2.0),
        };
        if let Some(interval) = &row.change.ci95 {
            svg.line(scale.at(interval.low), y, scale.at(interval.high), y, paint);
            for end in [interval.low, interval.high] {
                svg.line(
                    scale.at(end),
                    y - 5.0,
                    scale.at(end),
                    y + 5.0,
                    Paint::stroke(colour(verdict), 1.5),
                );
            }
        }
        if let Some(change) = row.change.change {
            svg.circle(scale.at(change), y, 4.0, Paint::fill(colour(verdict)));
        }
    }
    if rows.is_empty() {
        svg.text(
            scale.start,
            top + ROW_HEIGHT * 0.6,
            TEXT,
            Anchor::Start,
            "no row both documents measured",
        );
    }
    let entries: Vec<(Option<&str>, String)> = [
        RowVerdict::Regressed,
        RowVerdict::Inconclusive,
        RowVerdict::Improved,
        RowVerdict::Unchanged,
    ]
    .into_iter()
    .filter(|verdict| rows.iter().any(|(_, row)| row.change.verdict == *verdict))
    .map(|verdict| (Some(colour(verdict)), verdict.to_string()))
    .chain([(Some(BAND), "the threshold band: no change".to_string())])
    .collect();
    let end = legend(&mut svg, 10.0, below + 10.0, WIDTH - 20.0, &entries);
    svg.set_height(end + 10.0);
    svg.finish()
}
