//! `run -- COMMAND`'s repetition on this machine, for real: a command run
//! once, confined to an arm's CPUs, measured as a whole process tree.

use std::ffi::OsString;

use placement_study::affinity::allowed_cpus;
use placement_study::affinity::confine_process;
use placement_study::cpuset::CpuSet;
use placement_study::judge::command::{
    PlacementHeld, co_residency, other_load_ms, placement_held, tree_threads,
};
use placement_study::measure::command::{
    CommandFailed, CommandSample, Output, PlacementRecords, SiblingRecords, TreeHardware, Watched,
    run_once,
};
use placement_study::measure::launch::HeldCommand;
use placement_study::measure::recorder::TreeRecords;
use placement_study::measure::recording::CommandEnd;
use placement_study::probe::CpuEntry;

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

/// Runs `argv` once on `cpus` as `run -- COMMAND` does, its output
/// discarded, watching what the live topology says.
fn run_on(argv: &[OsString], cpus: &CpuSet) -> anyhow::Result<CommandSample> {
    let topology = placement_study::probe::probe(None, None)?;
    let watched = Watched::of(&topology, cpus);
    run_once(
        argv,
        cpus,
        None,
        &watched,
        &Output::Discard,
        &topology.environment.core_pmus,
        false,
    )
}

/// A shell loop of about 50 ms of CPU on this machine's vCPUs.
const BUSY: &str = "i=0; while [ $i -lt 60000 ]; do i=$((i+1)); done";

#[test]
fn true_succeeds_with_its_wall_time_and_task_clock() {
    let _cpus = crate::common::cpus_to_myself();
    let sample = run_on(&argv(&["true"]), &first_cpu()).unwrap();
    assert_eq!(sample.end, CommandEnd::Exited { code: 0 });
    assert!(sample.wall_ns > 0);
    assert!(sample.task_clock_ns > 0, "{sample:?}");
}

#[test]
fn a_non_zero_exit_is_an_error_with_its_status_and_the_end_of_stderr() {
    let _cpus = crate::common::cpus_to_myself();
    let words = [
        "sh",
        "-c",
        "echo first >&2; echo 'it went wrong' >&2; exit 3",
    ];
    let error = run_on(&argv(&words), &first_cpu()).unwrap_err();
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
    let _cpus = crate::common::cpus_to_myself();
    // The command reports what it sees through the only channel kept.
    let words = [
        "sh",
        "-c",
        "grep Cpus_allowed_list /proc/self/status >&2; wc -c >&2; exit 1",
    ];
    let cpus = first_cpu();
    let error = run_on(&argv(&words), &cpus).unwrap_err();
    let message = error.to_string();
    let allowed = format!("Cpus_allowed_list:\t{cpus}");
    // The stderr lines come joined by " | " after the status.
    let (_, stderr) = message.split_once("the end of its stderr: ").unwrap();
    let lines: Vec<&str> = stderr.split(" | ").collect();
    assert_eq!(lines, [allowed.as_str(), "0"], "{message}");
}

#[test]
fn a_busy_tree_is_counted_children_included() {
    let _cpus = crate::common::cpus_to_myself();
    // The shell only waits: the task-clock is its two children's.
    let script = format!("({BUSY}) & ({BUSY}) & wait");
    let sample = run_on(&argv(&["sh", "-c", &script]), &first_cpu()).unwrap();
    assert!(
        sample.task_clock_ns * 5 >= sample.wall_ns,
        "the children's CPU time is counted: {sample:?}"
    );
    assert_eq!(sample.migrations.unwrap_or(0), 0, "one CPU: {sample:?}");
    assert!(sample.context_switches > 0, "{sample:?}");
    // The tree's user-space instructions where a PMU counts; on a VM
    // without one (this machine), absent with the reason.
    match &sample.hardware {
        TreeHardware::Counted { .. } => {
            let instructions = sample.hardware.user_instructions().unwrap();
            assert!(instructions > 1_000_000, "{sample:?}");
            assert!(sample.hardware.cycles().unwrap() > 0, "{sample:?}");
        }
        TreeHardware::Unavailable { reason } => assert!(
            reason.starts_with("no hardware PMU counts here (perf_event_open for cycles: ")
                || reason.contains("perf_event_paranoid"),
            "{reason}"
        ),
    }
}

#[test]
fn a_missing_command_is_named() {
    let _cpus = crate::common::cpus_to_myself();
    let error = run_on(&argv(&["no-such-command-placement-study"]), &first_cpu())
        .unwrap_err()
        .to_string();
    assert!(error.contains("not found in PATH"), "{error}");
}

/// The placement of `sample`'s tree against `cpus`; `None` (the test
/// skips) where perf refused the records here.
fn placement(sample: &CommandSample, cpus: &CpuSet) -> Option<PlacementHeld> {
    if let PlacementRecords::Unavailable { reason } = &sample.placement {
        eprintln!("skipping: {reason}");
        return None;
    }
    let threads = tree_threads(&sample.placement).unwrap_or_else(|reason| panic!("{reason}"));
    Some(placement_held(&threads, cpus))
}

#[test]
fn a_busy_tree_confined_to_one_cpu_holds_all_of_its_time_there() {
    let _cpus = crate::common::cpus_to_myself();
    let script = format!("{BUSY}; ({BUSY}) & ({BUSY}) & wait");
    let cpus = first_cpu();
    let sample = run_on(&argv(&["sh", "-c", &script]), &cpus).unwrap();
    let Some(held) = placement(&sample, &cpus) else {
        return;
    };
    assert!(held.held(), "{held:?}");
    assert_eq!(held.share, 1.0);
    // The shell and its two children, most of the task-clock.
    assert!(
        held.on_cpu_ms * 1e6 >= sample.task_clock_ns as f64 * 0.9,
        "{held:?} against {sample:?}"
    );
}

/// `sh` confined to one CPU runs a while, moves itself to another with
/// `taskset -p`, and runs a while there.
#[test]
fn a_command_that_moves_itself_out_of_its_cpus_fails_and_is_named() {
    let _cpus = crate::common::cpus_to_myself();
    let allowed = allowed_cpus().unwrap();
    let &[home, away, ..] = allowed.cpus() else {
        eprintln!("skipping: one allowed CPU, nowhere to move to");
        return;
    };
    let script = format!("{BUSY}; taskset -p -c {away} $$ >/dev/null; {BUSY}");
    let cpus = CpuSet::from_cpus([home]);
    let sample = run_on(&argv(&["sh", "-c", &script]), &cpus).unwrap();
    let Some(held) = placement(&sample, &cpus) else {
        return;
    };
    assert!(!held.held(), "{held:?}");
    assert!(held.share < 0.9, "about half ran on CPU {away}: {held:?}");
    let [mover] = &held.outside[..] else {
        panic!("one thread ran outside: {held:?}");
    };
    assert_eq!(mover.comm, "sh", "{held:?}");
    assert_eq!(mover.tid, mover.pid, "the shell itself: {held:?}");
    assert_eq!(mover.cpus, CpuSet::from_cpus([away]), "{held:?}");
}

/// Two busy children on two CPUs: on this machine's topology, CPUs that
/// are separate cores (no SMT) never share one, so the co-residency is 0;
/// on a machine with siblings, it is whatever they shared.
#[test]
fn co_residency_on_cpus_without_siblings_is_zero() {
    let _cpus = crate::common::cpus_to_myself();
    let topology = placement_study::probe::probe(None, None).unwrap();
    let allowed = allowed_cpus().unwrap();
    let &[first, second, ..] = allowed.cpus() else {
        eprintln!("skipping: one allowed CPU");
        return;
    };
    let shared_core = topology
        .cpus
        .iter()
        .any(|c| c.cpu == first && c.siblings.contains(second));
    if shared_core {
        eprintln!("skipping: CPUs {first} and {second} share a core here");
        return;
    }
    let script = format!("({BUSY}) & ({BUSY}) & wait");
    let cpus = CpuSet::from_cpus([first, second]);
    let sample = run_on(&argv(&["sh", "-c", &script]), &cpus).unwrap();
    if placement(&sample, &cpus).is_none() {
        return;
    }
    let threads = tree_threads(&sample.placement).unwrap();
    let judged = co_residency(&threads, &topology.cpus);
    assert!(judged.on_cpu_ms > 0.0, "{judged:?}");
    assert_eq!(judged.with_tree_ms, 0.0, "{judged:?}");
    // Nothing shares a core with them: no CPU to watch, no other load.
    let PlacementRecords::Recorded {
        siblings: SiblingRecords::Recorded { cpus: watched, .. },
        ..
    } = &sample.placement
    else {
        panic!(
            "no sibling to watch needs no privilege: {:?}",
            sample.placement
        );
    };
    assert!(watched.is_empty(), "{watched}");
    let other = other_load_ms(&sample.placement, &threads, &topology.cpus);
    assert_eq!(other, Ok(0.0));
}

/// The CPU-wide records of a CPU watched as a sibling: a stranger busy
/// there while the tree runs on another CPU is other load. The two CPUs
/// need not share a core here: the topology given to the judge says they
/// do.
#[test]
fn a_stranger_busy_on_a_watched_sibling_is_other_load() {
    let _cpus = crate::common::cpus_to_myself();
    let allowed = allowed_cpus().unwrap();
    let &[home, sibling, ..] = allowed.cpus() else {
        eprintln!("skipping: one allowed CPU");
        return;
    };
    let stranger_script = format!("{BUSY}; {BUSY}; {BUSY}; {BUSY}; {BUSY}");
    let mut stranger = std::process::Command::new("taskset")
        .args(["-c", &sibling.to_string(), "sh", "-c", &stranger_script])
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(50));
    let held = HeldCommand::fork(&argv(&["sh", "-c", BUSY])).unwrap();
    let pid = held.pid.as_raw();
    confine_process(pid, &CpuSet::from_cpus([home])).unwrap();
    let recorded = TreeRecords::open(pid as u32, allowed.cpus(), &[sibling]).map(|records| {
        let mut held = held;
        let mut records = records;
        held.release().unwrap();
        let end = loop {
            if let Some(end) = held.try_wait().unwrap() {
                break end;
            }
            records.wait(None, std::time::Duration::from_millis(20));
        };
        records.finish(end).unwrap()
    });
    let _ = stranger.kill();
    let _ = stranger.wait();
    let (tree, siblings) = match recorded {
        Ok((tree, Ok(siblings))) => (tree, siblings),
        Ok((_, Err(reason))) => return eprintln!("skipping: {reason}"),
        Err(error) => return eprintln!("skipping: {error:#}"),
    };
    let records = PlacementRecords::Recorded {
        tree: Box::new(tree),
        siblings: SiblingRecords::Recorded {
            cpus: CpuSet::from_cpus([sibling]),
            recording: Box::new(siblings),
        },
    };
    let topology: Vec<CpuEntry> = [home, sibling]
        .into_iter()
        .map(|cpu| CpuEntry::on_core(cpu, 0, 0, CpuSet::from_cpus([home, sibling])))
        .collect();
    let threads = tree_threads(&records).unwrap();
    let on_cpu_ms: f64 = threads.iter().map(|t| t.on_cpu_ms).sum();
    let other_ms = other_load_ms(&records, &threads, &topology).unwrap();
    assert!(
        other_ms > 0.5 * on_cpu_ms,
        "the stranger ran beside {other_ms:.1} of {on_cpu_ms:.1} ms"
    );
    assert_eq!(co_residency(&threads, &topology).with_tree_ms, 0.0);
}

/// As `nobody` at perf_event_paranoid 1 or 2, the kernel refuses CPU-wide
/// records: the siblings' share is unavailable, naming the setting and the
/// fix, and the tree's own records still come (its user side is allowed).
#[test]
fn without_privilege_only_the_siblings_records_are_unavailable() {
    let _cpus = crate::common::cpus_to_myself();
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let level = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid").unwrap();
    if !root || !matches!(level.trim(), "1" | "2") {
        eprintln!("skipping: needs root to become nobody, and perf_event_paranoid 1 or 2");
        return;
    }
    let rerun = crate::common::rerun_test(module_path!(), "siblings_refused_as_nobody");
    let output = std::process::Command::new("setpriv")
        .args(["--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"])
        .arg(rerun.get_program())
        .args(rerun.get_args())
        .arg("--nocapture")
        .output()
        .expect("setpriv runs (util-linux)");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains("1 passed"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Run as `nobody` by the test above.
#[test]
#[ignore = "run as nobody by without_privilege_only_the_siblings_records_are_unavailable"]
fn siblings_refused_as_nobody() {
    let _cpus = crate::common::cpus_to_myself();
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        return eprintln!("skipping: root may record CPU-wide");
    }
    let allowed = allowed_cpus().unwrap();
    let mut held = HeldCommand::fork(&argv(&["sh", "-c", BUSY])).unwrap();
    let pid = held.pid.as_raw() as u32;
    let sibling = allowed.first().unwrap();
    let mut records = TreeRecords::open(pid, allowed.cpus(), &[sibling]).unwrap();
    held.release().unwrap();
    let end = loop {
        if let Some(end) = held.try_wait().unwrap() {
            break end;
        }
        records.wait(None, std::time::Duration::from_millis(20));
    };
    let (tree, siblings) = records.finish(end).unwrap();
    let reason = siblings.unwrap_err();
    assert!(reason.contains("perf_event_paranoid"), "{reason}");
    assert!(!reason.contains('\n'), "{reason}");
    assert!(
        !tree.events.is_empty() && tree.lost_records == 0,
        "{tree:?}"
    );
}
