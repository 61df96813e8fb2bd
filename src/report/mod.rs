//! Report: human tables, JSON and CSV.
