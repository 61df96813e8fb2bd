//! `run --prepare CMD -- COMMAND`: a shell command run before each
//! repetition (to drop caches, reset a database), through `sh -c` as
//! hyperfine runs it. Its stdin and stdout are `/dev/null`; its stderr is
//! kept for the error a failure gives.

use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};

use crate::escape::escape_controls;

/// Runs `command` through `sh -c` and waits for it; a non-zero exit is an
/// error naming it, with its status and the end of its stderr.
pub fn run_prepare(command: &str) -> Result<()> {
    let shown = escape_controls(command);
    let output = Command::new("sh")
        .arg("-c")
        .arg(command)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .with_context(|| format!("--prepare '{shown}': starting sh"))?;
    if output.status.success() {
        return Ok(());
    }
    let status = match output.status.code() {
        Some(code) => format!("exited with status {code}"),
        None => "was killed by a signal".to_string(),
    };
    let tail = super::command::last_lines(&output.stderr);
    if tail.is_empty() {
        bail!("--prepare '{shown}' {status}; fix it or drop --prepare");
    }
    bail!(
        "--prepare '{shown}' {status}; the end of its stderr: {}",
        escape_controls(&tail)
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failing_prepare_is_named_with_its_status_and_stderr() {
        run_prepare("true").unwrap();
        let error = run_prepare("echo no cache >&2; exit 3")
            .unwrap_err()
            .to_string();
        assert_eq!(
            error,
            "--prepare 'echo no cache >&2; exit 3' exited with status 3; the end of its stderr: \
             no cache"
        );
    }
}
