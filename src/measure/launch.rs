//! Starting a command held at the door: forked, but not yet exec'd, so the
//! observer can attach its events to the child's pid before the command's
//! first instruction (as `perf stat` and `perf record` do).
//!
//! The child leads a process group of its own (`setpgid` before the exec),
//! so its whole tree can be signalled ([`super::tree`]). With a memory
//! policy (`run --membind`) it sets it on itself before the exec and reads
//! it back (`set_mempolicy` is the calling thread's, and the command and
//! every process it forks inherit it).
//!
//! `std::process::Command` cannot do this: its `spawn` waits for the exec,
//! so a child that waits for the parent before exec'ing would deadlock it.

use std::ffi::{CString, OsString};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};
use nix::fcntl::OFlag;
use nix::sys::wait::waitpid;
use nix::unistd::{Pid, pipe2};

use super::mempolicy::{BindRefused, PreparedBind};
use super::recording::CommandEnd;
use crate::plan::membind::nodes_phrase;

/// A forked child waiting to exec its command.
pub struct HeldCommand {
    pub pid: Pid,
    /// Written once to let the child exec; closed to make it exit unrun.
    go: Option<OwnedFd>,
    /// Closed by a successful exec (close-on-exec); carries the stage that
    /// failed (0: the exec, else a [`BindRefused`]) and errno otherwise.
    exec_error: OwnedFd,
    program: String,
    /// The nodes its memory is bound to, to name them if that failed.
    membind: Option<Vec<u32>>,
}

/// The descriptors a held child takes as its stdin, stdout and stderr
/// before its exec; `None` keeps this process's.
#[derive(Debug, Default)]
pub struct ChildStdio {
    pub stdin: Option<OwnedFd>,
    pub stdout: Option<OwnedFd>,
    pub stderr: Option<OwnedFd>,
}

/// Finds `program` as a shell would: a name with a slash is a path, any
/// other is looked up in `PATH`.
pub fn resolve(program: &Path) -> Result<PathBuf> {
    if program.as_os_str().as_bytes().contains(&b'/') {
        return Ok(program.to_path_buf());
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| {
            nix::unistd::access(candidate, nix::unistd::AccessFlags::X_OK).is_ok()
                && candidate.is_file()
        })
        .ok_or_else(|| {
            anyhow!(
                "COMMAND '{}' not found in PATH; give its path, or check its spelling",
                program.display()
            )
        })
}

fn c_string(bytes: &[u8], what: &str) -> Result<CString> {
    CString::new(bytes).map_err(|_| anyhow!("{what} contains a NUL byte"))
}

impl HeldCommand {
    /// Forks a child that will exec `argv` once [`HeldCommand::release`]
    /// is called, with this process's stdio.
    pub fn fork(argv: &[OsString]) -> Result<HeldCommand> {
        HeldCommand::fork_with(argv, ChildStdio::default(), None)
    }

    /// Forks a child that will exec `argv` on `stdio` once
    /// [`HeldCommand::release`] is called, its memory bound to the nodes
    /// `membind` names (`MPOL_BIND`, set and read back before the exec).
    /// Everything the child needs is prepared before the fork: between fork
    /// and exec it only makes async-signal-safe calls. This process's
    /// copies of `stdio` are closed.
    pub fn fork_with(
        argv: &[OsString],
        stdio: ChildStdio,
        membind: Option<&[u32]>,
    ) -> Result<HeldCommand> {
        let first = argv.first().context("no COMMAND given after --")?;
        let program = resolve(Path::new(first))?;
        let path = c_string(program.as_os_str().as_bytes(), "COMMAND")?;
        let args: Vec<CString> = argv
            .iter()
            .map(|arg| c_string(arg.as_bytes(), "an argument of COMMAND"))
            .collect::<Result<_>>()?;
        let mut arg_pointers: Vec<*const libc::c_char> = args.iter().map(|a| a.as_ptr()).collect();
        arg_pointers.push(std::ptr::null());
        let (go_read, go_write) = pipe2(OFlag::O_CLOEXEC).context("pipe for COMMAND")?;
        let (error_read, error_write) = pipe2(OFlag::O_CLOEXEC).context("pipe for COMMAND")?;
        let redirects: Vec<(libc::c_int, libc::c_int)> =
            [&stdio.stdin, &stdio.stdout, &stdio.stderr]
                .into_iter()
                .zip([libc::STDIN_FILENO, libc::STDOUT_FILENO, libc::STDERR_FILENO])
                .filter_map(|(fd, target)| fd.as_ref().map(|fd| (fd.as_raw_fd(), target)))
                .collect();
        let mut bind = membind.map(PreparedBind::new);
        // SAFETY: the child only calls async-signal-safe functions (close,
        // signal, sigprocmask, setpgid, read, set_mempolicy, get_mempolicy,
        // dup2, execv, write, _exit) on data prepared above, then execs or
        // exits.
        match unsafe { libc::fork() } {
            -1 => Err(std::io::Error::last_os_error()).context("fork for COMMAND"),
            // SAFETY: in the child, before exec: only the async-signal-safe
            // calls named above, on descriptors and buffers made before fork.
            0 => unsafe {
                libc::close(go_write.as_raw_fd());
                libc::close(error_read.as_raw_fd());
                // Rust ignores SIGPIPE and the stop handlers catch SIGINT and
                // SIGTERM: the command gets the defaults and no mask.
                for signal in [libc::SIGPIPE, libc::SIGINT, libc::SIGTERM] {
                    libc::signal(signal, libc::SIG_DFL);
                }
                let mut none: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut none);
                libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
                // A process group of its own, so its whole tree can be
                // signalled (the parent sets it too: whichever runs first).
                libc::setpgid(0, 0);
                let mut byte = 0u8;
                if libc::read(go_read.as_raw_fd(), (&raw mut byte).cast(), 1) == 1 {
                    let failed = match bind.as_mut().map(PreparedBind::apply) {
                        Some(Err(refused)) => refused.encode(),
                        _ => {
                            // dup2 clears close-on-exec on the target: the
                            // command keeps these three, and the originals
                            // close at exec.
                            for &(fd, target) in &redirects {
                                libc::dup2(fd, target);
                            }
                            libc::execv(path.as_ptr(), arg_pointers.as_ptr());
                            [0, *libc::__errno_location()]
                        }
                    };
                    libc::write(
                        error_write.as_raw_fd(),
                        failed.as_ptr().cast(),
                        size_of_val(&failed),
                    );
                }
                libc::_exit(127)
            },
            child => {
                drop(stdio);
                let _ = nix::unistd::setpgid(Pid::from_raw(child), Pid::from_raw(child));
                Ok(HeldCommand {
                    pid: Pid::from_raw(child),
                    go: Some(go_write),
                    exec_error: error_read,
                    program: program.display().to_string(),
                    membind: membind.map(<[u32]>::to_vec),
                })
            }
        }
    }

    /// Lets the child exec, and waits until it has: an exec that failed,
    /// or a memory policy that did not take, is an error naming the program
    /// (the child is reaped).
    pub fn release(&mut self) -> Result<()> {
        let go = self.go.take().context("COMMAND was already released")?;
        nix::unistd::write(&go, &[1]).context("releasing COMMAND")?;
        drop(go);
        let mut message = [0u8; 2 * size_of::<libc::c_int>()];
        let read = nix::unistd::read(&self.exec_error, &mut message).unwrap_or(0);
        if read == message.len() {
            let _ = waitpid(self.pid, None);
            let (stage, errno) = message.split_at(size_of::<libc::c_int>());
            let int =
                |bytes: &[u8]| libc::c_int::from_ne_bytes(bytes.try_into().unwrap_or_default());
            let failed = [int(stage), int(errno)];
            if let (Some(refused), Some(nodes)) = (BindRefused::decode(failed), &self.membind) {
                bail!(
                    "--membind: cannot bind COMMAND '{}' to {}: {}",
                    self.program,
                    nodes_phrase(nodes),
                    refused.reason(nodes)
                );
            }
            let error = std::io::Error::from_raw_os_error(failed[1]);
            bail!("cannot run COMMAND '{}': {error}", self.program);
        }
        Ok(())
    }

    /// The child's end, if it has ended (never blocks).
    pub fn try_wait(&self) -> Result<Option<CommandEnd>> {
        Ok(self.try_wait_with_usage()?.map(|(end, _)| end))
    }

    /// The child's end and its rusage (its own, with that of every
    /// descendant it waited for), if it has ended (never blocks).
    pub fn try_wait_with_usage(&self) -> Result<Option<(CommandEnd, libc::rusage)>> {
        let mut status: libc::c_int = 0;
        // SAFETY: rusage is plain data that wait4 fills in.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: valid pointers to the two out-parameters, for this call.
        let reaped =
            unsafe { libc::wait4(self.pid.as_raw(), &mut status, libc::WNOHANG, &mut usage) };
        if reaped < 0 {
            return Err(std::io::Error::last_os_error()).context("waiting for COMMAND");
        }
        if reaped == 0 {
            return Ok(None);
        }
        let end = if libc::WIFSIGNALED(status) {
            CommandEnd::Signaled {
                signal: libc::WTERMSIG(status),
            }
        } else {
            CommandEnd::Exited {
                code: libc::WEXITSTATUS(status),
            }
        };
        Ok(Some((end, usage)))
    }
}

/// The terminal handed to a command's process group for as long as it
/// runs, where this process had it in the foreground: a command in a group
/// of its own would otherwise be stopped (SIGTTIN) when it reads the
/// terminal. Given back when dropped.
pub struct Foreground {
    ours: Pid,
}

impl Foreground {
    /// Gives the terminal on standard input to `group`, if this process's
    /// group is its foreground one; `None` otherwise (no terminal, or run
    /// in the background).
    pub fn give(group: Pid) -> Option<Foreground> {
        let stdin = std::io::stdin();
        let ours = nix::unistd::getpgrp();
        if nix::unistd::tcgetpgrp(&stdin).ok()? != ours {
            return None;
        }
        nix::unistd::tcsetpgrp(&stdin, group).ok()?;
        Some(Foreground { ours })
    }
}

impl Drop for Foreground {
    /// Takes the terminal back: from a background group that sends
    /// SIGTTOU, ignored for the call.
    fn drop(&mut self) {
        use nix::sys::signal::{SigHandler, Signal, signal};
        // SAFETY: SIG_IGN for the call, then the disposition it replaced.
        let previous = unsafe { signal(Signal::SIGTTOU, SigHandler::SigIgn) };
        let _ = nix::unistd::tcsetpgrp(std::io::stdin(), self.ours);
        if let Ok(previous) = previous {
            // SAFETY: the disposition that was there before.
            let _ = unsafe { signal(Signal::SIGTTOU, previous) };
        }
    }
}

impl Drop for HeldCommand {
    /// A child never released exits unrun (its read sees the pipe close);
    /// it is reaped here so no zombie is left.
    fn drop(&mut self) {
        if self.go.take().is_some() {
            let _ = waitpid(self.pid, None);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// How a released command ended, once it has.
    fn ended(held: &HeldCommand) -> CommandEnd {
        loop {
            if let Some(end) = held.try_wait().unwrap() {
                return end;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }

    #[test]
    fn a_held_command_runs_once_released_and_reports_its_code() {
        let argv: Vec<OsString> = ["sh", "-c", "exit 7"].iter().map(Into::into).collect();
        let mut held = HeldCommand::fork(&argv).unwrap();
        held.release().unwrap();
        assert_eq!(ended(&held), CommandEnd::Exited { code: 7 });
    }

    #[test]
    fn a_missing_program_is_named() {
        let argv = vec![OsString::from("no-such-program-placement-study")];
        let error = HeldCommand::fork(&argv).err().unwrap().to_string();
        assert!(
            error.contains("'no-such-program-placement-study' not found in PATH"),
            "{error}"
        );
    }

    #[test]
    fn an_exec_that_fails_is_an_error_naming_the_program() {
        let dir = tempfile::tempdir().unwrap();
        let not_executable = dir.path().join("plain");
        std::fs::write(&not_executable, "data").unwrap();
        let argv = vec![not_executable.clone().into_os_string()];
        let mut held = HeldCommand::fork(&argv).unwrap();
        let error = held.release().unwrap_err().to_string();
        assert!(error.contains("cannot run COMMAND"), "{error}");
        assert!(error.contains("plain"), "{error}");
    }

    #[test]
    fn a_bound_command_runs_and_a_bind_the_kernel_refuses_is_named() {
        let argv: Vec<OsString> = ["sh", "-c", "exit 3"].iter().map(Into::into).collect();
        let mut held = HeldCommand::fork_with(&argv, ChildStdio::default(), Some(&[0])).unwrap();
        held.release().unwrap();
        assert_eq!(ended(&held), CommandEnd::Exited { code: 3 });
        // No machine has node 1000: the child's set_mempolicy fails, and
        // it exits unrun.
        let mut held = HeldCommand::fork_with(&argv, ChildStdio::default(), Some(&[1000])).unwrap();
        let error = held.release().unwrap_err().to_string();
        assert!(
            error.starts_with("--membind: cannot bind COMMAND '") && error.contains("node 1000"),
            "{error}"
        );
        assert!(error.contains("EINVAL"), "{error}");
    }

    #[test]
    fn a_command_never_released_exits_unrun() {
        let argv: Vec<OsString> = ["sh", "-c", "exit 0"].iter().map(Into::into).collect();
        drop(HeldCommand::fork(&argv).unwrap());
    }
}
