//! Tests of observe's judgement on recorded samples.

use super::*;
use crate::cpuset::CpuSet;
use crate::measure::recording::{CpuCounts, SchedEvent, ThreadName};

const MS: u64 = 1_000_000;

/// CPUs 0-1 performance (one core each), CPU 2 efficiency.
fn cpus() -> Vec<CpuEntry> {
    (0..3)
        .map(|cpu| CpuEntry {
            class: if cpu < 2 {
                CoreKind::Performance
            } else {
                CoreKind::Efficiency
            },
            ..CpuEntry::on_core(cpu, cpu as usize, 0, CpuSet::from_cpus([cpu]))
        })
        .collect()
}

fn event(time_ns: u64, cpu: u32, tid: u32, kind: SchedEventKind) -> SchedEvent {
    SchedEvent {
        time_ns,
        cpu,
        pid: 100,
        tid,
        kind,
    }
}

fn switch_in(ms: u64, cpu: u32, tid: u32) -> SchedEvent {
    event(ms * MS, cpu, tid, SchedEventKind::SwitchIn)
}

fn switch_out(ms: u64, cpu: u32, tid: u32) -> SchedEvent {
    event(ms * MS, cpu, tid, SchedEventKind::SwitchOut)
}

/// A recording from 0 to `end_ms`, its task-clock per CPU as given.
fn recording(events: Vec<SchedEvent>, end_ms: u64, task_clock_ms: &[(u32, u64)]) -> Recording {
    Recording {
        start_ns: 0,
        end_ns: end_ms * MS,
        events,
        names: vec![ThreadName {
            tid: 100,
            comm: "work".into(),
        }],
        per_cpu: task_clock_ms
            .iter()
            .map(|&(cpu, ms)| CpuCounts {
                cpu,
                task_clock_ns: ms * MS,
                cycles: Some(ms * 3_000_000),
                cycles_enabled_ns: Some(ms * MS),
                cycles_running_ns: Some(ms * MS),
            })
            .collect(),
        cycles_unavailable: None,
        lost_records: 0,
        command: None,
        stopped: false,
        outlivers: Vec::new(),
    }
}

/// One thread: on CPU 0 when recording began, out at 10 ms; in on CPU 2
/// at 12, out at 20; in on CPU 0 at 21 until the end at 100.
fn moved_thread() -> Recording {
    recording(
        vec![
            switch_out(10, 0, 100),
            switch_in(12, 2, 100),
            switch_out(20, 2, 100),
            switch_in(21, 0, 100),
        ],
        100,
        &[(0, 89), (2, 8)],
    )
}

#[test]
fn switch_records_become_intervals_with_residency_per_cpu_core_and_class() {
    let judged = judge_observation(&moved_thread(), &cpus(), None);
    let thread = &judged.threads[0];
    let spans: Vec<(u32, f64, f64)> = thread
        .intervals
        .iter()
        .map(|i| (i.cpu, i.start_ms, i.end_ms))
        .collect();
    assert_eq!(spans, [(0, 0.0, 10.0), (2, 12.0, 20.0), (0, 21.0, 100.0)]);
    assert_eq!((thread.comm.as_str(), thread.on_cpu_ms), ("work", 97.0));
    let cpu_ms: Vec<(u32, f64)> = judged.cpus.iter().map(|c| (c.cpu, c.ms)).collect();
    assert_eq!(cpu_ms, [(0, 89.0), (2, 8.0)]);
    let classes: Vec<(CoreKind, f64)> = judged.classes.iter().map(|c| (c.class, c.ms)).collect();
    assert_eq!(
        classes,
        [(CoreKind::Performance, 89.0), (CoreKind::Efficiency, 8.0)]
    );
    assert_eq!(judged.cores.len(), 2);
    assert!(judged.valid, "{:?}", judged.problems);
    assert_eq!(judged.reconciliation.difference, 0.0);
}

#[test]
fn moves_are_migrations_with_their_classes_and_the_thread_settles_at_home() {
    let judged = judge_observation(&moved_thread(), &cpus(), None);
    let moves: Vec<(f64, u32, u32, CoreKind, CoreKind)> = judged
        .migrations
        .iter()
        .map(|m| (m.time_ms, m.from_cpu, m.to_cpu, m.from_class, m.to_class))
        .collect();
    assert_eq!(
        moves,
        [
            (12.0, 0, 2, CoreKind::Performance, CoreKind::Efficiency),
            (21.0, 2, 0, CoreKind::Efficiency, CoreKind::Performance),
        ]
    );
    let thread = &judged.threads[0];
    assert_eq!((thread.first_cpu, thread.home_cpu), (Some(0), Some(0)));
    assert_eq!(thread.migrations, 2);
    assert_eq!(thread.settled_after_ms, Some(21.0));
    assert!((thread.home_share - 89.0 / 97.0).abs() < 1e-12);
}

#[test]
fn a_thread_asleep_when_recording_began_starts_at_its_first_switch_in() {
    let events = vec![switch_in(40, 1, 100), switch_out(50, 1, 100)];
    let judged = judge_observation(&recording(events, 60, &[(1, 10)]), &cpus(), None);
    assert_eq!(judged.threads[0].on_cpu_ms, 10.0);
}

#[test]
fn a_thread_last_seen_away_from_home_never_settled() {
    let events = vec![
        switch_in(0, 0, 100),
        switch_out(50, 0, 100),
        switch_in(60, 1, 100),
    ];
    let judged = judge_observation(&recording(events, 70, &[(0, 50), (1, 10)]), &cpus(), None);
    assert_eq!(judged.threads[0].home_cpu, Some(0));
    assert_eq!(judged.threads[0].settled_after_ms, None);
}

#[test]
fn an_exec_starts_the_first_interval_and_an_exit_ends_the_last() {
    let events = vec![
        event(
            5 * MS,
            1,
            100,
            SchedEventKind::Comm {
                comm: "yes".into(),
                exec: true,
            },
        ),
        switch_out(15, 1, 100),
        switch_in(16, 1, 100),
        event(30 * MS, 1, 100, SchedEventKind::Exit),
    ];
    let judged = judge_observation(&recording(events, 40, &[(1, 24)]), &cpus(), None);
    let thread = &judged.threads[0];
    assert_eq!(thread.comm, "yes");
    assert_eq!(thread.on_cpu_ms, 24.0);
    assert!(judged.valid);
}

#[test]
fn a_forked_thread_takes_its_parents_name_until_it_has_its_own() {
    let events = vec![
        switch_in(0, 0, 100),
        event(MS, 0, 101, SchedEventKind::Fork { parent_tid: 100 }),
        switch_in(2, 1, 101),
        switch_out(10, 0, 100),
        switch_out(10, 1, 101),
    ];
    let judged = judge_observation(&recording(events, 10, &[(0, 10), (1, 8)]), &cpus(), None);
    let names: Vec<(u32, &str)> = judged
        .threads
        .iter()
        .map(|t| (t.tid, t.comm.as_str()))
        .collect();
    assert_eq!(names, [(100, "work"), (101, "work")]);
}

#[test]
fn direct_hand_overs_between_followed_threads_are_reconciled_apart() {
    // 100 switches out at x ms, the other thread in 10 µs later: 1 ms of
    // hand-overs that task-clock counts and the records do not. A gap of
    // 1 ms (another task ran) is no hand-over.
    let mut events = vec![switch_in(0, 0, 100)];
    events.push(event(10 * MS, 0, 100, SchedEventKind::SwitchOut));
    events.push(event(10 * MS + 10_000, 0, 101, SchedEventKind::SwitchIn));
    events.push(switch_out(20, 0, 101));
    events.push(switch_in(21, 0, 100));
    events.push(switch_out(30, 0, 100));
    let judged = judge_observation(&recording(events, 30, &[(0, 29)]), &cpus(), None);
    let reconciliation = &judged.reconciliation;
    assert_eq!(reconciliation.handovers, 1);
    assert!((reconciliation.handover_ms - 0.01).abs() < 1e-9);
    assert!((judged.cpus[0].handover_ms - 0.01).abs() < 1e-9);
    assert!(
        (reconciliation.residency_ms - 28.99).abs() < 1e-9,
        "{reconciliation:?}"
    );
    assert!(reconciliation.difference < 1e-9, "{reconciliation:?}");
}

#[test]
fn residency_that_does_not_add_up_or_lost_records_make_it_invalid() {
    let mut recorded = moved_thread();
    recorded.per_cpu[0].task_clock_ns = 95 * MS;
    let judged = judge_observation(&recorded, &cpus(), None);
    assert!(!judged.valid && !judged.reconciliation.holds);
    assert!(
        judged.problems[0].contains("over the 1 % bar"),
        "{:?}",
        judged.problems
    );

    let mut lost = moved_thread();
    lost.lost_records = 3;
    let judged = judge_observation(&lost, &cpus(), None);
    assert!(!judged.valid);
    assert!(judged.problems[0].contains("dropped 3 records"));
}

#[test]
fn busy_frequency_is_cycles_over_task_clock_unless_it_cannot_be_trusted() {
    let judged = judge_observation(&moved_thread(), &cpus(), None);
    assert_eq!(judged.classes[0].busy_mhz, Some(3000.0));

    let mut multiplexed = moved_thread();
    multiplexed.per_cpu[0].cycles_running_ns = Some(40 * MS);
    let judged = judge_observation(&multiplexed, &cpus(), None);
    assert_eq!(judged.classes[0].busy_mhz, None);
    let reason = judged.classes[0].busy_mhz_unavailable.as_deref().unwrap();
    assert!(reason.starts_with("cycles multiplexed"), "{reason}");

    let mut no_pmu = moved_thread();
    no_pmu.cycles_unavailable = Some("no hardware PMU visible".into());
    let judged = judge_observation(&no_pmu, &cpus(), None);
    assert_eq!(
        judged.classes[1].busy_mhz_unavailable.as_deref(),
        Some("no hardware PMU visible")
    );
}

#[test]
fn the_timeline_splits_time_per_class_per_interval() {
    let judged = judge_observation(&moved_thread(), &cpus(), Some(50.0));
    let rows: Vec<(f64, f64, Vec<f64>, usize)> = judged
        .timeline
        .iter()
        .map(|r| (r.start_ms, r.end_ms, r.class_ms.clone(), r.migrations))
        .collect();
    assert_eq!(
        rows,
        [
            (0.0, 50.0, vec![39.0, 8.0], 2),
            (50.0, 100.0, vec![50.0, 0.0], 0)
        ]
    );
}

#[test]
fn a_process_that_slept_throughout_is_a_valid_observation_of_zero_time() {
    // Asleep the whole second: no switch record, no task-clock on any CPU.
    let judged = judge_observation(
        &recording(Vec::new(), 1000, &[(0, 0), (2, 0)]),
        &cpus(),
        None,
    );
    assert!(judged.valid, "{:?}", judged.problems);
    assert!(judged.reconciliation.holds);
    let residency = judged.reconciliation.residency_ms;
    assert!(
        residency == 0.0 && residency.is_sign_positive(),
        "{residency}"
    );
    assert!(judged.reconciliation.task_clock_ms.is_sign_positive());
    // Task-clock counted time no record shows: not an observation of zero.
    let judged = judge_observation(&recording(Vec::new(), 1000, &[(0, 5)]), &cpus(), None);
    assert!(!judged.valid && !judged.reconciliation.holds);
}
