//! `run -- COMMAND`'s repetition on this machine, for real: a command run
//! once, confined to an arm's CPUs, measured as a whole process tree.

use std::ffi::OsString;

use placement_study::affinity::allowed_cpus;
use placement_study::cpuset::CpuSet;
use placement_study::measure::command::{CommandFailed, Output, run_once};
use placement_study::measure::recording::CommandEnd;

fn argv(words: &[&str]) -> Vec<OsString> {
    words.iter().map(Into::into).collect()
}

fn first_cpu() -> CpuSet {
    let cpu = allowed_cpus()
        .unwrap()
        .first()
        .expect("some CPU is allowed");
    CpuSet::from_cpus([cpu])
}

/// A shell loop of about 50 ms of CPU on this machine's vCPUs.
const BUSY: &str = "i=0; while [ $i -lt 60000 ]; do i=$((i+1)); done";

#[test]
fn true_succeeds_with_its_wall_time_and_task_clock() {
    let sample = run_once(&argv(&["true"]), &first_cpu(), Output::Discard).unwrap();
    assert_eq!(sample.end, CommandEnd::Exited { code: 0 });
    assert!(sample.wall_ns > 0);
    assert!(sample.task_clock_ns > 0, "{sample:?}");
}

#[test]
fn a_non_zero_exit_is_an_error_with_its_status_and_the_end_of_stderr() {
    let words = [
        "sh",
        "-c",
        "echo first >&2; echo 'it went wrong' >&2; exit 3",
    ];
    let error = run_once(&argv(&words), &first_cpu(), Output::Discard).unwrap_err();
    let failed = error
        .downcast_ref::<CommandFailed>()
        .expect("a CommandFailed");
    assert_eq!(failed.sample.end, CommandEnd::Exited { code: 3 });
    let message = error.to_string();
    assert!(message.contains("exited with status 3"), "{message}");
    assert!(message.contains("it went wrong"), "{message}");
}

#[test]
fn the_command_runs_on_the_arms_cpus_with_stdin_empty() {
    // The command reports what it sees through the only channel kept.
    let words = [
        "sh",
        "-c",
        "grep Cpus_allowed_list /proc/self/status >&2; wc -c >&2; exit 1",
    ];
    let cpus = first_cpu();
    let error = run_once(&argv(&words), &cpus, Output::Discard).unwrap_err();
    let message = error.to_string();
    let allowed = format!("Cpus_allowed_list:\t{cpus}");
    assert!(
        message.lines().any(|line| line.trim() == allowed),
        "{message}"
    );
    assert!(message.lines().any(|line| line.trim() == "0"), "{message}");
}

#[test]
fn a_busy_tree_is_counted_children_included() {
    // The shell only waits: the task-clock is its two children's.
    let script = format!("({BUSY}) & ({BUSY}) & wait");
    let sample = run_once(&argv(&["sh", "-c", &script]), &first_cpu(), Output::Discard).unwrap();
    assert!(
        sample.task_clock_ns * 5 >= sample.wall_ns,
        "the children's CPU time is counted: {sample:?}"
    );
    assert_eq!(sample.migrations.unwrap_or(0), 0, "one CPU: {sample:?}");
    assert!(sample.context_switches > 0, "{sample:?}");
}

#[test]
fn a_missing_command_is_named() {
    let error = run_once(
        &argv(&["no-such-command-placement-study"]),
        &first_cpu(),
        Output::Discard,
    )
    .unwrap_err()
    .to_string();
    assert!(error.contains("not found in PATH"), "{error}");
}
