//! `observe`'s study on a recording replayed through a test-only
//! [`Record`]: the openssl case of the issue that asked for `observe`, on a
//! saved Alder Lake (P cores 0-11 with SMT, E cores 12-15). The product has
//! exactly one `Record`: perf's context-switch records.

use anyhow::Result;
use placement_study::judge::observe::ObserveJudgement;
use placement_study::measure::recorder::{ObserveTarget, Record, RecordOptions};
use placement_study::measure::recording::{
    CommandEnd, CpuCounts, Recording, SchedEvent, SchedEventKind,
};
use placement_study::probe::{CoreKind, probe};
use placement_study::saved::ObserveMode;
use placement_study::study::Progress;
use placement_study::study::observe::{ObserveStudyOptions, observe_study};

const MS: u64 = 1_000_000;

/// Hands back one recording, and keeps the options it was asked with.
struct Replay {
    recording: Recording,
    asked: Option<RecordOptions>,
}

impl Record for Replay {
    fn record(
        &mut self,
        options: &RecordOptions,
        elapsed: &mut dyn FnMut(std::time::Duration),
    ) -> Result<Recording> {
        self.asked = Some(options.clone());
        elapsed(std::time::Duration::from_secs(1));
        Ok(self.recording.clone())
    }
}

/// Every progress line shown, "" for the clearing.
#[derive(Default)]
struct Lines(Vec<String>);

impl Progress for Lines {
    fn update(&mut self, message: &str) {
        self.0.push(message.to_string());
    }
    fn done(&mut self) {
        self.update("");
    }
}

fn event(time_ns: u64, cpu: u32, kind: SchedEventKind) -> SchedEvent {
    SchedEvent {
        time_ns,
        cpu,
        pid: 4242,
        tid: 4242,
        kind,
    }
}

/// `openssl speed sha256` for 60 s: exec'd on E core CPU 12, 135 ms there,
/// then on P core CPU 2 to the end, at 4,195 MHz.
fn openssl() -> Recording {
    let exec = SchedEventKind::Comm {
        comm: "openssl".into(),
        exec: true,
    };
    let counts = |cpu: u32, ms: u64| CpuCounts {
        cpu,
        task_clock_ns: ms * MS,
        cycles: Some(ms * 4_195_000),
        cycles_enabled_ns: Some(ms * MS),
        cycles_running_ns: Some(ms * MS),
    };
    Recording {
        start_ns: 1_000 * MS,
        end_ns: 61_000 * MS,
        events: vec![
            event(1_000 * MS, 12, exec),
            event(1_135 * MS, 12, SchedEventKind::SwitchOut),
            event(1_136 * MS, 2, SchedEventKind::SwitchIn),
            event(61_000 * MS, 2, SchedEventKind::Exit),
        ],
        names: Vec::new(),
        per_cpu: vec![counts(2, 59_864), counts(12, 135)],
        cycles_unavailable: None,
        lost_records: 0,
        command: Some(CommandEnd::Exited { code: 0 }),
        stopped: false,
        outlivers: Vec::new(),
    }
}

fn observe(recording: Recording) -> (placement_study::saved::ObserveResult, RecordOptions) {
    let root = format!(
        "{}/fixtures/sysfs/alderlake-i5-12600K",
        env!("CARGO_MANIFEST_DIR")
    );
    let topology = probe(Some(root.as_ref()), None).unwrap();
    let options = ObserveStudyOptions {
        target: ObserveTarget::Command(vec!["openssl".into(), "speed".into(), "sha256".into()]),
        duration: None,
        interval_ms: Some(10_000.0),
        cycles: true,
        leave_running: false,
    };
    let mut replay = Replay {
        recording,
        asked: None,
    };
    let mut progress = Lines::default();
    let result = observe_study(&topology, &options, &mut replay, &mut progress).unwrap();
    // The recorder's times reach the progress line, which is cleared at the end.
    assert_eq!(progress.0, ["observe: 1 s (Ctrl-C ends it)", ""]);
    (result, replay.asked.unwrap())
}

fn class(judged: &ObserveJudgement, kind: CoreKind) -> (f64, f64, Option<f64>) {
    let row = judged.classes.iter().find(|c| c.class == kind).unwrap();
    (row.ms, row.share, row.busy_mhz)
}

#[test]
fn the_recorder_is_asked_for_every_cpu_and_each_cpus_own_pmu() {
    let (_, asked) = observe(openssl());
    assert_eq!(asked.cpus, (0..16).collect::<Vec<u32>>());
    let pmus: Vec<&str> = asked.core_pmus.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(pmus, ["cpu_atom", "cpu_core"]);
    assert!(asked.cycles && asked.duration.is_none());
}

#[test]
fn openssl_on_p_cores_after_one_move_from_an_e_core() {
    let (result, _) = observe(openssl());
    let judged = &result.judged;
    let (p_ms, p_share, p_mhz) = class(judged, CoreKind::Performance);
    let (e_ms, _, _) = class(judged, CoreKind::Efficiency);
    assert_eq!((p_ms, e_ms), (59_864.0, 135.0));
    assert!((p_share - 0.99775).abs() < 1e-4, "{p_share}");
    assert!((p_mhz.unwrap() - 4195.0).abs() < 1e-6);
    let moves: Vec<(u32, u32, CoreKind, CoreKind)> = judged
        .migrations
        .iter()
        .map(|m| (m.from_cpu, m.to_cpu, m.from_class, m.to_class))
        .collect();
    assert_eq!(
        moves,
        [(12, 2, CoreKind::Efficiency, CoreKind::Performance)]
    );
    let thread = &judged.threads[0];
    assert_eq!(thread.comm, "openssl");
    assert_eq!((thread.first_cpu, thread.home_cpu), (Some(12), Some(2)));
    assert_eq!(thread.settled_after_ms, Some(136.0));
    // CPU 2's core is P core 1, with CPU 3: the core row holds both.
    let core = judged.cores.iter().find(|c| c.cpus.contains(&2)).unwrap();
    assert_eq!(core.cpus, [2, 3]);
    assert_eq!(judged.timeline.len(), 6);
    assert!(judged.valid, "{:?}", judged.problems);
    assert_eq!(result.exit_status, Some(0));
    assert_eq!(result.options.mode, ObserveMode::Command);
    assert!(
        result
            .sentence
            .starts_with("`openssl speed sha256` ran 60.00 s"),
        "{}",
        result.sentence
    );
}

#[test]
fn a_signal_that_ended_the_command_passes_through_as_a_shell_reports_it() {
    let mut recording = openssl();
    recording.command = Some(CommandEnd::Signaled { signal: 9 });
    let (result, _) = observe(recording);
    assert_eq!(result.exit_status, Some(137));
    assert!(result.head.complete);
}
