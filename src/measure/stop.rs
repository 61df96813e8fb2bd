//! SIGINT (Ctrl-C) and SIGTERM as a request to stop soon, keeping what is
//! done.
//!
//! The first of either signal sets the process's [`StopFlag`] and writes one
//! line to stderr saying so. Workers watch the flag inside their kernel's
//! loop, so a repetition in flight ends within one block of work (the engine
//! then discards it), and the callers, seeing the repetition stopped, save the
//! repetitions done and mark the result incomplete. Both handlers reset on
//! delivery (`SA_RESETHAND`), and the first signal also resets the other one,
//! so a second SIGINT or SIGTERM ends the process the default way at once.
//!
//! This module only records which signal arrived ([`stop_signal`]); what a
//! command exits with is the command's business.

use std::io::IsTerminal;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

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

    fn other(self) -> StopSignal {
        match self {
            StopSignal::Interrupt => StopSignal::Terminate,
            StopSignal::Terminate => StopSignal::Interrupt,
        }
    }

    /// The line the handler writes, prepared in advance: a handler may not
    /// format or allocate.
    fn notice(self) -> &'static [u8] {
        macro_rules! notice {
            ($name:literal) => {
                concat!(
                    "placement-study: ",
                    $name,
                    ": stopping within a second; the repetitions done so far are kept \
                     (a second SIGINT or SIGTERM quits at once)\n"
                )
                .as_bytes()
            };
        }
        match self {
            StopSignal::Interrupt => notice!("SIGINT"),
            StopSignal::Terminate => notice!("SIGTERM"),
        }
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
        return;
    }
    // SAFETY: errno is this thread's, and the handler runs on the interrupted
    // thread; it is put back so the interrupted code never sees write's.
    let errno = unsafe { libc::__errno_location() };
    let saved_errno = unsafe { *errno };
    // SAFETY: signal(2) is async-signal-safe, and SIG_DFL a valid disposition.
    unsafe { libc::signal(signal.other().signal_number(), libc::SIG_DFL) };
    if STDERR_IS_TERMINAL.load(Ordering::SeqCst) {
        write_all_to_stderr(CLEAR_LINE);
    }
    write_all_to_stderr(signal.notice());
    // SAFETY: as above.
    unsafe { *errno = saved_errno };
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
        SaFlags::SA_RESTART | SaFlags::SA_RESETHAND,
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
            assert_ne!(signal.other(), signal);
        }
        assert_eq!(StopSignal::from_number(0), None);
    }

    #[test]
    fn notices_are_one_line_naming_the_signal() {
        for signal in StopSignal::ALL {
            let notice = std::str::from_utf8(signal.notice()).unwrap();
            assert!(
                notice.starts_with(&format!("placement-study: {}: stopping", signal.name())),
                "{notice}"
            );
            assert_eq!(notice.matches('\n').count(), 1, "{notice}");
            assert!(notice.ends_with('\n'), "{notice}");
        }
    }
}
