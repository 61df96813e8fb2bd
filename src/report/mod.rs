//! Report: human tables, JSON, CSV and Prometheus metrics.

pub mod baseline;
pub mod blocks;
pub mod command;
pub mod compare;
pub mod csv;
pub mod document;
pub mod figure;
pub mod fleet;
pub mod gate;
pub mod html;
pub mod hybrid;
pub mod labels;
pub mod latency;
pub mod markdown;
pub mod memory;
pub mod nfd;
pub mod nodes;
pub mod observe;
pub mod pairs;
pub mod prom;
pub mod run;
pub mod sweep;
pub mod table;
pub mod topology;
pub mod trace;

pub mod view;
pub mod warnings;
