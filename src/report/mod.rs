//! Report: human tables, JSON and CSV.

pub mod compare;
pub mod csv;
pub mod gate;
pub mod hybrid;
pub mod observe;
pub mod pairs;
pub mod run;
pub mod table;
pub mod topology;
pub mod units;
pub mod warnings;
