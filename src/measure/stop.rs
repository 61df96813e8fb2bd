//! Ctrl-C as a request to stop between repetitions.
//!
//! The first SIGINT only sets a flag: the repetition in flight finishes (they
//! are short), and the caller, checking [`stop_requested`] between
//! repetitions, saves what it has and marks it incomplete. The handler resets
//! itself on delivery (`SA_RESETHAND`), so a second Ctrl-C ends the process
//! the usual way.

use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Context;
use nix::sys::signal::{SaFlags, SigAction, SigHandler, SigSet, Signal, sigaction};

static STOP_REQUESTED: AtomicBool = AtomicBool::new(false);

extern "C" fn request_stop(_signal: libc::c_int) {
    // A lock-free atomic store is async-signal-safe.
    STOP_REQUESTED.store(true, Ordering::SeqCst);
}

/// Installs the SIGINT handler that sets the stop flag.
pub fn install_ctrl_c_handler() -> anyhow::Result<()> {
    let action = SigAction::new(
        SigHandler::Handler(request_stop),
        SaFlags::SA_RESTART | SaFlags::SA_RESETHAND,
        SigSet::empty(),
    );
    // SAFETY: the handler only stores to an atomic, which is
    // async-signal-safe, and it replaces no handler Rust relies on.
    unsafe { sigaction(Signal::SIGINT, &action) }
        .context("cannot install the Ctrl-C (SIGINT) handler")?;
    Ok(())
}

/// Whether Ctrl-C was pressed since the handler was installed.
pub fn stop_requested() -> bool {
    STOP_REQUESTED.load(Ordering::SeqCst)
}
