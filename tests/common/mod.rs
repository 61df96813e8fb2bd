//! What the CLI test binaries share: the short study and the short
//! `pairs` search they run, and the check that this machine can run them.

/// A short two-worker study that needs neither SMT nor a PMU: one worker
/// per core on CPUs 0 and 1, against both on one CPU. Add the outputs.
pub const TWO_WORKER_RUN: &[&str] = &[
    "run",
    "--skip-gate",
    "--workers",
    "2",
    "--arms",
    "one-per-core,same-cpu",
    "--reps",
    "3",
    "--warmups",
    "1",
    "--rep-ms",
    "5",
];

/// A short `pairs` search: three repetitions a comparison and no
/// warm-ups, so a host with many CPUs is quick too. Add the outputs.
pub const SHORT_PAIRS: &[&str] = &[
    "pairs",
    "--rep-ms",
    "5",
    "--warmups",
    "0",
    "--min-reps",
    "3",
    "--max-reps",
    "3",
];

/// Whether [`TWO_WORKER_RUN`] can place its workers here (CPUs 0 and 1
/// allowed); otherwise says why the caller skips.
pub fn two_cpus_allowed() -> bool {
    let allowed = nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0)).unwrap();
    let both = (0..2).all(|cpu| allowed.is_set(cpu).unwrap_or(false));
    if !both {
        eprintln!("skipping: the two-worker run needs CPUs 0 and 1 allowed");
    }
    both
}
