//! A host-side noise maker for the guest tests: what a noisy neighbour
//! does to a guest's measurement, on demand.
//!
//! Two kinds: bursts ([`NoiseMaker`]), and a steady neighbour
//! ([`SteadyNeighbour`]: a busy loop on one host CPU for the whole boot, in
//! a process session of its own, as another tenant's vCPU is).
//!
//! [`NoiseMaker::start`] spawns a thread in the test process, pinned to one
//! host CPU, that spins in bursts of a given length at random times: while
//! it spins, the guest vCPU pinned to that host CPU gets about half of it
//! (the host scheduler shares the CPU between the two). It is bounded (it
//! stops by itself after `bound`) and always stopped: dropping the
//! [`NoiseMaker`], on success or during a panic's unwinding, stops and
//! joins the thread.

use std::ops::RangeInclusive;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How often a quiet spell or a burst looks at the stop flag.
const POLL: Duration = Duration::from_millis(10);

/// A burst maker running on one host CPU; see the module docs.
pub struct NoiseMaker {
    stop: Arc<AtomicBool>,
    bursts: Arc<AtomicUsize>,
    thread: Option<JoinHandle<()>>,
    /// What it does, for failure messages.
    pub description: String,
}

impl NoiseMaker {
    /// Spins on host CPU `cpu` for `burst` at a time, each burst after a
    /// quiet spell drawn uniformly from `quiet`, until dropped or until
    /// `bound` has passed. Panics if the thread cannot be pinned there.
    pub fn start(
        cpu: usize,
        burst: Duration,
        quiet: RangeInclusive<Duration>,
        bound: Duration,
    ) -> NoiseMaker {
        let stop = Arc::new(AtomicBool::new(false));
        let bursts = Arc::new(AtomicUsize::new(0));
        let (pinned_tx, pinned_rx) = std::sync::mpsc::channel();
        let thread = {
            let (stop, bursts) = (stop.clone(), bursts.clone());
            let quiet = quiet.clone();
            std::thread::spawn(move || {
                let mut set = nix::sched::CpuSet::new();
                let pinned = set.set(cpu).and_then(|()| {
                    nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), &set)
                });
                let _ = pinned_tx.send(pinned.map_err(|e| e.to_string()));
                if pinned.is_err() {
                    return;
                }
                let deadline = Instant::now() + bound;
                let running = || !stop.load(Ordering::Relaxed) && Instant::now() < deadline;
                let millis = |d: &Duration| d.as_millis() as u64;
                while running() {
                    let spell = Duration::from_millis(fastrand::u64(
                        millis(quiet.start())..=millis(quiet.end()),
                    ));
                    let until = Instant::now() + spell;
                    while running() && Instant::now() < until {
                        std::thread::sleep(
                            POLL.min(until.saturating_duration_since(Instant::now())),
                        );
                    }
                    if !running() {
                        break;
                    }
                    bursts.fetch_add(1, Ordering::Relaxed);
                    let until = Instant::now() + burst;
                    while running() && Instant::now() < until {
                        std::hint::spin_loop();
                    }
                }
            })
        };
        match pinned_rx.recv() {
            Ok(Ok(())) => {}
            Ok(Err(error)) => {
                panic!("the noise maker cannot pin itself to host CPU {cpu}: {error}")
            }
            Err(_) => panic!("the noise maker thread ended before pinning itself"),
        }
        NoiseMaker {
            stop,
            bursts,
            thread: Some(thread),
            description: format!(
                "bursts of {} ms on host CPU {cpu}, {}–{} ms apart",
                burst.as_millis(),
                quiet.start().as_millis(),
                quiet.end().as_millis()
            ),
        }
    }

    /// Bursts begun so far.
    pub fn bursts(&self) -> usize {
        self.bursts.load(Ordering::Relaxed)
    }
}

impl Drop for NoiseMaker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The bursts the guest suite injects: half a second of spinning at
/// random times, a quiet spell of 0.2–1.5 s before each, so that roughly a
/// third of any stretch is loaded. A burst is shorter than the gate's
/// 1 s pause between batches, so no one burst reaches two batches; many
/// bursts still hit rounds of every batch.
pub fn guest_bursts(cpu: usize) -> NoiseMaker {
    NoiseMaker::start(
        cpu,
        Duration::from_millis(500),
        Duration::from_millis(200)..=Duration::from_millis(1500),
        Duration::from_secs(180),
    )
}

/// A busy loop pinned to one host CPU from start to drop: a tenant that
/// shares that CPU steadily. It runs in a process session of its own
/// (`setsid`): under the kernel's autogroup scheduling each session is one
/// group, so the loop takes its group's share of the CPU against the
/// guest's QEMU, as another tenant does; a thread of the test process, or
/// a `nice`d one, would share the test's own group instead. Dropped, it is
/// killed (its whole process group) and reaped.
pub struct SteadyNeighbour {
    child: std::process::Child,
}

impl SteadyNeighbour {
    /// Starts the busy loop on host CPU `cpu`; panics if it cannot start.
    pub fn start(cpu: usize) -> SteadyNeighbour {
        use std::os::unix::process::CommandExt;
        let mut command = std::process::Command::new("sh");
        command
            .args(["-c", "while :; do :; done"])
            .stdin(std::process::Stdio::null());
        // SAFETY: setsid and sched_setaffinity are async-signal-safe
        // system calls; the closure allocates nothing.
        unsafe {
            command.pre_exec(move || {
                nix::unistd::setsid()?;
                let mut set = nix::sched::CpuSet::new();
                set.set(cpu)?;
                nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), &set)?;
                Ok(())
            });
        }
        let child = command
            .spawn()
            .unwrap_or_else(|e| panic!("the steady neighbour cannot start on host CPU {cpu}: {e}"));
        SteadyNeighbour { child }
    }
}

impl Drop for SteadyNeighbour {
    fn drop(&mut self) {
        let group = nix::unistd::Pid::from_raw(-(self.child.id() as i32));
        let _ = nix::sys::signal::kill(group, nix::sys::signal::Signal::SIGKILL);
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bursts come, and dropping the maker stops its thread: `drop`
    /// returns only once the thread has been joined. No timing is asserted
    /// beyond a generous bound: on a loaded host the thread waits its turn.
    #[test]
    fn the_noise_maker_bursts_and_always_stops() {
        let noise = NoiseMaker::start(
            0,
            Duration::from_millis(20),
            Duration::from_millis(5)..=Duration::from_millis(10),
            Duration::from_secs(60),
        );
        let started = Instant::now();
        while noise.bursts() < 2 {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "{} bursts in 30 s",
                noise.bursts()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        drop(noise);
    }

    /// The neighbour runs, in a session of its own, and dropping it ends it.
    #[test]
    fn the_steady_neighbour_runs_in_its_own_session_and_always_stops() {
        let neighbour = SteadyNeighbour::start(0);
        let pid = neighbour.child.id() as i32;
        let session = nix::unistd::getsid(Some(nix::unistd::Pid::from_raw(pid))).unwrap();
        assert_eq!(session.as_raw(), pid);
        assert_ne!(session, nix::unistd::getsid(None).unwrap());
        drop(neighbour);
        assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists());
    }
}
