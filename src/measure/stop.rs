//! SIGINT (Ctrl-C) and SIGTERM as a request to stop soon, keeping what is
//! done.
//!
//! The first of either signal sets the process's [`StopFlag`] and writes one
//! line to stderr saying what happens next ([`StopNotice`]). Workers watch
//! the flag inside their kernel's loop, so a repetition in flight ends
//! within one block of work (the engine then discards it), and the callers,
//! seeing the repetition stopped, save the repetitions done and mark the
//! result incomplete. A command this tool runs is told by its
//! [`super::tree::Supervisor`], which passes the signal on to the command's
//! whole process tree.
//!
//! A second SIGINT or SIGTERM quits at once: while a command runs (its
//! group registered with [`set_command_group`]) the handler sends SIGKILL
//! to the group and the supervisor, within one poll, kills the rest of the
//! tree and ends the process the way that signal does ([`quit_now`]);
//! otherwise the handler ends the process the default way at once.
//!
//! This module only records which signal arrived ([`stop_signal`]); what a
//! command exits with is the command's business.

use std::io::IsTerminal;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU8, Ordering};

use anyhow::Context;
use nix::sys::signal::{SaFlags, SigAction, SigHandler, SigSet, Signal, sigaction};

use super::kernel::StopFlag;

/// The signals that request a stop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopSignal {
    /// SIGINT: Ctrl-C at a terminal.
    Interrupt,
    /// SIGTERM: `kill`'s default, and what service managers send first.
    Terminate,
}

impl StopSignal {
    /// Every stop signal.
    pub const ALL: [StopSignal; 2] = [StopSignal::Interrupt, StopSignal::Terminate];

    /// The signal's number on this system (2 and 15 on Linux).
    pub fn signal_number(self) -> i32 {
        match self {
            StopSignal::Interrupt => libc::SIGINT,
            StopSignal::Terminate => libc::SIGTERM,
        }
    }

    /// "SIGINT" or "SIGTERM".
    pub fn name(self) -> &'static str {
        match self {
            StopSignal::Interrupt => "SIGINT",
            StopSignal::Terminate => "SIGTERM",
        }
    }

    fn from_number(number: i32) -> Option<StopSignal> {
        StopSignal::ALL
            .into_iter()
            .find(|signal| signal.signal_number() == number)
    }

    /// The line the handler writes for `notice`, prepared in advance: a
    /// handler may not format or allocate.
    fn notice(self, notice: StopNotice) -> &'static [u8] {
        macro_rules! notice {
            ($name:literal) => {
                match notice {
                    StopNotice::Repetitions => concat!(
                        "placement-study: ",
                        $name,
                        ": stopping within a second; the repetitions done so far are kept \
                         (a second SIGINT or SIGTERM quits at once)\n"
                    ),
                    StopNotice::CommandRounds => concat!(
                        "placement-study: ",
                        $name,
                        ": stopping within a second: COMMAND's process tree gets ",
                        $name,
                        ", then SIGKILL, and the repetitions done so far are kept \
                         (a second SIGINT or SIGTERM quits at once)\n"
                    ),
                    StopNotice::Following => concat!(
                        "placement-study: ",
                        $name,
                        ": passed on to COMMAND's process tree; its report follows when it \
                         ends (a second SIGINT or SIGTERM kills the tree and quits at once)\n"
                    ),
                    StopNotice::Recording => concat!(
                        "placement-study: ",
                        $name,
                        ": stopping within a second; what was recorded so far is kept \
                         (a second SIGINT or SIGTERM quits at once)\n"
                    ),
                }
                .as_bytes()
            };
        }
        match self {
            StopSignal::Interrupt => notice!("SIGINT"),
            StopSignal::Terminate => notice!("SIGTERM"),
        }
    }
}

/// What the first stop signal does, as its notice says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum StopNotice {
    /// The built-in kernel's repetitions (the default).
    Repetitions = 0,
    /// `run -- COMMAND`: the command's tree is stopped, the finished
    /// rounds kept.
    CommandRounds = 1,
    /// `observe -- COMMAND`: the signal is passed on, and the command's end
    /// awaited.
    Following = 2,
    /// `observe --pid`, `observe --kernel`: the recording ends.
    Recording = 3,
}

impl StopNotice {
    const ALL: [StopNotice; 4] = [
        StopNotice::Repetitions,
        StopNotice::CommandRounds,
        StopNotice::Following,
        StopNotice::Recording,
    ];
}

/// Which notice the first stop signal writes.
static NOTICE: AtomicU8 = AtomicU8::new(StopNotice::Repetitions as u8);

/// Says what the first stop signal will do (the command that measures
/// knows; the handler writes it).
pub fn set_notice(notice: StopNotice) {
    NOTICE.store(notice as u8, Ordering::SeqCst);
}

/// The process group of the command running now; 0 when none runs.
static COMMAND_GROUP: AtomicI32 = AtomicI32::new(0);

/// The second stop signal's number, once one arrived while a command ran.
static QUIT: AtomicI32 = AtomicI32::new(0);

/// Registers the process group of the command now running (0: none), for
/// a second stop signal to kill at once.
pub fn set_command_group(group: i32) {
    COMMAND_GROUP.store(group, Ordering::SeqCst);
}

/// The second stop signal, once one arrived while a command ran: its tree
/// must be killed and the process must quit ([`quit_now`]).
pub fn quit_signal() -> Option<i32> {
    Some(QUIT.load(Ordering::SeqCst)).filter(|&number| number != 0)
}

/// Ends this process the way signal `number` does by default (the status
/// a shell shows for it), at once.
pub fn quit_now(number: i32) -> ! {
    // SAFETY: a default disposition for a valid signal, then raise it; an
    // unblocked default-action SIGINT or SIGTERM ends the process.
    unsafe {
        libc::signal(number, libc::SIG_DFL);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, number);
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::raise(number);
        libc::_exit(128 + number)
    }
}

/// The process's stop flag, set by the handlers and watched by every worker.
static STOP: StopFlag = StopFlag::new();

/// The number of the first stop signal to arrive; 0 before any.
static FIRST_SIGNAL: AtomicI32 = AtomicI32::new(0);

/// Whether stderr was a terminal at installation: the notice then first
/// clears the progress line it would otherwise be glued to.
static STDERR_IS_TERMINAL: AtomicBool = AtomicBool::new(false);

/// Erases the terminal's current line, as the progress line does.
const CLEAR_LINE: &[u8] = b"\r\x1b[2K";

extern "C" fn request_stop(number: libc::c_int) {
    // Only async-signal-safe work here: atomics, signal(2), write(2).
    let Some(signal) = StopSignal::from_number(number) else {
        return;
    };
    // Recorded before the request, so whoever sees the request sees which.
    let first = FIRST_SIGNAL
        .compare_exchange(0, number, Ordering::SeqCst, Ordering::SeqCst)
        .is_ok();
    STOP.request();
    if !first {
        let group = COMMAND_GROUP.load(Ordering::SeqCst);
        if group > 0 {
            // SAFETY: kill(2) is async-signal-safe; the group is the
            // command's own, never this process's.
            unsafe { libc::kill(-group, libc::SIGKILL) };
            QUIT.store(number, Ordering::SeqCst);
        } else {
            // SAFETY: signal(2) and raise(3) are async-signal-safe; the
            // signal is blocked in its handler, so it ends the process the
            // default way as the handler returns.
            unsafe {
                libc::signal(number, libc::SIG_DFL);
                libc::raise(number);
            }
        }
        return;
    }
    // errno is this thread's, and the handler runs on the interrupted
    // thread: it is put back so the interrupted code never sees write's.
    let saved_errno = nix::errno::Errno::last_raw();
    if STDERR_IS_TERMINAL.load(Ordering::SeqCst) {
        write_all_to_stderr(CLEAR_LINE);
    }
    let notice = StopNotice::ALL
        .into_iter()
        .find(|notice| *notice as u8 == NOTICE.load(Ordering::SeqCst))
        .unwrap_or(StopNotice::Repetitions);
    write_all_to_stderr(signal.notice(notice));
    nix::errno::Errno::set_raw(saved_errno);
}

/// write(2) to stderr until all of `bytes` is out or it fails (nothing to do
/// about a failure inside a handler). Async-signal-safe.
fn write_all_to_stderr(mut bytes: &[u8]) {
    while !bytes.is_empty() {
        // SAFETY: the pointer and length describe `bytes`.
        let written =
            unsafe { libc::write(libc::STDERR_FILENO, bytes.as_ptr().cast(), bytes.len()) };
        if written <= 0 {
            return;
        }
        bytes = &bytes[written as usize..];
    }
}

/// Installs the SIGINT and SIGTERM handlers that request a stop.
///
/// Installs them once per process: calling it again (a command calling
/// another that installs them too) changes nothing, so a signal already
/// received keeps its default action for next time. An installation that
/// failed fails the same way again.
pub fn install_stop_handlers() -> anyhow::Result<()> {
    static INSTALLED: OnceLock<Result<(), String>> = OnceLock::new();
    INSTALLED
        .get_or_init(|| install().map_err(|error| format!("{error:#}")))
        .clone()
        .map_err(anyhow::Error::msg)
}

fn install() -> anyhow::Result<()> {
    STDERR_IS_TERMINAL.store(std::io::stderr().is_terminal(), Ordering::SeqCst);
    let action = SigAction::new(
        SigHandler::Handler(request_stop),
        SaFlags::SA_RESTART,
        SigSet::empty(),
    );
    for (signal, nix_signal) in [
        (StopSignal::Interrupt, Signal::SIGINT),
        (StopSignal::Terminate, Signal::SIGTERM),
    ] {
        // SAFETY: the handler does only async-signal-safe work (see it), and
        // it replaces no handler Rust relies on.
        unsafe { sigaction(nix_signal, &action) }
            .with_context(|| format!("cannot install the {} handler", signal.name()))?;
    }
    Ok(())
}

/// Whether a SIGINT or SIGTERM arrived since the handlers were installed.
pub fn stop_requested() -> bool {
    STOP.is_requested()
}

/// Which stop signal arrived first, if any did: `Some` whenever
/// [`stop_requested`] is true.
pub fn stop_signal() -> Option<StopSignal> {
    StopSignal::from_number(FIRST_SIGNAL.load(Ordering::SeqCst))
}

/// The flag the handlers set, for kernels to watch.
pub fn stop_flag() -> &'static StopFlag {
    &STOP
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signals_are_named_and_numbered() {
        assert_eq!(StopSignal::Interrupt.name(), "SIGINT");
        assert_eq!(StopSignal::Terminate.name(), "SIGTERM");
        assert_eq!(StopSignal::Interrupt.signal_number(), 2);
        assert_eq!(StopSignal::Terminate.signal_number(), 15);
        for signal in StopSignal::ALL {
            assert_eq!(
                StopSignal::from_number(signal.signal_number()),
                Some(signal)
            );
        }
        assert_eq!(StopSignal::from_number(0), None);
    }

    #[test]
    fn notices_are_one_line_naming_the_signal() {
        for (signal, notice) in StopSignal::ALL
            .into_iter()
            .flat_map(|signal| StopNotice::ALL.map(|notice| (signal, notice)))
        {
            let notice = std::str::from_utf8(signal.notice(notice)).unwrap();
            assert!(
                notice.starts_with(&format!("placement-study: {}: ", signal.name())),
                "{notice}"
            );
            assert_eq!(notice.matches('\n').count(), 1, "{notice}");
            assert!(notice.ends_with('\n'), "{notice}");
        }
    }
}
