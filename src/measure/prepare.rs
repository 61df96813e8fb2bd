//! `run --prepare CMD -- COMMAND`: a shell command run before each
//! repetition (to drop caches, reset a database), through `sh -c` as
//! hyperfine runs it. Its stdin and stdout are `/dev/null`; the end of its
//! stderr is kept for the error a failure gives.
//!
//! It is owned as a repetition's command is ([`super::tree`]): a process
//! group of its own, a stop signal passed on to its tree and SIGKILL after
//! a grace, SIGKILL at `--prepare-timeout`, and what of its tree outlives
//! its shell stopped (unless `--leave-running`). Its stderr is read by a
//! thread and waited for only a moment after the shell ended, so a
//! background child that holds the pipe open cannot hang the study.

use std::ffi::OsString;
use std::os::fd::AsFd;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use super::command::{POLL, keep_tail, last_lines, tail_within, wait_readable};
use super::launch::{ChildStdio, HeldCommand};
use super::recorder::exit_notice;
use super::recording::CommandEnd;
use super::tree::{OUTLIVER_GRACE, OnStop, Ownership, Supervisor, Tree};
use crate::escape::escape_controls;

/// Runs `command` through `sh -c` and waits for it, at most
/// `ownership.prepare_timeout`; a non-zero exit, a timeout or a stop is an
/// error naming it, with its status and the end of its stderr. Outlivers
/// are named on stderr.
pub fn run_prepare(command: &str, ownership: &Ownership) -> Result<()> {
    let shown = escape_controls(command);
    let argv: Vec<OsString> = ["sh", "-c", command].iter().map(Into::into).collect();
    let open_null = |write: bool| {
        std::fs::OpenOptions::new()
            .read(!write)
            .write(write)
            .open("/dev/null")
            .context("opening /dev/null for --prepare")
    };
    let (read, write) =
        nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).context("pipe for --prepare's stderr")?;
    let stdio = ChildStdio {
        stdin: Some(open_null(false)?.into()),
        stdout: Some(open_null(true)?.into()),
        stderr: Some(write),
    };
    let mut held = HeldCommand::fork_with(&argv, stdio, None)
        .with_context(|| format!("--prepare '{shown}': starting sh"))?;
    let tree = Tree::of(held.pid);
    let tail = keep_tail(read);
    held.release()
        .with_context(|| format!("--prepare '{shown}': starting sh"))?;
    let exited = exit_notice(held.pid.as_raw() as u32);
    let mut supervisor = Supervisor::new(
        OnStop::KillAfter(OUTLIVER_GRACE),
        Some(ownership.prepare_timeout),
    );
    let end = loop {
        if let Some(end) = held.try_wait()? {
            break end;
        }
        supervisor.tend(&tree);
        wait_readable(exited.as_ref().map(AsFd::as_fd), POLL);
    };
    let (outlivers, _) = tree.stop_outlivers(Instant::now(), ownership.leave_running);
    for outliver in &outlivers {
        eprintln!(
            "placement-study: --prepare '{shown}' left {} (PID {}) running; {}",
            escape_controls(&outliver.name),
            outliver.pid,
            outliver.ended_by.describe()
        );
    }
    let tail = last_lines(&tail_within(tail, Duration::from_millis(100)));
    let status = if supervisor.timed_out {
        format!(
            "did not end within --prepare-timeout {}s and was killed",
            ownership.prepare_timeout.as_secs_f64()
        )
    } else {
        match end {
            CommandEnd::Exited { code: 0 } => return Ok(()),
            CommandEnd::Exited { code } => format!("exited with status {code}"),
            CommandEnd::Signaled { signal } => format!("was killed by signal {signal}"),
        }
    };
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

    fn ownership(timeout_ms: u64) -> Ownership {
        Ownership {
            leave_running: false,
            prepare_timeout: Duration::from_millis(timeout_ms),
        }
    }

    #[test]
    fn a_failing_prepare_is_named_with_its_status_and_stderr() {
        run_prepare("true", &ownership(10_000)).unwrap();
        let error = run_prepare("echo no cache >&2; exit 3", &ownership(10_000))
            .unwrap_err()
            .to_string();
        assert_eq!(
            error,
            "--prepare 'echo no cache >&2; exit 3' exited with status 3; the end of its stderr: \
             no cache"
        );
    }

    #[test]
    fn a_prepare_past_its_timeout_is_killed_and_named() {
        let began = Instant::now();
        let error = run_prepare("sleep 30", &ownership(300))
            .unwrap_err()
            .to_string();
        assert!(began.elapsed() < Duration::from_secs(10), "{error}");
        assert!(
            error.contains("did not end within --prepare-timeout 0.3s"),
            "{error}"
        );
    }
}
