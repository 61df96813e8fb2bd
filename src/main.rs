//! Thin entry point: parse, dispatch, map errors to exit codes.

use clap::Parser;
use placement_study::cli::Cli;
use placement_study::commands;
use placement_study::judge::gate::{EXIT_ERROR, EXIT_USAGE};
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { EXIT_USAGE } else { 0 };
            let _ = e.print();
            return ExitCode::from(code as u8);
        }
    };
    match commands::dispatch(&cli.command) {
        Ok(code) => ExitCode::from(code as u8),
        Err(e) => {
            // One line: the context chain joined, innermost cause last.
            eprintln!("placement-study: {e:#}");
            ExitCode::from(EXIT_ERROR as u8)
        }
    }
}
