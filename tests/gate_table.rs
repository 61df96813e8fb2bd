//! The gate's verdicts counted: N gates per case, on a quiet host and
//! under injected bursts of host load, in a table of right, inconclusive
//! and wrong verdicts. Outside CI (it boots 8 × N guests: about 6 s each);
//! run it with
//!
//! ```text
//! GATES=20 cargo test --release --test gate_table -- --ignored --nocapture
//! ```
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

use support::noise::guest_bursts;
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
    let guest = Guest::new();
    let mut rows = Vec::new();
    for case in &CASES {
        for bursts in [false, true] {
            let mut tally = Tally::default();
            for gate in 1..=gates {
                let noise = bursts.then(|| guest_bursts(case.noisy_cpu));
                let run = guest.boot(case.smp, Some(case.pin), &["gate", "--json"]);
                drop(noise);
                if let Some(document) = run.document() {
                    tally.seconds.push(measuring_seconds(&document));
                }
                let reading = read_verdict(case.verdict, case.exit, &run);
                println!(
                    "gate-table: {} {} gate {gate}/{gates}: {reading:?}",
                    case.name,
                    if bursts { "bursts" } else { "quiet" }
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
            rows.push((case.name, bursts, tally));
        }
    }
    println!(
        "\n| case | host | right | inconclusive | wrong | no result | median gate s |\n|---|---|---|---|---|---|---|"
    );
    for (name, bursts, tally) in &mut rows {
        println!(
            "| {name} | {} | {} | {} ({:.0} %) | {} | {} | {:.1} |",
            if *bursts { "bursts" } else { "quiet" },
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
