//! SIGINT and SIGTERM as a request to stop between repetitions.
//!
//! (Interim version: the signals helper's branch replaces this file.)

use std::sync::atomic::{AtomicI32, Ordering};

use anyhow::Context;
use nix::sys::signal::{SaFlags, SigAction, SigHandler, SigSet, Signal, sigaction};

/// The first stop signal received, 0 for none.
static STOP_SIGNAL: AtomicI32 = AtomicI32::new(0);

/// Which signal asked the measurement to stop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopSignal {
    /// SIGINT (Ctrl-C).
    Interrupt,
    /// SIGTERM (kill, systemd, a batch scheduler).
    Terminate,
}

impl StopSignal {
    pub fn signal_number(self) -> i32 {
        match self {
            StopSignal::Interrupt => libc::SIGINT,
            StopSignal::Terminate => libc::SIGTERM,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            StopSignal::Interrupt => "SIGINT",
            StopSignal::Terminate => "SIGTERM",
        }
    }
}

extern "C" fn request_stop(signal: libc::c_int) {
    let _ = STOP_SIGNAL.compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst);
}

/// Installs the handler for SIGINT and SIGTERM.
pub fn install_stop_handlers() -> anyhow::Result<()> {
    let action = SigAction::new(
        SigHandler::Handler(request_stop),
        SaFlags::SA_RESTART | SaFlags::SA_RESETHAND,
        SigSet::empty(),
    );
    for signal in [Signal::SIGINT, Signal::SIGTERM] {
        // SAFETY: the handler only stores to an atomic.
        unsafe { sigaction(signal, &action) }
            .with_context(|| format!("cannot install the {signal} handler"))?;
    }
    Ok(())
}

/// Whether a stop signal arrived since the handlers were installed.
pub fn stop_requested() -> bool {
    stop_signal().is_some()
}

/// The first stop signal that arrived.
pub fn stop_signal() -> Option<StopSignal> {
    match STOP_SIGNAL.load(Ordering::SeqCst) {
        libc::SIGINT => Some(StopSignal::Interrupt),
        libc::SIGTERM => Some(StopSignal::Terminate),
        _ => None,
    }
}
