//! The human view of an `observe` result.

use crate::saved::ObserveResult;

pub fn render(result: &ObserveResult) -> String {
    format!("{}\n", result.sentence)
}
