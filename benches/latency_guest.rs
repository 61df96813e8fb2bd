//! How much quicker `latency` and `pairs --first-pass latency` are than
//! `pairs` on the same guests (issue 28), measured in QEMU guests booted by
//! `../shared/vm/boot-guest.sh`, as `tests/guest.rs` boots them:
//!
//! * 16 vCPUs published as 8 cores of 2 threads, `PIN=0,1,0,1,…` (even
//!   vCPUs on host CPU 0, odd ones on host CPU 1: two groups of 8, the
//!   README's group-testing example);
//! * 10 vCPUs published as 10 cores, `PIN=0,0,1,0,1,1,0,1,0,0` (groups
//!   0,1,3,6,8,9 and 2,4,5,7).
//!
//! For each guest it boots `pairs` (today's search), `pairs --first-pass
//! latency` and `latency`, each with `--json`, and prints the measuring
//! seconds each document reports (the study's own wall time, boot left
//! out), the ratios to `pairs`, whether the two `pairs` maps are the same,
//! and the per-pair cost of the latency pass, extrapolated to 64 and 256
//! CPUs (all pairs, one at a time: the guest's vCPUs outnumber its host
//! CPUs, so its parallel check fails and measures one pair at a time; on a
//! machine where it passes, divide by the pairs at once).
//!
//! Run: `cargo bench --bench latency_guest` (about 5 minutes; the guests
//! share this machine's CPUs, so run it on a quiet host).
//! `LATENCY_BENCH_BOOTS=N` boots each case N times (default 1) and prints
//! every boot. Both `pairs` runs use the guest suite's threshold of 50 %.

#[allow(
    dead_code,
    unused_imports,
    reason = "the guest tests' harness, with its own unit tests (not run in a harness-less \
              benchmark); this benchmark needs its boot and JSON reading"
)]
#[path = "../tests/support/mod.rs"]
mod support;

use support::{Guest, GuestRun, LATENCY, PAIRS, PAIRS_LATENCY_FIRST};

/// One guest: its `-smp` string and pins.
struct Case {
    name: &'static str,
    smp: &'static str,
    pin: &'static str,
}

const CASES: &[Case] = &[
    Case {
        name: "16 vCPUs",
        smp: "16,sockets=1,cores=8,threads=2",
        pin: "0,1,0,1,0,1,0,1,0,1,0,1,0,1,0,1",
    },
    Case {
        name: "10 vCPUs",
        smp: "10,sockets=1,cores=10,threads=1",
        pin: "0,0,1,0,1,1,0,1,0,0",
    },
];

/// What one boot's document says.
struct Measured {
    seconds: f64,
    exit: i32,
    /// `pairs`: the measured map; `latency`: the thread-sibling level's.
    map: String,
    /// `latency`: pairs measured; `pairs`: comparisons.
    units: u64,
}

fn measure(guest: &Guest, case: &Case, args: &[&str]) -> Measured {
    let run: GuestRun = guest.boot(case.smp, Some(case.pin), args);
    let json = run.json();
    let map = if args[0] == "latency" {
        json["judgement"]["levels"]
            .as_array()
            .and_then(|levels| levels.iter().find(|l| l["level"] == "smt-siblings"))
            .map(|level| level["map"]["measured"].to_string())
            .unwrap_or_default()
    } else {
        json["map"]["measured"].to_string()
    };
    let units = if args[0] == "latency" {
        &json["effort"]["pairs_measured"]
    } else {
        &json["effort"]["comparisons"]
    };
    Measured {
        seconds: json["effort"]["measuring_seconds"]
            .as_f64()
            .unwrap_or(f64::NAN),
        exit: run.exit_code,
        map,
        units: units.as_u64().unwrap_or_default(),
    }
}

fn main() {
    let boots: usize = std::env::var("LATENCY_BENCH_BOOTS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1);
    // `pairs` on the 16-vCPU guest took about 6 minutes in December 2026.
    let guest = Guest::with_timeout(1200);
    for case in CASES {
        for boot in 1..=boots {
            let pairs = measure(&guest, case, PAIRS);
            let first = measure(&guest, case, PAIRS_LATENCY_FIRST);
            let latency = measure(&guest, case, LATENCY);
            println!("{} (PIN={}), boot {boot} of {boots}:", case.name, case.pin);
            println!(
                "  pairs                       {:7.1} s  {:3} comparisons  exit {}  map {}",
                pairs.seconds, pairs.units, pairs.exit, pairs.map
            );
            println!(
                "  pairs --first-pass latency  {:7.1} s  {:3} comparisons  exit {}  map {}  \
                 ({:.1}x quicker, same map: {})",
                first.seconds,
                first.units,
                first.exit,
                first.map,
                pairs.seconds / first.seconds,
                if first.map == pairs.map { "yes" } else { "NO" }
            );
            let per_pair = latency.seconds / latency.units as f64;
            println!(
                "  latency                     {:7.1} s  {:3} pairs        exit {}  siblings {}  \
                 ({:.1}x quicker; {:.0} ms a pair: 64 CPUs {:.0} s, 256 CPUs {:.0} s)",
                latency.seconds,
                latency.units,
                latency.exit,
                latency.map,
                pairs.seconds / latency.seconds,
                per_pair * 1e3,
                per_pair * (64.0 * 63.0 / 2.0),
                per_pair * (256.0 * 255.0 / 2.0)
            );
        }
    }
}
