//! Thin entry point: parse, check the options, run the command, and turn
//! its outcome (or error) into the exit status (see `exit.rs`).

use placement_study::cli::Cli;
use placement_study::{commands, exit, options};
use std::io::Write;
use std::process::ExitCode;

/// One line on stderr: the context chain joined, innermost cause last. A
/// closed stderr loses the line but never panics (eprintln! would).
fn say_error(error: &anyhow::Error) {
    let _ = writeln!(std::io::stderr(), "placement-study: {error:#}");
}

fn main() -> ExitCode {
    let cli = match Cli::parse_args() {
        Ok(cli) => cli,
        Err(e) => {
            let status = if e.use_stderr() { exit::USAGE } else { 0 };
            let _ = e.print();
            return ExitCode::from(status);
        }
    };
    let command = match options::from_cli(cli) {
        Ok(command) => command,
        Err(e) => {
            say_error(&e);
            return ExitCode::from(exit::USAGE);
        }
    };
    match commands::dispatch(command) {
        Ok(outcome) => ExitCode::from(outcome.exit_status()),
        Err(e) => {
            say_error(&e);
            let usage = e.downcast_ref::<exit::UsageError>().is_some();
            ExitCode::from(if usage { exit::USAGE } else { exit::ERROR })
        }
    }
}
