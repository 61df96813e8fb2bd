//! The gate's verdicts counted: N gates per case, on a quiet host, under
//! injected bursts of host load, and beside a steady neighbour, in a table
//! of right, inconclusive and wrong verdicts. Outside CI (it boots 11 × N
//! guests: about 6 s each); run it with
//!
//! ```text
//! GATES=20 cargo test --release --test gate_table -- --ignored --nocapture
//! ```
//!
//! `TABLE=steady` runs only the steady-neighbour rows, `TABLE=bursts` only
//! the quiet and burst rows, `TABLE=quiet` only the quiet ones.
//!
//! `GUEST_BINARY=PATH` measures another static build (an older release)
//! with the same cases. The test fails if any verdict was wrong; a guest
//! that never ran the gate to its end (a boot timeout) is counted apart,
//! as no result.

#[allow(
    dead_code,
    reason = "the guest tests' harness; this file needs its boot, verdicts and noise"
)]
mod support;

use support::noise::{SteadyNeighbour, guest_bursts};
use support::{Guest, Reading, read_verdict};

/// One gate case: the guest, its pinning, the right verdict and its exit
/// status, and the host CPU the bursts spin on (see `tests/guest.rs`).
struct Case {
    name: &'static str,
    smp: &'static str,
    pin: &'static str,
    verdict: &'static str,
    exit: i32,
    noisy_cpu: usize,
}

const CASES: [Case; 4] = [
    Case {
        name: "1 core x 2 threads, PIN=0,0",
        smp: "2,sockets=1,cores=1,threads=2",
        pin: "0,0",
        verdict: "physical",
        exit: 0,
        noisy_cpu: 0,
    },
    Case {
        name: "1 core x 2 threads, PIN=0,1",
        smp: "2,sockets=1,cores=1,threads=2",
        pin: "0,1",
        verdict: "virtual",
        exit: 3,
        noisy_cpu: 1,
    },
    Case {
        name: "2 cores x 2 threads, PIN=0,0,1,1",
        smp: "4,sockets=1,cores=2,threads=2",
        pin: "0,0,1,1",
        verdict: "physical",
        exit: 0,
        noisy_cpu: 1,
    },
    Case {
        name: "2 cores x 2 threads, PIN=0,1,0,1",
        smp: "4,sockets=1,cores=2,threads=2",
        pin: "0,1,0,1",
        verdict: "virtual",
        exit: 3,
        noisy_cpu: 1,
    },
];

/// What the host does beside a gate.
#[derive(Clone, Copy)]
enum Host {
    /// Nothing on purpose.
    Quiet,
    /// [`guest_bursts`] on the case's `noisy_cpu`.
    Bursts,
    /// vCPU caps, boot-guest.sh's `THROTTLE=` (a steadily slower vCPU).
    Throttled(&'static str),
    /// A [`SteadyNeighbour`] busy loop on this host CPU for the whole boot.
    BusyLoop(usize),
}

impl Host {
    fn describe(self) -> String {
        match self {
            Host::Quiet => "quiet".into(),
            Host::Bursts => "bursts".into(),
            Host::Throttled(caps) => format!("THROTTLE={caps}"),
            Host::BusyLoop(cpu) => format!("busy loop on host CPU {cpu}"),
        }
    }
}

/// The steady-neighbour rows: a split one-core guest beside a neighbour
/// must never read physical, a stacked one beside one must still read
/// physical.
const STEADY: [(usize, Host); 3] = [
    (1, Host::Throttled("100,50")),
    (1, Host::BusyLoop(1)),
    (0, Host::BusyLoop(0)),
];

/// One cell of the table.
#[derive(Default)]
struct Tally {
    right: usize,
    inconclusive: usize,
    wrong: usize,
    /// Guests that never ran the gate to its end (boot-guest.sh's timeout
    /// or set-up failure, exit 124 or 125): no verdict at all, counted
    /// apart from the gate's own.
    no_result: usize,
    /// Seconds the gate measured, from its samples and pauses.
    seconds: Vec<f64>,
}

/// The seconds a gate spent measuring: its repetitions' wall times plus
/// one pause per batch after the first and per control measured again.
fn measuring_seconds(document: &serde_json::Value) -> f64 {
    let samples = document["samples"].as_array().map_or(0.0, |samples| {
        samples
            .iter()
            .filter_map(|s| s["wall_ns"].as_f64())
            .sum::<f64>()
            / 1e9
    });
    let count = |key: &str| document[key].as_array().map_or(0, Vec::len);
    let pauses = count("batches").saturating_sub(1) + count("control_attempts");
    samples + pauses as f64 * 1.0
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => f64::NAN,
        n => values[n / 2],
    }
}

#[test]
#[ignore = "boots 8 x GATES guests; see the module docs"]
fn gate_verdicts_quiet_and_under_bursts() {
    let gates: usize = std::env::var("GATES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(20);
    let table = std::env::var("TABLE").unwrap_or_default();
    let mut runs: Vec<(&Case, Host)> = Vec::new();
    if table != "steady" {
        for case in &CASES {
            runs.push((case, Host::Quiet));
            if table != "quiet" {
                runs.push((case, Host::Bursts));
            }
        }
    }
    if table != "bursts" && table != "quiet" {
        runs.extend(STEADY.iter().map(|&(case, host)| (&CASES[case], host)));
    }
    let guest = Guest::new();
    let mut rows = Vec::new();
    for (case, host) in runs {
        let mut tally = Tally::default();
        for gate in 1..=gates {
            let bursts = matches!(host, Host::Bursts).then(|| guest_bursts(case.noisy_cpu));
            let neighbour = match host {
                Host::BusyLoop(cpu) => Some(SteadyNeighbour::start(cpu)),
                _ => None,
            };
            let run = match host {
                Host::Throttled(caps) => {
                    guest.boot_throttled(case.smp, case.pin, caps, &["gate", "--json"])
                }
                _ => guest.boot(case.smp, Some(case.pin), &["gate", "--json"]),
            };
            drop((bursts, neighbour));
            if let Some(document) = run.document() {
                tally.seconds.push(measuring_seconds(&document));
            }
            let reading = read_verdict(case.verdict, case.exit, &run);
            println!(
                "gate-table: {} {} gate {gate}/{gates}: {reading:?}",
                case.name,
                host.describe()
            );
            match reading {
                Reading::Right => tally.right += 1,
                Reading::Inconclusive(_) => tally.inconclusive += 1,
                Reading::Wrong(_) if matches!(run.exit_code, 124 | 125) => {
                    println!("{run}");
                    tally.no_result += 1
                }
                Reading::Wrong(_) => {
                    println!("{run}");
                    tally.wrong += 1
                }
            }
        }
        rows.push((case.name, host, tally));
    }
    println!(
        "\n| case | host | right | inconclusive | wrong | no result | median gate s |\n|---|---|---|---|---|---|---|"
    );
    for (name, host, tally) in &mut rows {
        println!(
            "| {name} | {} | {} | {} ({:.0} %) | {} | {} | {:.1} |",
            host.describe(),
            tally.right,
            tally.inconclusive,
            100.0 * tally.inconclusive as f64 / gates as f64,
            tally.wrong,
            tally.no_result,
            median(&mut tally.seconds)
        );
    }
    let wrong: usize = rows.iter().map(|(_, _, t)| t.wrong).sum();
    assert_eq!(wrong, 0, "wrong verdicts");
}
