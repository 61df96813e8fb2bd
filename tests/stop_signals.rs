//! SIGINT and SIGTERM for real. The stop flag is process-global and never
//! resets, so once a signal is raised every later repetition in that process
//! is stopped, and every test module shares this process: each test here
//! raises its signals in a child process (this binary run again on one
//! ignored test), never in the process the other tests run in.

use crate::common;
use std::os::unix::process::ExitStatusExt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use nix::sched::{CpuSet as AffinityMask, sched_getaffinity};
use nix::sys::signal::{Signal, kill, raise};
use nix::unistd::{Pid, getpid};
use placement_study::measure::stop::{self, StopSignal};
use placement_study::measure::{Engine, Kernel, Workload, calibrate_passes, kernel_by_name};
use placement_study::plan::{Arm, Placement};

/// Set in a child process: the stop signal the child raises after SIGINT.
const SECOND_SIGNAL_ENV: &str = "PLACEMENT_STUDY_TEST_SECOND_SIGNAL";

/// Set in a child process: it sends itself SIGTERM during a repetition.
const SIGTERM_CHILD_ENV: &str = "PLACEMENT_STUDY_TEST_SIGTERM_CHILD";

/// How long the raising thread waits for the workers before giving up.
const WORKERS_DEADLINE: Duration = Duration::from_secs(60);

/// User CPU time (clock ticks, 10 ms each on Linux) a worker must have used
/// before the signal: far more than its setup takes, so it is in its kernel.
const TICKS_IN_KERNEL: u64 = 2;

/// User CPU ticks of each of this process's threads named `name`.
fn user_ticks_of_threads_named(name: &str) -> Vec<u64> {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|task| {
            let stat = std::fs::read_to_string(task.path().join("stat")).ok()?;
            // "tid (comm) state ppid ...": the name may hold spaces, so split
            // at the last parenthesis; utime is field 14, the 12th after it.
            let (head, fields) = stat.rsplit_once(')')?;
            let (_, comm) = head.split_once('(')?;
            let utime = fields.split_whitespace().nth(11)?.parse().ok()?;
            (comm == name).then_some(utime)
        })
        .collect()
}

/// Waits until every one of `workers` threads is busy in its kernel (none
/// may be missing); false if the deadline passed first.
fn wait_until_workers_compute(workers: usize) -> bool {
    let deadline = Instant::now() + WORKERS_DEADLINE;
    while Instant::now() < deadline {
        let computing = (0..workers).all(|worker| {
            user_ticks_of_threads_named(&format!("worker {worker}"))
                .iter()
                .any(|&ticks| ticks >= TICKS_IN_KERNEL)
        });
        if computing {
            return true;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    false
}

fn two_workers() -> Placement {
    let mask = sched_getaffinity(Pid::from_raw(0)).expect("sched_getaffinity on this process");
    let allowed: Vec<u32> = (0..AffinityMask::count())
        .filter(|&cpu| mask.is_set(cpu).unwrap_or(false))
        .map(|cpu| cpu as u32)
        .collect();
    let cpus = match allowed[..] {
        [first, second, ..] => vec![Some(first), Some(second)],
        _ => vec![None, None],
    };
    Placement {
        arm: Arm::Separate,
        cpus,
        membind: None,
    }
}

#[test]
fn sigterm_stops_a_long_repetition_and_every_later_one() {
    let _cpus = crate::common::cpus_to_myself();
    let output = common::rerun_test(
        module_path!(),
        "child_sends_itself_sigterm_during_a_long_repetition",
    )
    .arg("--nocapture")
    .env(SIGTERM_CHILD_ENV, "1")
    .output()
    .expect("this test binary runs again");
    let stdout = String::from_utf8_lossy(&output.stdout);
    // The child's line saying how soon the repetition returned.
    print!("{stdout}");
    assert!(
        output.status.success() && stdout.contains("1 passed"),
        "the SIGTERM child: {:?}; stderr: {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
}

/// In the child: SIGTERM to this process while a 20 s repetition computes,
/// which must return at once, stopped, as must every later one. Does
/// nothing in a normal test run.
#[test]
#[ignore = "run in a child process by sigterm_stops_a_long_repetition_and_every_later_one"]
fn child_sends_itself_sigterm_during_a_long_repetition() {
    let _cpus = crate::common::cpus_to_myself();
    if std::env::var_os(SIGTERM_CHILD_ENV).is_none() {
        return;
    }
    stop::install_stop_handlers().expect("the stop handlers install");
    assert!(!stop::stop_requested());
    assert_eq!(stop::stop_signal(), None);

    let kernel: Arc<dyn Kernel> =
        Arc::from(kernel_by_name("mul").expect("the mul kernel exists on x86_64"));
    let buffer_bytes = 16 * 1024;
    let passes = calibrate_passes(kernel.as_ref(), buffer_bytes, Duration::from_secs(20))
        .expect("16 KiB is a valid buffer");
    let workload = Workload {
        kernel,
        buffer_bytes,
        passes,
    };
    let engine = Engine::new(workload, true).expect("software counters open on this machine");
    let placement = two_workers();

    let (outcome, raised) = std::thread::scope(|scope| {
        let raiser = scope.spawn(|| {
            // Raised even past the deadline, so a failure cannot hang 20 s.
            let computing = wait_until_workers_compute(placement.cpus.len());
            let raised_at = Instant::now();
            kill(getpid(), Signal::SIGTERM).expect("SIGTERM to this process");
            (computing, raised_at)
        });
        let outcome = engine.run_rep(&placement, 0, false);
        let returned_at = Instant::now();
        let raised = raiser.join().expect("the raising thread ends");
        (outcome, (raised.0, returned_at.duration_since(raised.1)))
    });
    let (workers_were_computing, stop_took) = raised;
    println!(
        "a 20 s repetition ({passes} passes, {} workers) returned {:.1} ms after SIGTERM",
        placement.cpus.len(),
        stop_took.as_secs_f64() * 1e3
    );
    assert!(
        workers_were_computing,
        "no worker threads computing within {WORKERS_DEADLINE:?}"
    );
    match outcome {
        Ok(None) => {}
        Ok(Some(rep)) => panic!("a stopped repetition returned a sample: {rep:#?}"),
        Err(error) => panic!("a stopped repetition failed: {error:#}"),
    }
    assert!(stop::stop_requested());
    assert_eq!(stop::stop_signal(), Some(StopSignal::Terminate));
    // Requested before it starts: no worker even runs.
    assert!(matches!(engine.run_rep(&placement, 1, false), Ok(None)));
}

/// In the child: SIGINT, then the signal `SECOND_SIGNAL_ENV` names, which
/// must end the process. Does nothing in a normal test run.
#[test]
#[ignore = "run in a child process by a_second_signal_quits_at_once"]
fn child_raises_sigint_then_a_second_signal() {
    let _cpus = crate::common::cpus_to_myself();
    let Some(second) = std::env::var_os(SECOND_SIGNAL_ENV) else {
        return;
    };
    let second: Signal = second
        .to_str()
        .and_then(|name| name.parse().ok())
        .expect("a signal name such as SIGTERM");
    stop::install_stop_handlers().expect("the stop handlers install");
    raise(Signal::SIGINT).expect("raise SIGINT");
    assert_eq!(stop::stop_signal(), Some(StopSignal::Interrupt));
    // Installing again must not re-arm the handler SIGINT just reset.
    stop::install_stop_handlers().expect("a second installation is a no-op");
    raise(second).expect("raise the second signal");
    panic!("still alive after a second {second}");
}

#[test]
fn a_second_signal_quits_at_once() {
    let _cpus = crate::common::cpus_to_myself();
    for second in [Signal::SIGINT, Signal::SIGTERM] {
        let output = common::rerun_test(module_path!(), "child_raises_sigint_then_a_second_signal")
            .arg("--nocapture")
            .env(SECOND_SIGNAL_ENV, second.as_str())
            .output()
            .expect("this test binary runs again");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(
            output.status.signal(),
            Some(second as i32),
            "SIGINT then {second}: {:?}; stderr: {stderr}",
            output.status
        );
        let notices: Vec<&str> = stderr
            .lines()
            .filter(|line| line.starts_with("placement-study: "))
            .collect();
        assert_eq!(
            notices.len(),
            1,
            "one notice, for the first signal: {stderr}"
        );
        assert!(
            notices[0].starts_with("placement-study: SIGINT: stopping within a second"),
            "{stderr}"
        );
    }
}
