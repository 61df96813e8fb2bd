//! `placement-study completions SHELL`: the shell's completion script, on
//! standard output (`source <(placement-study completions bash)`, or the
//! file a package installs).

use crate::exit::Outcome;
use crate::saved::write_stdout;
use anyhow::Result;

pub struct CompletionsCommand {
    /// The script, generated from the command line's definition.
    pub script: String,
}

pub fn run(command: &CompletionsCommand) -> Result<Outcome> {
    write_stdout(&command.script)?;
    Ok(Outcome::Success)
}
