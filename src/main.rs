//! Thin entry point: parse, check the options, run the command, and turn
//! its outcome (or error) into the exit status (see `exit.rs`).

use clap::error::{ContextKind, ContextValue};
use placement_study::cli::Cli;
use placement_study::escape::escape_controls;
use placement_study::{commands, exit, options};
use std::io::Write;
use std::process::ExitCode;

/// One line on stderr: the context chain joined, innermost cause last. A
/// closed stderr loses the line but never panics (eprintln! would). The
/// values the messages echo are escaped where they are named; escaping the
/// whole line here as well keeps it one line, and harmless to the terminal,
/// whichever message forgot.
fn say_error(error: &anyhow::Error) {
    let line = format!("{error:#}");
    let _ = writeln!(
        std::io::stderr(),
        "placement-study: {}",
        escape_controls(&line)
    );
}

/// clap's own message (or `--help`), as clap prints it, except that a
/// value it quotes back (`invalid value '1\n2' for '--pid <PID>'`) is
/// escaped as every other error's values are: clap echoes what was typed
/// as it is.
fn say_usage_error(mut error: clap::Error) {
    if let Some(ContextValue::String(typed)) = error.get(ContextKind::InvalidValue) {
        let shown = escape_controls(typed).into_owned();
        error.insert(ContextKind::InvalidValue, ContextValue::String(shown));
    }
    let _ = error.print();
}

fn main() -> ExitCode {
    let cli = match Cli::parse_args() {
        Ok(cli) => cli,
        Err(e) => {
            let status = if e.use_stderr() { exit::USAGE } else { 0 };
            say_usage_error(e);
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
