//! End to end in QEMU guests whose SMT siblings are, or are not, physical.
//!
//! Every test here is `#[ignore]`d, since each boots a guest: `.ci/run` runs
//! them with `cargo test --test guest -- --ignored --test-threads=1
//! --nocapture`. Boots never overlap. The guest kernel publishes the topology
//! `-smp` asks for, and `PIN` decides what it means physically:
//!
//! * `PIN=0,0,1,1`: both threads of a guest core share one host CPU, so
//!   co-locating two workers on them costs about twice as much;
//! * `PIN=0,1,0,1`: guest siblings run on different host CPUs, so the guest's
//!   sibling map is fiction and co-location is free;
//! * two cores with one thread each: no SMT at all;
//! * one core of two threads (a typical small cloud instance), `PIN=0,0` or
//!   `PIN=0,1`, on a quiet host, under bursts, and beside a steady neighbour
//!   (the second vCPU capped at 50 %, or a busy loop in a session of its
//!   own on one host CPU): each worker is judged against its own CPU alone;
//! * two cores with one thread each on host CPUs 0 and 1, vCPU 1 throttled
//!   to 46 % of its host CPU (`THROTTLE=100,46`): a second core about 2.17x
//!   slower, a core class the guest does not publish.
//!
//! A test that expects a definite gate, pairs or hybrid verdict boots
//! through [`boot_expecting`]: until the verdicts are robust to a noisy
//! host, an inconclusive run (exit 5) boots the guest again (up to three
//! boots in all), saying why; a wrong verdict fails at once, as does a
//! third inconclusive boot.
//!
//! The `pairs_` tests check the measured sibling map against the sharing the
//! pins create: agreed, fake and hidden siblings, and placements drawn at
//! random on every run (all pairs on 6 vCPUs, group testing on 10).
//!
//! The `latency_` tests read the cache-line latency matrix of the same
//! placements: stacked vCPUs (`PIN=0,0,1,1`) found and agreed where the
//! guest publishes them as siblings, the crossed map for `PIN=0,1,0,1`, and
//! a random placement of 10 vCPUs recovered; and
//! `pairs_first_pass_latency_…` confirms a latency pass's sets with
//! penalties.
//!
//! The `observe_` tests follow unpinned work in [`NO_SMT_GUEST`] on host
//! CPUs 0 and 1: a CPU-bound command, one moved by `taskset` on a known
//! schedule, a pipeline of two processes, and two busy threads on the
//! throttled guest.
//!
//! The `arm64_` tests boot `boot-guest-arm64.sh` guests, whose emulated PMU
//! (armv8_pmuv3) really counts: with icount, instructions are exact on one
//! vCPU, and leak between vCPUs on two. They check the counters end to end:
//! invariance passing on exact counts and failing on leaked ones, the
//! multiplexing check failing when another perf user holds the counters, and
//! a missing instructions event reported as such; and `run -- COMMAND`'s
//! same-work check passing for a deterministic shell loop and failing,
//! naming the arm, for one sized by `nproc` (its work follows its CPUs).

mod support;

use support::noise::{SteadyNeighbour, guest_bursts};
use support::{
    Arm64Guest, Guest, GuestRun, Icount, LATENCY, PAIRS, PAIRS_LATENCY_FIRST, Reading,
    boot_expecting, boot_reading, read_verdict,
};

/// Two guest cores with two threads each.
const SMT_GUEST: &str = "4,sockets=1,cores=2,threads=2";
/// Two guest cores with one thread each.
const NO_SMT_GUEST: &str = "2,sockets=1,cores=2,threads=1";
/// Guest vCPUs 0,1 (one guest core) on host CPU 0, vCPUs 2,3 on host CPU 1.
const SIBLINGS_SHARE_A_HOST_CPU: &str = "0,0,1,1";
/// Guest vCPUs 0,1 (one guest core) on host CPUs 0 and 1.
const SIBLINGS_ON_SEPARATE_HOST_CPUS: &str = "0,1,0,1";
/// One guest core with two threads.
const ONE_CORE_GUEST: &str = "2,sockets=1,cores=1,threads=2";

/// vCPU 0 at full speed, vCPU 1 capped at 46 % of its host CPU: about 2.17x
/// slower, alone or loaded.
const SECOND_VCPU_AT_46_PERCENT: &str = "100,46";

/// Sharing one host CPU costs about 2x under TCG (1.7-1.9x measured on a busy
/// 2-CPU host; the command study's paired cost +53 % to +96 % in six boots
/// on 2026-12-06); 1.3x is far above the gate's 15 % yet below what a
/// working run shows. Where the host's noise leaves the product unsure, it
/// says so ([`read_packing_cost`]).
const CLEAR_PACKING_COST_RATIO: f64 = 1.3;

#[test]
#[ignore = "boots QEMU guests; .ci/run runs them"]
fn topology_in_guest_sees_smt() {
    let guest = Guest::new();
    let run = guest.boot(SMT_GUEST, None, &["topology", "--json"]);
    run.assert_exit(0);
    let summary = &run.json()["summary"];
    assert_eq!(summary["cpus"], 4, "summary.cpus\n{run}");
    assert_eq!(summary["smt"], true, "summary.smt\n{run}");
    assert!(
        !summary["hypervisor"].is_null(),
        "summary.hypervisor is null in a guest\n{run}"
    );
}

#[test]
#[ignore = "boots QEMU guests; .ci/run runs them"]
fn gate_physical_when_guest_siblings_share_a_host_cpu() {
    let guest = Guest::new();
    boot_expecting("physical", 0, || {
        guest.boot(
            SMT_GUEST,
            Some(SIBLINGS_SHARE_A_HOST_CPU),
            &["gate", "--json"],
        )
    });
}

#[test]
#[ignore = "boots QEMU guests; .ci/run runs them"]
fn gate_virtual_when_guest_siblings_are_on_separate_host_cpus() {
    let guest = Guest::new();
    boot_expecting("virtual", 3, || {
        guest.boot(
            SMT_GUEST,
            Some(SIBLINGS_ON_SEPARATE_HOST_CPUS),
            &["gate", "--json"],
        )
    });
}

#[test]
#[ignore = "boots QEMU guests; .ci/run runs them"]
fn gate_no_smt_without_siblings() {
    let guest = Guest::new();
    boot_expecting("no-smt", 4, || {
        guest.boot(NO_SMT_GUEST, None, &["gate", "--json"])
    });
}

#[test]
#[ignore = "boots QEMU guests; .ci/run runs them"]
fn run_in_guest_shows_packing_cost() {
    let guest = Guest::new();
    // The run's gate must say physical (exit 0: a valid run).
    let run = boot_expecting("physical", 0, || {
        guest.boot(
            SMT_GUEST,
            Some(SIBLINGS_SHARE_A_HOST_CPU),
            &["run", "--workers", "2", "--json", "-"],
        )
    });
    assert_packing_costs_clearly_more(&run);
}

#[test]
#[ignore = "boots QEMU guests; .ci/run runs them"]
fn run_in_guest_stops_at_the_gate() {
    let guest = Guest::new();
    let run = boot_expecting("virtual", 3, || {
        guest.boot(
            SMT_GUEST,
            Some(SIBLINGS_ON_SEPARATE_HOST_CPUS),
            &["run", "--workers", "2"],
        )
    });
    assert!(
        run.stdout.contains("virtual"),
        "the gate's verdict is not shown\n{run}"
    );
}

/// Two busybox shell loops of fixed work, one process each: a two-process
/// workload whose threads the scheduler places within the arm's CPUs.
/// About 0.3 s each under TCG on this host.
const TWO_BUSY_LOOPS: &str = "busy() { i=0; while [ $i -lt 12000 ]; do i=$((i+1)); done; }; \
                              busy & busy & wait";

/// Repetitions of each arm in a guest's command study. Five left the
/// product's paired interval unsure on two boots in a row in CI-12 and at
/// the last stop's CI (e.g. +24.6 %, -18.7 % to +90.8 %), one short of
/// failing; nine narrow a t-interval to about 0.6 of five's half-width
/// (t 2.31/3 against 2.78/2.24) for about 6 s more a boot.
const COMMAND_STUDY_REPS: &str = "9";

/// `run -- COMMAND` in the SMT guest: the command's arms, after the gate.
fn boot_command_study(pin: &str, extra: &[&str]) -> GuestRun {
    let mut args = vec![
        "run",
        "--threads",
        "2",
        "--reps",
        COMMAND_STUDY_REPS,
        "--warmups",
        "1",
        "--json",
        "-",
    ];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--", "sh", "-c", TWO_BUSY_LOOPS]);
    Guest::new().boot(SMT_GUEST, Some(pin), &args)
}

/// The entry of `arm` in the document's list `list` (`arms`, `residency`,
/// `schemes`).
fn arm_entry<'a>(
    json: &'a serde_json::Value,
    list: &str,
    arm: &str,
) -> Option<&'a serde_json::Value> {
    json[list]
        .as_array()?
        .iter()
        .find(|entry| entry["arm"] == arm)
}

/// The `residency` entry of `arm`.
fn residency<'a>(json: &'a serde_json::Value, arm: &str, run: &GuestRun) -> &'a serde_json::Value {
    arm_entry(json, "residency", arm).unwrap_or_else(|| panic!("no residency of {arm}\n{run}"))
}

/// Reads a gated command study of sibling-packed against one-per-core: the
/// gate's verdict first (physical), then the product's own estimate of
/// sibling-packed's cost, the median of paired rounds, with its 95 %
/// interval, against [`CLEAR_PACKING_COST_RATIO`]:
/// - right: the interval is wholly above zero and the estimate clears the
///   bar;
/// - wrong: the interval lies wholly below the bar (the product is sure
///   packing costs less than it does here, as when both arms shared a
///   core or none did);
/// - otherwise the host's noise left the product unsure, and it said so:
///   the guest boots again. CI-10's boot was such a one: in three rounds of
///   five the one-per-core loops took twice their task clock (the host
///   took the CPUs under the guest), the interval ran from -14.7 % to
///   +76.1 % and both arms were marked not quotable.
///
/// The paired estimate, not the ratio of the arms' medians: in CI-11's boot
/// noise of the same kind put the medians 1.13x apart while the paired
/// rounds said +52.2 % (+0.3 % to +130.8 %).
fn read_packing_cost(run: &GuestRun) -> Reading {
    let gate = read_verdict("physical", 0, run);
    if gate != Reading::Right {
        return gate;
    }
    let json = run.json();
    let packed = arm_entry(&json, "arms", "sibling-packed").unwrap_or(&serde_json::Value::Null);
    let interval = &packed["vs_baseline_ci95"];
    let (Some(cost), Some(low), Some(high)) = (
        packed["vs_baseline"].as_f64(),
        interval["low"].as_f64(),
        interval["high"].as_f64(),
    ) else {
        return Reading::Wrong("no vs_baseline with its interval for sibling-packed".into());
    };
    let reading = format!(
        "sibling-packed {:+.1} % ({:+.1} % to {:+.1} %) against one-per-core",
        cost * 100.0,
        low * 100.0,
        high * 100.0
    );
    let bar = CLEAR_PACKING_COST_RATIO - 1.0;
    if low > 0.0 && cost > bar {
        Reading::Right
    } else if high < bar {
        Reading::Wrong(format!(
            "expected a cost of packing above {:+.0} %, got {reading}",
            bar * 100.0
        ))
    } else {
        Reading::Inconclusive(reading)
    }
}

#[test]
fn a_packing_cost_is_read_from_the_products_own_interval() {
    let study = |gate: &str, low: f64, high: f64| {
        let document = serde_json::json!({
            "kind": "command",
            "complete": true,
            "gate": { "verdict": gate },
            "arms": [
                { "arm": "one-per-core", "vs_baseline": null, "vs_baseline_ci95": null },
                {
                    "arm": "sibling-packed",
                    "vs_baseline": (low + high) / 2.0,
                    "vs_baseline_ci95": { "low": low, "high": high },
                },
            ],
        });
        let exit = if gate == "physical" { 0 } else { 3 };
        read_packing_cost(&GuestRun::recorded(
            "placement-study run -- sh",
            &document,
            exit,
        ))
    };
    assert_eq!(study("physical", 0.35, 0.92), Reading::Right);
    // CI-10's boot: the host's noise, and the product said so.
    assert!(matches!(
        study("physical", -0.147, 0.761),
        Reading::Inconclusive(why) if why.contains("-14.7 % to +76.1 %")
    ));
    assert!(matches!(study("physical", -0.4, -0.1), Reading::Wrong(_)));
    // A cost the product is sure of, but far below sharing one CPU's.
    assert!(matches!(study("physical", 0.05, 0.15), Reading::Wrong(_)));
    // Above zero, but too unsure to tell a small cost from a large one.
    assert!(matches!(
        study("physical", 0.01, 0.5),
        Reading::Inconclusive(_)
    ));
    assert!(matches!(study("virtual", 0.35, 0.92), Reading::Wrong(_)));
}

#[test]
#[ignore = "boots QEMU guests; .ci/run runs them"]
fn run_command_in_guest_shows_packing_cost_and_co_residency() {
    let run = boot_reading(read_packing_cost, || {
        boot_command_study(
            SIBLINGS_SHARE_A_HOST_CPU,
            &["--arms", "one-per-core,sibling-packed"],
        )
    });
    let json = run.json();
    assert_eq!(json["valid"], true, "valid\n{run}");
    assert_eq!(
        check(&json, "placement-held", &run)["status"],
        "passed",
        "{run}"
    );
    let median = |arm: &str| {
        number(
            arm_entry(&json, "arms", arm)
                .map_or(&serde_json::Value::Null, |s| &s["wall_s"]["median"]),
            "median wall",
            &run,
        )
    };
    // The paired cost cleared the bar in read_packing_cost; the medians
    // are for the log.
    let (packed, spread) = (median("sibling-packed"), median("one-per-core"));
    // The two loops share a core in sibling-packed nearly all the time they
    // run, and never in one-per-core (whose CPUs are different cores).
    let share = |arm: &str, what: &str| number(&residency(&json, arm, &run)[what], what, &run);
    assert!(
        share("sibling-packed", "co_residency") > 0.8,
        "sibling-packed co-residency\n{run}"
    );
    assert!(
        share("one-per-core", "co_residency") < 0.05,
        "one-per-core co-residency\n{run}"
    );
    for arm in ["one-per-core", "sibling-packed"] {
        assert_eq!(share(arm, "held_share"), 1.0, "{arm} held\n{run}");
    }
    println!(
        "guest: run -- sh (two busy loops): sibling-packed {packed:.3} s, one-per-core {spread:.3} s \
         (x{:.2}; paired {} in {}); co-residency {:.1} % / {:.1} %; other load {} / {}",
        packed / spread,
        json["arms"][1]["vs_baseline"],
        json["arms"][1]["vs_baseline_ci95"],
        share("sibling-packed", "co_residency") * 100.0,
        share("one-per-core", "co_residency") * 100.0,
        residency(&json, "sibling-packed", &run)["other_load"],
        residency(&json, "one-per-core", &run)["other_load"],
    );
}

#[test]
#[ignore = "boots QEMU guests; .ci/run runs them"]
fn run_command_in_guest_stops_at_the_gate() {
    let run = boot_expecting("virtual", 3, || {
        boot_command_study(SIBLINGS_ON_SEPARATE_HOST_CPUS, &[])
    });
    let json = run.json();
    assert!(
        json["reps"].as_array().is_none_or(|reps| reps.is_empty()),
        "the command ran although the gate said virtual\n{run}"
    );
}

#[test]
#[ignore = "boots QEMU guests; .ci/run runs them"]
fn run_command_that_moves_itself_fails_placement_and_is_named() {
    // The shell moves itself from vCPU 0 to vCPU 1 halfway through.
    let script = "busy() { i=0; while [ $i -lt 6000 ]; do i=$((i+1)); done; }; \
                  busy; taskset -p -c 1 $$ >/dev/null; busy";
    let run = Guest::new().boot(
        NO_SMT_GUEST,
        Some("0,1"),
        &[
            "run",
            "--skip-gate",
            "--arms",
            "same-cpu",
            "--threads",
            "1",
            "--reps",
            "2",
            "--warmups",
            "0",
            "--json",
            "-",
            "--",
            "sh",
            "-c",
            script,
        ],
    );
    run.assert_exit(6);
    let json = run.json();
    assert_eq!(json["valid"], false, "valid\n{run}");
    let held = check(&json, "placement-held", &run);
    assert_eq!(held["status"], "failed", "{run}");
    let detail = held["detail"].as_str().unwrap_or_default();
    assert!(
        detail.contains("sh") && detail.contains("CPU 1"),
        "the check names the thread that moved and where: {detail}\n{run}"
    );
}

#[test]
#[ignore = "boots QEMU guests; .ci/run runs them"]
fn gate_on_one_core_physical_when_its_threads_share_a_host_cpu() {
    let guest = Guest::new();
    let run = boot_expecting("physical", 0, || {
        guest.boot(ONE_CORE_GUEST, Some("0,0"), &["gate", "--json"])
    });
    assert_eq!(run.json()["baseline"], "each-alone", "baseline\n{run}");
}

#[test]
#[ignore = "boots QEMU guests; .ci/run runs them"]
fn gate_on_one_core_virtual_when_its_threads_are_on_separate_host_cpus() {
    let guest = Guest::new();
    let run = boot_expecting("virtual", 3, || {
        guest.boot(ONE_CORE_GUEST, Some("0,1"), &["gate", "--json"])
    });
    assert_eq!(run.json()["baseline"], "each-alone", "baseline\n{run}");
}

/// A one-core guest whose vCPUs are on separate host CPUs, the second
/// capped at half of its host CPU for the whole gate (a steady neighbour):
/// never physical (it read +44 % and +51 % before each worker was judged
/// against its own CPU alone), and the view names the slower CPU first.
#[test]
#[ignore = "boots QEMU guests; .ci/run runs them"]
fn gate_on_one_core_split_beside_a_capped_vcpu_is_virtual_and_names_it() {
    let guest = Guest::new();
    let run = boot_expecting("virtual", 3, || {
        guest.boot_throttled(ONE_CORE_GUEST, "0,1", "100,50", &["gate", "--json"])
    });
    assert_slower_cpu_named(&run, 1);
}

/// The same guest beside a busy loop in a process session of its own on
/// host CPU 1 (another tenant, as autogroup scheduling sees one): never
/// physical.
#[test]
#[ignore = "boots QEMU guests; .ci/run runs them"]
fn gate_on_one_core_split_beside_a_busy_loop_is_virtual() {
    let guest = Guest::new();
    let run = boot_expecting("virtual", 3, || {
        let neighbour = SteadyNeighbour::start(1);
        let run = guest.boot(ONE_CORE_GUEST, Some("0,1"), &["gate", "--json"]);
        drop(neighbour);
        run
    });
    assert_slower_cpu_named(&run, 1);
}

/// A one-core guest whose vCPUs share host CPU 0 beside a busy loop there:
/// the neighbour slows both workers alone and together alike, and sharing
/// still costs both of them: physical.
#[test]
#[ignore = "boots QEMU guests; .ci/run runs them"]
fn gate_on_one_core_stacked_beside_a_busy_loop_is_still_physical() {
    let guest = Guest::new();
    boot_expecting("physical", 0, || {
        let neighbour = SteadyNeighbour::start(0);
        let run = guest.boot(ONE_CORE_GUEST, Some("0,0"), &["gate", "--json"]);
        drop(neighbour);
        run
    });
}

/// The gate's JSON names `cpu` as the sibling CPU that ran slower alone.
fn assert_slower_cpu_named(run: &GuestRun, cpu: u64) {
    let slow = &run.json()["slow_cpu"];
    assert_eq!(slow["cpu"], cpu, "slow_cpu\n{run}");
    assert!(
        slow["slower"].as_f64().is_some_and(|s| s > 0.1),
        "slow_cpu.slower\n{run}"
    );
}

/// Boots a gate in `smp` pinned as `pin` while [`guest_bursts`] spin on
/// host CPU `noisy_cpu`, and fails only on a wrong verdict: under bursts a
/// verdict may become inconclusive, but never the other one. Each case's
/// CPU is the one whose load could pass for the wrong verdict (or, where
/// none could, the one that slows the siblings most).
fn gate_under_bursts(smp: &str, pin: &str, noisy_cpu: usize, verdict: &str, exit: i32) {
    let guest = Guest::new();
    let noise = guest_bursts(noisy_cpu);
    let run = guest.boot(smp, Some(pin), &["gate", "--json"]);
    let (bursts, what) = (noise.bursts(), noise.description.clone());
    drop(noise);
    match read_verdict(verdict, exit, &run) {
        Reading::Right => println!("guest: {verdict} under {bursts} bursts ({what})"),
        Reading::Inconclusive(why) => {
            println!("guest: inconclusive under {bursts} bursts ({what}): {why}")
        }
        Reading::Wrong(why) => {
            panic!("wrong verdict under {bursts} bursts ({what}): {why}\n{run}")
        }
    }
}

#[test]
#[ignore = "boots QEMU guests; .ci/run runs them"]
fn gate_on_one_core_sharing_a_host_cpu_is_never_virtual_under_bursts() {
    gate_under_bursts(ONE_CORE_GUEST, "0,0", 0, "physical", 0);
}

#[test]
#[ignore = "boots QEMU guests; .ci/run runs them"]
fn gate_on_one_core_on_separate_host_cpus_is_never_physical_under_bursts() {
    // A burst on host CPU 1 slows the second sibling's worker alone.
    gate_under_bursts(ONE_CORE_GUEST, "0,1", 1, "virtual", 3);
}

#[test]
#[ignore = "boots QEMU guests; .ci/run runs them"]
fn gate_with_siblings_sharing_a_host_cpu_is_never_virtual_under_bursts() {
    // A burst on host CPU 1 slows neither sibling.
    gate_under_bursts(SMT_GUEST, SIBLINGS_SHARE_A_HOST_CPU, 1, "physical", 0);
}

#[test]
#[ignore = "boots QEMU guests; .ci/run runs them"]
fn gate_with_siblings_on_separate_host_cpus_is_never_physical_under_bursts() {
    gate_under_bursts(SMT_GUEST, SIBLINGS_ON_SEPARATE_HOST_CPUS, 1, "virtual", 3);
}

/// The stand-in for a hybrid machine: [`NO_SMT_GUEST`] on host CPUs 0 and 1
/// with vCPU 1 throttled, published as one uniform class.
fn boot_with_a_slow_second_core(args: &[&str]) -> GuestRun {
    Guest::new().boot_throttled(NO_SMT_GUEST, "0,1", SECOND_VCPU_AT_46_PERCENT, args)
}

#[test]
#[ignore = "boots QEMU guests; .ci/run runs them"]
fn gate_no_smt_with_a_slow_second_core() {
    boot_expecting("no-smt", 4, || {
        boot_with_a_slow_second_core(&["gate", "--json"])
    });
}

#[test]
#[ignore = "boots QEMU guests; .ci/run runs them"]
fn run_is_valid_with_a_slow_second_core() {
    let run = boot_with_a_slow_second_core(&[
        "run",
        "--skip-gate",
        "--workers",
        "2",
        "--arms",
        "one-per-core,unpinned,same-cpu",
        "--reps",
        "5",
        "--warmups",
        "1",
        "--json",
        "-",
    ]);
    run.assert_exit(0);
    let json = run.json();
    assert_eq!(json["valid"], true, "valid\n{run}");
    assert_eq!(check(&json, "pinning", &run)["status"], "passed", "{run}");
    // The x86_64 guest has no PMU: where instructions are not counted,
    // invariance is unavailable, and where they are, it must pass.
    let counted = json["arms"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|arm| !arm["instructions_per_byte"].is_null());
    let invariance = if counted { "passed" } else { "unavailable" };
    assert_eq!(
        check(&json, "invariance", &run)["status"],
        invariance,
        "{run}"
    );
    // Either way, the slow vCPU did the very same work as the fast one.
    let samples = measured_workers(&json);
    assert_eq!(samples.len(), 3 * 5 * 2, "measured worker samples\n{run}");
    let work = |sample: &serde_json::Value| (sample["bytes"].clone(), sample["checksum"].clone());
    assert!(
        samples
            .iter()
            .all(|sample| work(sample) == work(samples[0])),
        "workers did different work\n{run}"
    );
    println!(
        "guest: one-per-core, vCPU 1's busy time over vCPU 0's: {:?}",
        busy_ratios(&json, "one-per-core")
    );
}

/// What `hybrid` must measure in the guest with a slow second core: vCPU 1
/// at 0.46 of vCPU 0's speed, so a speed ratio of 2.17 and a ceiling of
/// 1.46 fastest-class CPUs (each within 15 %); static shares leave vCPU 0
/// idle over half the time (in the median; over a third in every round,
/// since a busy host can slow vCPU 0 too), and stealing equalises busy times (within
/// 10 %) with vCPU 0 doing about two thirds of the items. The guest
/// publishes one uniform class, so the measured classes differ (exit 3).
#[test]
#[ignore = "boots QEMU guests; .ci/run runs them"]
fn hybrid_measures_a_slow_second_core() {
    let run = boot_expecting("differ", 3, || {
        boot_with_a_slow_second_core(&["hybrid", "--every-cpu", "--json", "-"])
    });
    let json = run.json();
    assert_eq!(json["valid"], true, "valid\n{run}");
    assert_eq!(check(&json, "pinning", &run)["status"], "passed", "{run}");
    let number = |value: &serde_json::Value, what: &str| {
        value
            .as_f64()
            .unwrap_or_else(|| panic!("{what} is not a number\n{run}"))
    };
    let within = |value: f64, expected: f64, tolerance: f64, what: &str| {
        assert!(
            (value / expected - 1.0).abs() <= tolerance,
            "{what} {value:.3}, expected {expected} within {:.0} %\n{run}",
            tolerance * 100.0
        );
    };
    // The cap makes vCPU 1 about 2.17x slower on an idle host. CI's host
    // runs each of its CPUs at 0.6 to 0.95 of its speed, switching every
    // 0.2-2 s, independently (a pinned spin loop, 20 s): vCPU 0 and vCPU 1
    // each see either state, so the ratio moves by up to 0.95 / 0.6 either
    // way, 1.37 to 3.43. Measured in CI: 1.76 to 2.18, and 2.634. The band
    // is a clearly slower class within what the host can deliver; the
    // numbers derived from it below are checked against the ratio this run
    // measured, since that is the slowdown the host delivered.
    let slow = &json["speed_classes"][1];
    assert_eq!(slow["measured_cpus"], serde_json::json!([1]), "{run}");
    let ratio = number(&slow["slowdown"]["value"], "speed ratio");
    assert!(
        (1.5..=3.5).contains(&ratio),
        "speed ratio {ratio:.3}, expected a clearly slower vCPU 1 (1.5 to 3.5; 2.17 nominal)\n{run}"
    );
    let ceiling = number(&json["ceiling"], "ceiling");
    within(
        ceiling,
        1.0 + 1.0 / ratio,
        0.03,
        "ceiling against 1 + 1/ratio",
    );

    let scheme = |arm: &str| {
        arm_entry(&json, "schemes", arm).unwrap_or_else(|| panic!("no {arm} scheme\n{run}"))
    };
    // Static shares: vCPU 0 finishes its half first and waits for vCPU 1,
    // idle for 1 - 1/ratio of the wall time. Single repetitions are not
    // asserted: a host hiccup stalls either vCPU for a round (two of twelve
    // in one CI run), which the CV bar reports; the median is what the
    // study quotes.
    let idle_fast: Vec<f64> = measured_reps(&json, "static-pinned")
        .iter()
        .map(|rep| {
            let wall = number(&rep["wall_ns"], "wall_ns");
            let busy = number(&worker_on(rep, 0)["busy_ns"], "busy_ns");
            1.0 - busy / wall
        })
        .collect();
    let idle = number(
        &scheme("static-pinned")["classes"][0]["idle"]["median"],
        "idle",
    );
    let expected_idle = 1.0 - 1.0 / ratio;
    assert!(
        (idle - expected_idle).abs() <= 0.12,
        "vCPU 0 idle under static shares: median {idle:.3}, expected {expected_idle:.3} \
         (1 - 1/ratio) within 0.12; per repetition {idle_fast:.3?}\n{run}"
    );
    // Work stealing: equal busy times, ratio/(1 + ratio) of the items on
    // vCPU 0 (2/3 at the nominal cap).
    let stealing = scheme("stealing-pinned");
    let busy = |worker: usize| {
        number(
            &stealing["worker_rows"][worker]["busy_ms"]["median"],
            "busy_ms",
        )
    };
    within(
        busy(1),
        busy(0),
        0.10,
        "stealing: vCPU 1's busy time against vCPU 0's",
    );
    let share = number(&stealing["classes"][0]["items"], "items share");
    within(
        share,
        ratio / (1.0 + ratio),
        0.10,
        "stealing: vCPU 0's share of the items against ratio/(1 + ratio)",
    );
    println!(
        "guest: hybrid speed ratio {ratio:.3}, ceiling {ceiling:.3}, static vCPU 0 idle \
         {idle_fast:.2?}, stealing busy {:.1}/{:.1} ms, vCPU 0 items {:.1} %",
        busy(0),
        busy(1),
        share * 100.0
    );
}

/// The measured (not warm-up) repetitions of `arm`.
fn measured_reps<'a>(json: &'a serde_json::Value, arm: &str) -> Vec<&'a serde_json::Value> {
    let reps = json["samples"].as_array().into_iter().flatten();
    reps.filter(|rep| rep["arm"] == arm && rep["warmup"] == false)
        .collect()
}

/// The worker of `rep` pinned to `cpu`.
fn worker_on(rep: &serde_json::Value, cpu: u64) -> &serde_json::Value {
    rep["workers"]
        .as_array()
        .and_then(|workers| workers.iter().find(|w| w["pinned_cpu"] == cpu))
        .unwrap_or(&serde_json::Value::Null)
}

/// Per measured repetition of `arm`, the worker on CPU 1's busy time over
/// the worker on CPU 0's: about 2.17 with [`SECOND_VCPU_AT_46_PERCENT`] on
/// an otherwise idle host. Not asserted: other load on the host's two CPUs
/// moves it anywhere from 0.5 to 2.2 (throttled or not).
fn busy_ratios(json: &serde_json::Value, arm: &str) -> Vec<String> {
    measured_reps(json, arm)
        .into_iter()
        .filter_map(|rep| {
            let busy = |cpu: u64| worker_on(rep, cpu)["busy_ns"].as_f64();
            Some(format!("{:.2}", busy(1)? / busy(0)?))
        })
        .collect()
}

#[test]
#[ignore = "boots QEMU guests; .ci/run runs them"]
fn pairs_agree_when_guest_siblings_share_a_host_cpu() {
    let run = boot_pairs(SMT_GUEST, SIBLINGS_SHARE_A_HOST_CPU, "agree", 0, PAIRS);
    assert_pairs(&run, SIBLINGS_SHARE_A_HOST_CPU);
}

#[test]
#[ignore = "boots QEMU guests; .ci/run runs them"]
fn pairs_finds_fake_siblings_when_guest_siblings_are_on_separate_host_cpus() {
    let run = boot_pairs(
        SMT_GUEST,
        SIBLINGS_ON_SEPARATE_HOST_CPUS,
        "differ",
        3,
        PAIRS,
    );
    assert_pairs(&run, SIBLINGS_ON_SEPARATE_HOST_CPUS);
    assert_eq!(run.json()["map"]["cpus"][0]["fake"], serde_json::json!([1]));
}

#[test]
#[ignore = "boots QEMU guests; .ci/run runs them"]
fn pairs_finds_hidden_siblings_on_a_guest_that_claims_no_smt() {
    let run = boot_pairs(NO_SMT_GUEST, "0,0", "differ", 3, PAIRS);
    assert_pairs(&run, "0,0");
    assert_eq!(run.json()["map"]["cpus"][1]["relation"], "hidden-siblings");
}

/// A placement drawn at random on every run (nobody wrote it down in
/// advance): 6 vCPUs, all pairs. `PAIRS_PIN_6=…` replays a failed draw.
#[test]
#[ignore = "boots QEMU guests; .ci/run runs them"]
fn pairs_finds_a_random_placement_of_six_vcpus() {
    let pin = random_pin("PAIRS_PIN_6", 6);
    let published = [vec![0, 1], vec![2, 3], vec![4, 5]];
    boot_random_placement("6,sockets=1,cores=3,threads=2", &pin, &published, PAIRS);
}

/// The same above the all-pairs limit, so the group-testing search runs:
/// 10 vCPUs, published as 10 cores. `PAIRS_PIN_10=…` replays a draw.
#[test]
#[ignore = "boots QEMU guests; .ci/run runs them"]
fn pairs_group_testing_finds_a_random_placement_of_ten_vcpus() {
    let pin = random_pin("PAIRS_PIN_10", 10);
    let published: Vec<Vec<u32>> = (0..10).map(|cpu| vec![cpu]).collect();
    let run = boot_random_placement("10,sockets=1,cores=10,threads=1", &pin, &published, PAIRS);
    assert_eq!(run.json()["search"], "group-testing", "search\n{run}");
}

/// The same with `--first-pass latency`: the latency pass's stacked sets
/// are the placement, and every sibling is still confirmed by a penalty.
/// `PAIRS_LATENCY_PIN_10=…` replays a draw.
#[test]
#[ignore = "boots QEMU guests; .ci/run runs them"]
fn pairs_first_pass_latency_finds_a_random_placement_of_ten_vcpus() {
    let pin = random_pin("PAIRS_LATENCY_PIN_10", 10);
    let published: Vec<Vec<u32>> = (0..10).map(|cpu| vec![cpu]).collect();
    let run = boot_random_placement(
        "10,sockets=1,cores=10,threads=1",
        &pin,
        &published,
        PAIRS_LATENCY_FIRST,
    );
    let json = run.json();
    assert_eq!(json["search"], "latency-domains", "search\n{run}");
    let first_pass = &json["first_pass"];
    assert!(first_pass["unused"].is_null(), "first pass unused\n{run}");
    let sets: Vec<Vec<u32>> = first_pass["candidate_sets"]
        .as_array()
        .unwrap_or_else(|| panic!("no first_pass.candidate_sets\n{run}"))
        .iter()
        .map(|set| serde_json::from_value(set["cpus"].clone()).unwrap())
        .collect();
    assert_eq!(sets, groups_of_pin(&pin), "candidate sets\n{run}");
    // Every measured sibling confirmed by a comparison of two workers: the
    // pairs measured sharing link exactly the measured groups.
    let mut confirmed: Vec<Vec<u32>> = (0..10).map(|cpu| vec![cpu]).collect();
    for record in json["comparisons"].as_array().into_iter().flatten() {
        let against: Vec<u32> = serde_json::from_value(record["against"].clone()).unwrap();
        if let ([other], "shares") = (against.as_slice(), record["outcome"].as_str().unwrap()) {
            let probe = record["probe"].as_u64().unwrap() as u32;
            let a = confirmed.iter().position(|g| g.contains(&probe)).unwrap();
            let b = confirmed.iter().position(|g| g.contains(other)).unwrap();
            if a != b {
                let moved = confirmed.remove(a.max(b));
                confirmed[a.min(b)].extend(moved);
            }
        }
    }
    for group in &mut confirmed {
        group.sort();
    }
    confirmed.sort();
    assert_eq!(
        confirmed,
        groups_of_pin(&pin),
        "groups confirmed pair by pair\n{run}"
    );
    println!(
        "guest: first pass: {} pairs, {:.1} s of {:.1} s measuring",
        first_pass["pairs_measured"],
        first_pass["seconds"].as_f64().unwrap_or_default(),
        json["effort"]["measuring_seconds"]
            .as_f64()
            .unwrap_or_default()
    );
}

/// `vcpus` host CPUs (0 or 1) drawn from the clock, or the replayed `var`.
fn random_pin(var: &str, vcpus: usize) -> String {
    if let Ok(pin) = std::env::var(var) {
        return pin;
    }
    let mut state = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64)
        | 1;
    let pin: Vec<&str> = (0..vcpus)
        .map(|_| {
            // xorshift64: enough to vary the draw from run to run.
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            if state >> 63 == 0 { "0" } else { "1" }
        })
        .collect();
    let pin = pin.join(",");
    println!("guest: drew PIN={pin} (replay with {var}={pin})");
    pin
}

/// The groups of vCPUs `pin` puts on one host CPU, as JSON CPU lists.
fn groups_of_pin(pin: &str) -> Vec<Vec<u32>> {
    let mut groups: Vec<Vec<u32>> = Vec::new();
    let hosts: Vec<&str> = pin.split(',').collect();
    for (vcpu, host) in hosts.iter().enumerate() {
        let first = hosts.iter().position(|h| h == host).unwrap();
        match groups.iter_mut().find(|g| g[0] as usize == first) {
            Some(group) => group.push(vcpu as u32),
            None => groups.push(vec![vcpu as u32]),
        }
    }
    groups
}

/// Boots `pairs` on guest `smp` with `pin`, which the published map
/// agrees with only where the pins make exactly its groups, and checks
/// the measured map is the sharing the pins create.
fn boot_random_placement(smp: &str, pin: &str, published: &[Vec<u32>], args: &[&str]) -> GuestRun {
    let (verdict, code) = if groups_of_pin(pin) == published {
        ("agree", 0)
    } else {
        ("differ", 3)
    };
    let run = boot_pairs(smp, pin, verdict, code, args);
    assert_pairs(&run, pin);
    run
}

/// The CPUs whose row in the measured map is inconclusive or names pairs
/// left undecided, after checking
/// that every row says nothing wrong: a decided CPU's measured group is its
/// group under `pin`, an undecided one's lies within it.
fn undecided_cpus(run: &GuestRun, pin: &str) -> Vec<u32> {
    let json = run.json();
    let groups = groups_of_pin(pin);
    let mut undecided = Vec::new();
    for row in json["map"]["cpus"].as_array().into_iter().flatten() {
        let cpu = row["cpu"]
            .as_u64()
            .unwrap_or_else(|| panic!("map row {row}\n{run}")) as u32;
        let measured: Vec<u32> = serde_json::from_value(row["measured"].clone())
            .unwrap_or_else(|e| panic!("map row {row}: {e}\n{run}"));
        let group = groups.iter().find(|g| g.contains(&cpu)).unwrap();
        let open = row["undecided"]
            .as_array()
            .is_some_and(|pairs| !pairs.is_empty());
        if row["relation"] == "inconclusive" || open {
            assert!(
                measured.iter().all(|c| group.contains(c)),
                "CPU {cpu} measured with {measured:?}, outside its host CPU's group {group:?}\n{run}"
            );
            undecided.push(cpu);
        } else {
            assert_eq!(&measured, group, "CPU {cpu}'s measured group\n{run}");
        }
    }
    undecided
}

/// Boots `pairs` `args` on guest `smp` with `pin` until it reaches
/// `verdict` with exit `code` and a whole map ([`read_pairs`]).
fn boot_pairs(smp: &str, pin: &str, verdict: &str, code: i32, args: &[&str]) -> GuestRun {
    let guest = Guest::new();
    boot_reading(
        |run| read_pairs(verdict, code, pin, run),
        || guest.boot(smp, Some(pin), args),
    )
}

/// Reads a `pairs` boot: the verdict first, then the map. A map that
/// left CPUs undecided (each undecided pair measured three times against
/// different members of its group) is honest about a noisy host, and its
/// verdict may stand on the pairs it decided, but it cannot show the whole
/// placement: the guest boots again. CI-16: `PIN=0,1,0,1` read
/// differ (right) with 1-3 undecided, and a test that took the map as
/// whole failed on it.
fn read_pairs(verdict: &str, code: i32, pin: &str, run: &GuestRun) -> Reading {
    let reading = read_verdict(verdict, code, run);
    if reading != Reading::Right {
        return reading;
    }
    let undecided = undecided_cpus(run, pin);
    if undecided.is_empty() {
        Reading::Right
    } else {
        Reading::Inconclusive(format!(
            "PIN={pin}'s map left CPUs {undecided:?} undecided (a noisy host)"
        ))
    }
}

/// The run's measured map is the sharing `pin` creates; the control and
/// pinning passed.
fn assert_pairs(run: &GuestRun, pin: &str) {
    let json = run.json();
    let groups: Vec<Vec<u32>> = serde_json::from_value(json["map"]["measured"].clone())
        .unwrap_or_else(|e| panic!("map.measured: {e}\n{run}"));
    assert_eq!(groups, groups_of_pin(pin), "measured map\n{run}");
    assert_eq!(json["control"]["status"], "passed", "control\n{run}");
    assert_eq!(json["pinning"]["status"], "passed", "pinning\n{run}");
    println!(
        "guest: PIN={pin}: {} comparisons, {} repetitions, {:.1} s measuring",
        json["effort"]["comparisons"],
        json["effort"]["repetitions"],
        json["effort"]["measuring_seconds"]
    );
}

/// `run --json`: the sibling-packed arm's median cost is clearly above the
/// one-per-core arm's.
fn assert_packing_costs_clearly_more(run: &GuestRun) {
    let json = run.json();
    let median_cost = |arm: &str| -> f64 {
        let arm_statistics = json["arms"]
            .as_array()
            .and_then(|arms| arms.iter().find(|candidate| candidate["name"] == arm));
        match arm_statistics.and_then(|statistics| statistics["cost"]["median"].as_f64()) {
            Some(median) => median,
            None => panic!("no arms[name = {arm}].cost.median in the JSON\n{run}"),
        }
    };
    let packed = median_cost("sibling-packed");
    let one_per_core = median_cost("one-per-core");
    assert!(
        packed > CLEAR_PACKING_COST_RATIO * one_per_core,
        "sibling-packed costs {packed}, one-per-core {one_per_core}: \
         expected more than {CLEAR_PACKING_COST_RATIO}x\n{run}"
    );
}

/// Long enough repetitions that the enable/disable calls' fixed hundred or
/// so user-space instructions stay below the 6th significant figure of
/// instructions per byte (about 0.3 of a unit there at 400 ms).
const EXACT_REP_MS: &str = "400";

/// What the aarch64 `mul` kernel retires per byte by construction, to 6
/// significant figures.
const ARM64_MUL_INSTRUCTIONS_PER_BYTE: &str = "0.796875";

/// A short ungated study, its JSON on stdout (the text report on stderr,
/// merged by the console).
fn arm64_run_args<'a>(arms: &'a str, workers: &'a str, rep_ms: &'a str) -> Vec<&'a str> {
    vec![
        "run",
        "--skip-gate",
        "--arms",
        arms,
        "--workers",
        workers,
        "--reps",
        "3",
        "--warmups",
        "1",
        "--rep-ms",
        rep_ms,
        "--json",
        "-",
    ]
}

/// The check called `name` in a run's JSON.
/// `run --sweep --skip-gate --json -` with `reps` rounds, no warm-up
/// beyond one.
fn sweep_args(reps: &str) -> [&str; 9] {
    [
        "run",
        "--sweep",
        "--skip-gate",
        "--reps",
        reps,
        "--warmups",
        "1",
        "--json",
        "-",
    ]
}

/// Step `workers` of a sweep's JSON.
fn sweep_step<'a>(
    json: &'a serde_json::Value,
    workers: usize,
    run: &GuestRun,
) -> &'a serde_json::Value {
    json["steps"]
        .as_array()
        .and_then(|steps| steps.iter().find(|s| s["workers"] == workers))
        .unwrap_or_else(|| panic!("no step {workers}\n{run}"))
}

/// A sweep in [`SMT_GUEST`] whose siblings share a host CPU: the order is
/// cores first (vCPUs 0, 2), then the siblings (1, 3). The second core is
/// a host CPU of its own and adds about a whole CPU; each sibling shares
/// its core's host CPU and adds next to nothing, so the knee is at 3
/// workers, an SMT sibling.
#[test]
#[ignore = "boots QEMU guests; .ci/run runs them"]
fn sweep_second_core_adds_a_cpu_and_siblings_next_to_nothing() {
    let run = Guest::new().boot(
        SMT_GUEST,
        Some(SIBLINGS_SHARE_A_HOST_CPU),
        &sweep_args("12"),
    );
    run.assert_exit(0);
    let json = run.json();
    assert_eq!(check(&json, "pinning", &run)["status"], "passed", "{run}");
    let order: Vec<u64> = json["plan"]["order"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["cpu"].as_u64().unwrap())
        .collect();
    assert_eq!(order, [0, 2, 1, 3], "cores first, then siblings\n{run}");
    let gain = |workers: usize| {
        sweep_step(&json, workers, &run)["marginal_gain"]["value"]
            .as_f64()
            .unwrap_or_else(|| panic!("no gain at step {workers}\n{run}"))
    };
    // Measured in the TCG guest: the second core 0.66 and 1.17 over two
    // runs of 8 rounds and 0.86 in two of 12, the siblings between -0.30
    // and 0.14 (a sibling that only time-slices its core's host CPU adds
    // nothing, or costs the switching). Host CPU 1 ran vCPU 2 alone at 0.75
    // to 1 of vCPU 0, so the core's bound is the half a CPU, not 1.
    let (core, siblings) = (gain(2), [gain(3), gain(4)]);
    assert!(
        core > 0.5,
        "second core adds {core:.3}, expected > 0.5\n{run}"
    );
    for (sibling, workers) in siblings.iter().zip([3, 4]) {
        assert!(
            *sibling < 0.35,
            "sibling at step {workers} adds {sibling:.3}, expected < 0.35\n{run}"
        );
    }
    assert_eq!(json["knees"][0]["workers"], 3, "{run}");
    assert_eq!(json["knees"][0]["added"][0]["kind"], "smt-sibling", "{run}");
    eprintln!("sweep in the SMT guest: second core {core:.3}, siblings {siblings:.3?}");
}

/// A sweep in the guest with a slow second core: the second CPU is worth
/// its own measured speed (0.46 of vCPU 0 nominally) less what running
/// beside it cost the first, and the ceiling of step 2 is 1 plus that
/// speed, each within 15 % of the speed this run measured for vCPU 1
/// alone; where the host is too noisy to measure that closely, the sweep
/// must say so rather than claim a wrong gain.
///
/// What sharing costs the first CPU is the sweep's own measure: worker 0's
/// time per item in step 2 against step 1's. The two vCPUs' host threads
/// share the host's caches, and six boots read worker 0 2.3 % to 4.7 %
/// slower beside vCPU 1 (10.46 against 10.20 ms an item; 1.039 against
/// 0.992), which takes 0.03-0.07 from the gain, 8-15 % of the speed: CI
/// failed on it once (gain 0.367 against 0.439, a quiet boot).
#[test]
#[ignore = "boots QEMU guests; .ci/run runs them"]
fn sweep_second_cpu_is_worth_its_measured_speed() {
    // The host measured first (a pinned spin loop in 100 ms slices on
    // each CPU of CI's 2-vCPU KVM guest, 20 s): each host CPU switches
    // between about 0.6 and 0.95 of its speed, each state lasting 0.2 to
    // 2 s, independently on the two CPUs (slice CV 14 % and 15 %): another
    // tenant's hyperthread, invisible to steal time. A round of the sweep
    // runs vCPU 0 alone, vCPU 1 alone and step 2 one after another over
    // seconds, so a round's gain and speed see different host states:
    // per-round gains ran from -0.23 to 1.53 around speeds of 0.42-0.49
    // (12 rounds of 300 ms), and four-round sweeps in CI missed by -100 %
    // to +50 % (gains -0.004, 0.577, 0.273 against speeds 0.370, 0.452,
    // 0.337). No bounded number of rounds gets within 15 % on such a host.
    //
    // So each boot is read against its own noise, the product's noise
    // floor (step 1 against itself) and the gain's own interval. A quiet
    // boot (floor at most QUIET_FLOOR, the gain's interval no wider than
    // ±15 % of the speed) must put the gain within 15 % of the speed. A noisy
    // boot may miss, but only honestly: the gain's 95 % interval and the
    // speed's must overlap, and a knee the miss makes must be unclear. The
    // test boots up to three times for a boot within 15 %; a confident
    // miss fails at once; three honest noisy boots pass, saying that the
    // host kept the 15 % claim from being checked.
    let mut args = sweep_args("8").to_vec();
    args.extend(["--rep-ms", "500"]);
    let mut noisy = Vec::new();
    for boot in 1..=3 {
        let run = boot_with_a_slow_second_core(&args);
        match read_throttled_sweep(&run) {
            SweepReading::Within(figures) => {
                eprintln!(
                    "sweep in the throttled guest: {figures} (boot {boot} of up to 3; noisy \
                     boots before it: {noisy:?})"
                );
                return;
            }
            SweepReading::NoisyAndSaysSo(figures) => {
                eprintln!("{run}");
                noisy.push(figures);
            }
        }
    }
    eprintln!(
        "sweep in the throttled guest: the host was too noisy on every boot to check the gain \
         within 15 %; each boot's intervals covered the speed and its knees were unclear: \
         {noisy:#?}"
    );
}

/// The noise floor (step 1 against itself, the half-width of its
/// median's 95 % interval) at or under which a boot must be within 15 %:
/// step 1's time then moves by at most ±10 % in most rounds, which moves a
/// gain of 0.46 (1.46 / step 2's time − 1, both times that noisy) by about
/// ±0.07, the 15 %. Twelve-round sweeps on the noisy host above had floors
/// of 0.22, 0.25 and 0.29.
const QUIET_FLOOR: f64 = 0.10;

/// What one boot of the throttled sweep showed.
enum SweepReading {
    /// vCPU 1's gain within 15 % of its measured speed.
    Within(String),
    /// Not within 15 %, on a noisy host, and the sweep said it was unsure.
    NoisyAndSaysSo(String),
}

/// Reads one boot of the throttled sweep (see
/// [`sweep_second_cpu_is_worth_its_measured_speed`]); panics on a wrong
/// claim: a ceiling that is not 1 plus the speed, a quiet boot off by more
/// than 15 %, or a noisy one whose intervals exclude each other or whose
/// knee is called clear.
fn read_throttled_sweep(run: &GuestRun) -> SweepReading {
    run.assert_exit(0);
    let json = run.json();
    let number = |value: &serde_json::Value, what: &str| {
        value
            .as_f64()
            .unwrap_or_else(|| panic!("{what} is not a number\n{run}"))
    };
    let speed_of_cpu_1 = &json["cpu_speeds"][1]["speed"];
    let speed = number(&speed_of_cpu_1["value"], "vCPU 1's speed");
    let step = sweep_step(&json, 2, run);
    let gain = number(&step["marginal_gain"]["value"], "gain");
    let ceiling = number(&step["ceiling"], "ceiling");
    let floor = number(&json["noise_floor"], "noise floor (eight rounds give one)");
    // vCPU 0's speed beside vCPU 1: step 1's time per item over worker
    // 0's in step 2 (its busy time over its items, medians).
    let items = number(&json["work"]["items"], "the work's items");
    let alone = number(
        &sweep_step(&json, 1, run)["wall_ms"]["median"],
        "step 1's time",
    ) / items;
    let worker_0 = &step["worker_rows"][0];
    let beside = number(&worker_0["busy_ms"]["median"], "worker 0's busy time")
        / number(&worker_0["items"]["median"], "worker 0's items");
    let first_beside = alone / beside;
    assert!(
        (0.85..=1.05).contains(&first_beside),
        "vCPU 0 ran at {first_beside:.3} of its speed beside vCPU 1: more than the host's \
         shared caches explain (0.95-0.98 measured)\n{run}"
    );
    let expected = speed + first_beside - 1.0;
    let figures = format!(
        "speed {speed:.3}, vCPU 0 beside it {first_beside:.3}, expected gain {expected:.3}, gain \
         {gain:.3} [{}, {}], ceiling {ceiling:.3}, noise floor {floor:.3}, finish gap {} ms",
        step["marginal_gain"]["ci95_low"],
        step["marginal_gain"]["ci95_high"],
        step["finish_gap_ms"]["median"]
    );
    // The cap is a most, not a share the host owes, and each host CPU runs
    // at 0.6 to 0.95 of its speed by turns (see hybrid_measures_a_slow_
    // second_core): 0.46 moves to 0.29-0.73. What is checked is that the
    // sweep follows the speed it measured, so long as the CPU is clearly
    // the slower one.
    assert!(
        (0.2..=0.75).contains(&speed),
        "vCPU 1's speed {speed:.3}, expected a clearly slower CPU (0.2 to 0.75; 0.46 \
         nominal)\n{run}"
    );
    // The ceiling is 1 plus vCPU 1's speed by construction: this checks
    // that the sweep adds the speeds it measured.
    assert!(
        ((ceiling - 1.0) / speed - 1.0).abs() <= 0.15,
        "ceiling {ceiling:.3}, expected 1 + {speed:.3} within 15 %\n{run}"
    );
    if (gain - expected).abs() <= 0.15 * speed {
        return SweepReading::Within(figures);
    }
    let interval = |value: &serde_json::Value, what: &str| {
        (
            number(&value["ci95_low"], what),
            number(&value["ci95_high"], what),
        )
    };
    let (gain_low, gain_high) = interval(&step["marginal_gain"], "the gain's interval");
    // Quiet by both of the product's own measures: step 1 against itself,
    // and the gain's interval narrow enough to tell 15 % (CI-11: floor
    // 0.058, yet the gain 0.331 [0.107, 0.471] against a speed of 0.397:
    // step 2 itself was noisy, and the product said so).
    let precise_enough = (gain_high - gain_low) / 2.0 <= 0.15 * speed;
    assert!(
        !(floor <= QUIET_FLOOR && precise_enough),
        "a quiet boot (noise floor {floor:.3} <= {QUIET_FLOOR}, the gain's interval within \
         15 % of the speed) missed: {figures}\n{run}"
    );
    let (speed_low, speed_high) = interval(speed_of_cpu_1, "the speed's interval");
    let (expected_low, expected_high) = (
        speed_low + first_beside - 1.0,
        speed_high + first_beside - 1.0,
    );
    assert!(
        gain_low <= expected_high && expected_low <= gain_high,
        "a noisy boot claimed a gain its interval keeps from the expected one: {figures}, \
         expected interval [{expected_low:.3}, {expected_high:.3}]\n{run}"
    );
    for knee in json["knees"].as_array().into_iter().flatten() {
        let straddles = gain_low < 0.5 && gain_high >= 0.5;
        assert!(
            !(straddles && knee["clear"] == true),
            "a knee called clear on an interval across the fraction: {knee}\n{run}"
        );
    }
    SweepReading::NoisyAndSaysSo(figures)
}

fn check<'a>(json: &'a serde_json::Value, name: &str, run: &GuestRun) -> &'a serde_json::Value {
    json["checks"]
        .as_array()
        .and_then(|checks| checks.iter().find(|c| c["name"] == name))
        .unwrap_or_else(|| panic!("no check {name} in the JSON\n{run}"))
}

/// The run's JSON and text both say it is invalid (exit 6).
fn assert_invalid_run(json: &serde_json::Value, run: &GuestRun) {
    assert_eq!(json["valid"], false, "{run}");
    assert!(run.stdout.contains("INVALID run (exit 6)"), "{run}");
}

/// Every measured worker sample of a run's JSON.
fn measured_workers(json: &serde_json::Value) -> Vec<&serde_json::Value> {
    json["samples"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|rep| rep["warmup"] == false)
        .flat_map(|rep| rep["workers"].as_array().into_iter().flatten())
        .collect()
}

/// One vCPU with icount: the counts are exact, so instructions per byte
/// equal the kernel's constant to 6 significant figures in every sample,
/// and the costs are core cycles.
fn assert_exact_counts(arms: &str, workers: &str) {
    let guest = Arm64Guest::new();
    // `--wide`: the worker table with the counts (checked below).
    let mut args = arm64_run_args(arms, workers, EXACT_REP_MS);
    args.push("--wide");
    let run = guest.boot("1", Icount::Exact, &args);
    run.assert_exit(0);
    let json = run.json();
    assert_eq!(json["setup"]["clock"], "core-cycles", "clock\n{run}");
    assert_eq!(
        json["setup"]["tick_clock"], "generic-timer",
        "tick clock\n{run}"
    );
    assert_eq!(
        check(&json, "invariance", &run)["status"],
        "passed",
        "{run}"
    );
    assert_eq!(
        check(&json, "multiplexing", &run)["status"],
        "passed",
        "{run}"
    );
    let samples = measured_workers(&json);
    assert_eq!(
        samples.len(),
        3 * workers.parse::<usize>().unwrap(),
        "{run}"
    );
    for sample in samples {
        let instructions = sample["counters"]["instructions"].as_u64();
        let bytes = sample["bytes"].as_u64();
        let (Some(instructions), Some(bytes)) = (instructions, bytes) else {
            panic!("a sample without instructions or bytes: {sample}\n{run}");
        };
        let per_byte = format!("{:.6}", instructions as f64 / bytes as f64);
        assert_eq!(per_byte, ARM64_MUL_INSTRUCTIONS_PER_BYTE, "{sample}\n{run}");
        assert!(
            sample["counters"]["cycles"].as_u64() > Some(0),
            "{sample}\n{run}"
        );
        // The text tables show the counts too.
        assert!(
            run.stdout.contains(&instructions.to_string()),
            "{instructions} not in the tables\n{run}"
        );
    }
    assert!(run.stdout.contains("valid run"), "{run}");
}

#[test]
#[ignore = "boots QEMU guests; .ci/run runs them"]
fn arm64_one_vcpu_one_per_core_counts_exactly() {
    assert_exact_counts("one-per-core", "1");
}

#[test]
#[ignore = "boots QEMU guests; .ci/run runs them"]
fn arm64_one_vcpu_same_cpu_counts_exactly() {
    assert_exact_counts("same-cpu", "2");
}

#[test]
#[ignore = "boots QEMU guests; .ci/run runs them"]
fn arm64_counters_held_by_another_perf_user_fail_multiplexing() {
    let guest = Arm64Guest::new();
    // A monitoring agent's pinned CPU-wide events take all 7 counters
    // (6 programmable + the cycle counter) before the study starts.
    let script = "\
/tmp/hold-counters 7 /tmp/held &
holder=$!
while [ ! -e /tmp/held ]; do
  kill -0 $holder 2>/dev/null || { echo 'hold-counters gave up'; exit 125; }
  sleep 0.05
done
/tmp/placement-study run --skip-gate --arms one-per-core --workers 1 --reps 3 --warmups 1 --json -
status=$?
kill $holder
exit $status";
    let run = guest.boot_script("1", Icount::Exact, script);
    run.assert_exit(6);
    let json = run.json();
    let multiplexing = check(&json, "multiplexing", &run);
    assert_eq!(multiplexing["status"], "failed", "{run}");
    let detail = multiplexing["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("were multiplexed"), "{detail}\n{run}");
    assert!(detail.contains("another perf user"), "{detail}\n{run}");
    // Every repetition is excluded, so no cost is quoted at all.
    for arm in json["arms"].as_array().into_iter().flatten() {
        assert!(arm["cost"].is_null(), "a cost was quoted: {arm}\n{run}");
    }
    assert_invalid_run(&json, &run);
}

#[test]
#[ignore = "boots QEMU guests; .ci/run runs them"]
fn arm64_two_busy_vcpus_leak_instructions_and_fail_invariance() {
    let guest = Arm64Guest::new();
    let run = guest.boot(
        "2",
        Icount::Exact,
        &arm64_run_args("one-per-core", "2", "50"),
    );
    run.assert_exit(6);
    let json = run.json();
    let invariance = check(&json, "invariance", &run);
    assert_eq!(invariance["status"], "failed", "{run}");
    assert!(
        invariance["detail"]
            .as_str()
            .is_some_and(|d| d.contains("the counters were not on the workers")
                || d.contains("besides its worker's kernel")),
        "{run}"
    );
    assert_invalid_run(&json, &run);
}

#[test]
#[ignore = "boots QEMU guests; .ci/run runs them"]
fn arm64_without_icount_has_cycles_but_no_instructions() {
    let guest = Arm64Guest::new();
    let run = guest.boot(
        "1",
        Icount::None,
        &arm64_run_args("one-per-core", "1", "50"),
    );
    run.assert_exit(0);
    let json = run.json();
    let setup = &json["setup"];
    assert_eq!(setup["clock"], "core-cycles", "{run}");
    let instructions = setup["hardware_counters"]["events"]
        .as_array()
        .and_then(|events| events.iter().find(|e| e["event"] == "instructions"))
        .unwrap_or_else(|| panic!("no instructions event status\n{run}"));
    assert_eq!(instructions["counted"], false, "{run}");
    let reason = instructions["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("this PMU has no instructions event"),
        "{reason}\n{run}"
    );
    let invariance = check(&json, "invariance", &run);
    assert_eq!(invariance["status"], "unavailable", "{run}");
    assert!(
        invariance["detail"]
            .as_str()
            .is_some_and(|d| d.contains(reason)),
        "{run}"
    );
    for sample in measured_workers(&json) {
        assert!(
            sample["counters"]["cycles"].as_u64() > Some(0),
            "{sample}\n{run}"
        );
        assert!(
            sample["counters"]["instructions"].is_null(),
            "{sample}\n{run}"
        );
    }
}

#[test]
#[ignore = "boots QEMU guests; .ci/run runs them"]
fn arm64_gate_without_threads_is_no_smt_with_evidence() {
    let guest = Arm64Guest::new();
    let run = boot_expecting("no-smt", 4, || {
        guest.boot("2", Icount::Exact, &["gate", "--json"])
    });
    let json = run.json();
    let evidence = &json["evidence"];
    assert_eq!(evidence["cpuid_absent"], "not part of aarch64", "{run}");
    assert_eq!(
        evidence["devicetree_compatible"], "linux,dummy-virt",
        "{run}"
    );
    // The console reports no size, so the text wraps at 80 columns: compare words.
    let words = run.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    for line in [
        "CPUID hypervisor bit and /proc/cpuinfo hypervisor flag: CPUID is not part of aarch64",
        "device tree: linux,dummy-virt (QEMU's virt machine)",
        "running under a hypervisor (QEMU's virt machine, by its device tree)",
    ] {
        assert!(words.contains(line), "no '{line}'\n{run}");
    }
}

#[test]
#[ignore = "boots QEMU guests; .ci/run runs them"]
fn arm64_topology_names_the_core_from_its_midr() {
    let guest = Arm64Guest::new();
    let run = guest.boot("1", Icount::Exact, &["topology", "--json", "-"]);
    run.assert_exit(0);
    let json = run.json();
    assert_eq!(json["midr"]["source"], "midr_el1", "{run}");
    assert_eq!(
        json["source"]["cpuid_absent"], "not part of aarch64",
        "{run}"
    );
    // QEMU's -cpu max: the implementer code reserved for software.
    assert_eq!(json["midr"]["kinds"][0]["midr"], "0x000f0510", "{run}");
    assert!(
        run.stdout
            .contains("cpuid           not part of aarch64 (CPU identity from MIDR_EL1)"),
        "{run}"
    );
}

#[test]
#[ignore = "boots QEMU guests; .ci/run runs them"]
fn arm64_counter_unit_tests_pass_on_a_real_pmu() {
    // The counter tests that only mean something where a PMU counts, among
    // them the two-group layout, run on QEMU's armv8_pmuv3.
    let guest = Arm64Guest::new();
    let run = guest.boot_unit_tests("1", "measure::counters");
    run.assert_exit(0);
    assert!(
        run.stdout.contains(
            "test measure::counters::tests::two_groups_count_and_are_both_checked ... ok"
        ),
        "{run}"
    );
    assert!(!run.stdout.contains("skipped: no hardware PMU"), "{run}");
}

/// `run -- COMMAND` on QEMU's counting PMU (two vCPUs, icount), in one
/// boot: a deterministic shell loop does the same user-space work in
/// one-per-core (CPUs 0-1) and same-cpu (CPU 0), so same-work passes; a
/// loop sized by `nproc`, which counts the CPUs its affinity allows (as a
/// program sizing its pool by the CPUs it may use), does half the work on
/// one CPU, so same-work fails naming same-cpu, and the study stays valid.
/// One busy process at a time: while both vCPUs are busy, QEMU's counters
/// leak between them (two gzips in parallel read 2.8 % more in
/// one-per-core than on one CPU), which would fail a deterministic command.
#[test]
#[ignore = "boots QEMU guests; .ci/run runs them"]
fn arm64_command_same_work_passes_when_deterministic_and_fails_by_placement() {
    let guest = Arm64Guest::new();
    let study = "/tmp/placement-study run --skip-gate --arms one-per-core,same-cpu --threads 2 \
                 --warmups 1 --reps 3 --json - --";
    let script = format!(
        "{study} sh -c 'i=0; while [ $i -lt 3000 ]; do i=$((i+1)); done'
echo same-status=$?
{study} sh -c 'n=$((1500 * $(nproc))); i=0; while [ $i -lt $n ]; do i=$((i+1)); done'
echo nproc-status=$?"
    );
    let run = guest.boot_script("2", Icount::Exact, &script);
    run.assert_exit(0);
    assert!(run.stdout.contains("same-status=0"), "{run}");
    assert!(run.stdout.contains("nproc-status=0"), "{run}");
    let found = run.documents();
    assert_eq!(found.len(), 2, "two documents\n{run}");
    let (deterministic, sized) = (&found[0], &found[1]);
    for rep in deterministic["reps"].as_array().into_iter().flatten() {
        let hardware = &rep["sample"]["hardware"];
        assert_eq!(hardware["hardware"], "counted", "{hardware}\n{run}");
        assert!(
            hardware["pmus"][0]["user_instructions"]["count"].as_u64() > Some(1_000_000),
            "{hardware}\n{run}"
        );
    }
    let same_work = check(deterministic, "same-work", &run);
    assert_eq!(same_work["status"], "passed", "{run}");
    assert_eq!(
        check(deterministic, "multiplexing", &run)["status"],
        "passed",
        "{run}"
    );
    let moved = check(sized, "same-work", &run);
    assert_eq!(moved["status"], "failed", "{run}");
    let detail = moved["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("same-cpu -5"), "{detail}\n{run}");
    assert_eq!(
        sized["valid"], true,
        "a finding, not an invalid study\n{run}"
    );
    assert!(run.stdout.contains("DIFFERENT WORK"), "{run}");
    println!(
        "guest: same work {}; by nproc {detail}",
        same_work["detail"].as_str().unwrap_or_default()
    );
}

/// A number in an observe document, or a failure showing the run.
fn number(value: &serde_json::Value, what: &str, run: &GuestRun) -> f64 {
    value
        .as_f64()
        .unwrap_or_else(|| panic!("{what} is not a number\n{run}"))
}

/// Boots [`NO_SMT_GUEST`] on host CPUs 0 and 1 and observes `script` (run by
/// the guest's busybox sh) with `--json -`; checks the observation is valid
/// and reconciles within the 1 % bar, and that the command's status came
/// through.
fn observe_script(script: &str, status: i32) -> (GuestRun, serde_json::Value) {
    let run = Guest::new().boot(
        NO_SMT_GUEST,
        Some("0,1"),
        &["observe", "--json", "-", "--", "sh", "-c", script],
    );
    run.assert_exit(status);
    let json = run.json();
    assert_eq!(json["valid"], true, "valid\n{run}");
    assert_eq!(json["exit_status"], status, "{run}");
    let difference = number(&json["reconciliation"]["difference"], "difference", &run);
    assert!(
        difference <= 0.01,
        "residency against task-clock {difference}\n{run}"
    );
    (run, json)
}

/// The thread with the most time on a CPU, and its time on `cpu` in ms.
fn busiest_thread(json: &serde_json::Value) -> &serde_json::Value {
    &json["threads"][0]
}

fn ms_on(thread: &serde_json::Value, cpu: u64) -> f64 {
    thread["intervals"]
        .as_array()
        .map(|intervals| {
            intervals
                .iter()
                .filter(|i| i["cpu"] == cpu)
                .map(|i| {
                    i["end_ms"].as_f64().unwrap_or(0.0) - i["start_ms"].as_f64().unwrap_or(0.0)
                })
                .sum()
        })
        .unwrap_or(0.0)
}

#[test]
#[ignore = "boots QEMU guests; .ci/run runs them"]
fn observe_a_cpu_bound_command_reconciles() {
    // About a second of busybox sh arithmetic under TCG, nothing pinned; exit 7.
    let (run, json) = observe_script(
        "i=0; while [ $i -lt 40000 ]; do i=$((i+1)); done; exit 7",
        7,
    );
    let wall = number(&json["wall_ms"], "wall_ms", &run);
    let residency = number(&json["reconciliation"]["residency_ms"], "residency", &run);
    assert!(
        residency > 0.9 * wall && residency < 1.05 * wall,
        "a CPU-bound command is on a CPU all the time: {residency:.1} of {wall:.1} ms\n{run}"
    );
    let share: f64 = json["cpus"]
        .as_array()
        .map(|cpus| {
            cpus.iter()
                .map(|c| c["share"].as_f64().unwrap_or(0.0))
                .sum()
        })
        .unwrap_or(0.0);
    assert!(
        (share - 1.0).abs() < 1e-6,
        "per-CPU shares add up to {share}\n{run}"
    );
    println!(
        "guest: observe CPU-bound command: wall {wall:.1} ms, residency {residency:.1} ms, task-clock {:.1} ms",
        number(
            &json["reconciliation"]["task_clock_ms"],
            "task_clock_ms",
            &run
        )
    );
}

#[test]
#[ignore = "boots QEMU guests; .ci/run runs them"]
fn observe_sees_taskset_moves_when_they_happen() {
    // A busy loop started on CPU 0, moved to CPU 1 after 0.6 s and back to
    // CPU 0 after 1.2 s, stopped at 1.8 s.
    let (run, json) = observe_script(
        "taskset -c 0 sh -c 'while :; do :; done' & p=$!; \
         sleep 0.6; taskset -pc 1 $p >/dev/null; sleep 0.6; taskset -pc 0 $p >/dev/null; \
         sleep 0.6; kill $p; wait $p; exit 0",
        0,
    );
    let busy = busiest_thread(&json);
    // The moves the script made: each `taskset -pc` process, from its first
    // stretch on a CPU to its last. (The loop's own start, on whichever CPU
    // `taskset -c 0` was forked on, may add a first move.)
    let mut tasksets: Vec<(f64, f64)> = json["threads"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| t["comm"] == "taskset")
        .map(|t| {
            let intervals = t["intervals"].as_array().expect("intervals");
            let first = number(&intervals[0]["start_ms"], "start_ms", &run);
            let last = number(&intervals[intervals.len() - 1]["end_ms"], "end_ms", &run);
            (first, last)
        })
        .collect();
    tasksets.sort_by(|a, b| a.0.total_cmp(&b.0));
    let moves: Vec<(f64, u64, u64)> = json["migrations"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["tid"] == busy["tid"])
        .map(|m| {
            (
                number(&m["time_ms"], "time_ms", &run),
                m["from_cpu"].as_u64().unwrap_or(99),
                m["to_cpu"].as_u64().unwrap_or(99),
            )
        })
        .filter(|m| tasksets.first().is_some_and(|t| m.0 > t.0))
        .collect();
    assert_eq!(
        (
            moves.iter().map(|m| (m.1, m.2)).collect::<Vec<_>>(),
            tasksets.len()
        ),
        (vec![(0, 1), (1, 0)], 2),
        "the busy loop's moves {moves:.1?}, the taskset runs {tasksets:.1?}\n{run}"
    );
    // Each move lands while its taskset runs, or just after it exits.
    for ((at, _, _), (first, last)) in moves.iter().zip(&tasksets) {
        assert!(
            *at >= *first && *at <= last + 10.0,
            "a move at {at:.1} ms, its taskset ran {first:.1}-{last:.1} ms\n{run}"
        );
    }
    let (on_0, on_1) = (ms_on(busy, 0), ms_on(busy, 1));
    // The schedule: CPU 1 from the first move to the second, CPU 0 the rest.
    let on_cpu = number(&busy["on_cpu_ms"], "on_cpu_ms", &run);
    let planned_1 = moves[1].0 - moves[0].0;
    let within = |value: f64, expected: f64| (value / expected - 1.0).abs() <= 0.05;
    assert!(
        within(on_1, planned_1) && within(on_0, on_cpu - planned_1),
        "busy loop on CPU 0 {on_0:.1} ms (schedule {:.1}), on CPU 1 {on_1:.1} ms ({planned_1:.1})\n{run}",
        on_cpu - planned_1
    );
    println!(
        "guest: observe taskset schedule: moves {moves:.1?} ms, tasksets {tasksets:.1?}; CPU 0 {on_0:.1} ms, CPU 1 {on_1:.1} ms"
    );
}

#[test]
#[ignore = "boots QEMU guests; .ci/run runs them"]
fn observe_follows_both_processes_of_a_pipeline() {
    // Two busy loops joined by a pipe: the left one prints when done, the
    // right one loops, then reads. Few context switches, so under TCG too
    // the records' own cost stays far below the 1 % bar.
    let busy = "i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done";
    let (run, json) = observe_script(
        &format!("sh -c '{busy}; echo left' | sh -c '{busy}; cat'"),
        0,
    );
    let total = number(&json["reconciliation"]["residency_ms"], "residency", &run);
    let pids: std::collections::BTreeSet<u64> = json["threads"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| t["on_cpu_ms"].as_f64().unwrap_or(0.0) > 0.3 * total)
        .filter_map(|t| t["pid"].as_u64())
        .collect();
    assert_eq!(
        pids.len(),
        2,
        "two busy processes, each over 30 % of {total:.1} ms\n{run}"
    );
    println!("guest: observe pipeline: two processes {pids:?}, {total:.1} ms on CPUs");
}

#[test]
#[ignore = "boots QEMU guests; .ci/run runs them"]
fn observe_two_busy_threads_on_a_slow_second_core() {
    let run = boot_with_a_slow_second_core(&[
        "observe",
        "--kernel",
        "mul",
        "--threads",
        "2",
        "--seconds",
        "2",
        "--interval",
        "500",
        "--json",
        "-",
    ]);
    run.assert_exit(0);
    let json = run.json();
    assert_eq!(json["valid"], true, "valid\n{run}");
    assert_eq!(
        json["classes"].as_array().map(Vec::len),
        Some(1),
        "one class\n{run}"
    );
    let shares: Vec<f64> = json["cpus"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| number(&c["share"], "share", &run))
        .collect();
    // Two busy threads, two vCPUs: each vCPU carries about half, however
    // slow its host makes it (the guest counts its stolen time as running).
    assert_eq!(shares.len(), 2, "{run}");
    assert!(
        shares.iter().all(|s| (s - 0.5).abs() < 0.1),
        "per-vCPU shares {shares:.3?}\n{run}"
    );
    let rows = json["timeline"].as_array().map_or(0, Vec::len);
    assert!((4..=5).contains(&rows), "timeline rows {rows}\n{run}");
    println!("guest: observe two threads, vCPU 1 at 46 %: per-vCPU shares {shares:.3?}");
}

/// Boots [`LATENCY`] on guest `smp` with `pin` until it reaches `verdict`
/// with exit `code`, and checks what every run must show: the control and
/// pinning passed, every pair measured, and the stacked pairs exactly the
/// vCPUs `pin` puts on one host CPU.
fn boot_latency(smp: &str, pin: &str, verdict: &str, code: i32, args: &[&str]) -> GuestRun {
    let guest = Guest::new();
    let run = boot_expecting(verdict, code, || guest.boot(smp, Some(pin), args));
    let json = run.json();
    assert_eq!(json["control_check"]["status"], "passed", "control\n{run}");
    // Pairs at once on stacked vCPUs may or may not disturb each other
    // (CI: PIN=0,0,1,1 agreed both ways); whichever it was, the map below
    // must be the placement.
    assert_eq!(json["pinning"]["status"], "passed", "pinning\n{run}");
    let effort = &json["effort"];
    let count = |field: &str| {
        effort[field]
            .as_u64()
            .unwrap_or_else(|| panic!("{field}\n{run}"))
    };
    assert_eq!(
        count("pairs_measured") + count("pairs_inferred"),
        count("all_pairs"),
        "pairs measured and inferred\n{run}"
    );
    let mut expected: Vec<[u32; 2]> = Vec::new();
    for group in groups_of_pin(pin) {
        for (i, &a) in group.iter().enumerate() {
            expected.extend(group[i + 1..].iter().map(|&b| [a, b]));
        }
    }
    expected.sort();
    let clusters = json["judgement"]["clusters"].as_array().unwrap();
    let stacked: Vec<[u32; 2]> = clusters
        .iter()
        .find(|c| c["class"] == "stacked")
        .map(|c| serde_json::from_value(c["pairs"].clone()).unwrap())
        .unwrap_or_default();
    assert_eq!(stacked, expected, "stacked pairs\n{run}");
    let smt = smt_level(&json);
    let measured: Vec<Vec<u32>> = serde_json::from_value(smt["map"]["measured"].clone()).unwrap();
    assert_eq!(measured, groups_of_pin(pin), "measured siblings\n{run}");
    println!(
        "guest: latency PIN={pin}: parallel check {}, {:.1} s measuring, bridges {} ({} not borne out), gap edges again {}, classes {}, gaps {}",
        json["parallel_check"]["status"]
            .as_str()
            .unwrap_or("not run"),
        json["effort"]["measuring_seconds"]
            .as_f64()
            .unwrap_or_default(),
        effort["bridges"],
        effort["bridges_not_borne_out"],
        effort["gap_edges_rechecked"],
        clusters
            .iter()
            .map(|c| format!("{}:{}..{} ns", c["class"], c["low_ns"], c["high_ns"]))
            .collect::<Vec<_>>()
            .join(" "),
        json["judgement"]["gaps"]
    );
    run
}

/// The thread-sibling level of a `latency` document.
fn smt_level(json: &serde_json::Value) -> &serde_json::Value {
    json["judgement"]["levels"]
        .as_array()
        .and_then(|levels| levels.iter().find(|l| l["level"] == "smt-siblings"))
        .unwrap_or_else(|| panic!("no smt-siblings level in {json}"))
}

/// The pairs of the thread-sibling level related as `relation`.
fn smt_pairs(json: &serde_json::Value, relation: &str) -> Vec<serde_json::Value> {
    let pairs = smt_level(json)["map"]["pairs"].as_array().unwrap();
    let related = pairs.iter().filter(|p| p["relation"] == relation);
    related.map(|p| p["cpus"].clone()).collect()
}

#[test]
#[ignore = "boots QEMU guests; .ci/run runs them"]
fn latency_finds_stacked_vcpus_agreed_where_guest_siblings_share_a_host_cpu() {
    let run = boot_latency(SMT_GUEST, SIBLINGS_SHARE_A_HOST_CPU, "agree", 0, LATENCY);
    let json = run.json();
    let agreed = smt_pairs(&json, "agreed");
    assert_eq!(
        agreed,
        [serde_json::json!([0, 1]), serde_json::json!([2, 3])]
    );
}

#[test]
#[ignore = "boots QEMU guests; .ci/run runs them"]
fn latency_finds_the_crossed_map_when_guest_siblings_are_on_separate_host_cpus() {
    let run = boot_latency(
        SMT_GUEST,
        SIBLINGS_ON_SEPARATE_HOST_CPUS,
        "differ",
        3,
        LATENCY,
    );
    let json = run.json();
    let (fake, hidden) = (smt_pairs(&json, "fake"), smt_pairs(&json, "hidden"));
    assert_eq!(fake, [serde_json::json!([0, 1]), serde_json::json!([2, 3])]);
    assert_eq!(
        hidden,
        [serde_json::json!([0, 2]), serde_json::json!([1, 3])]
    );
}

/// 10 vCPUs published as 10 cores, placed at random on the two host CPUs:
/// the stacked pairs are the placement. `LATENCY_PIN_10=…` replays a draw.
#[test]
#[ignore = "boots QEMU guests; .ci/run runs them"]
fn latency_finds_a_random_placement_of_ten_vcpus() {
    let pin = random_pin("LATENCY_PIN_10", 10);
    let (verdict, code) = verdict_on_ten_cores(&pin);
    boot_latency(
        "10,sockets=1,cores=10,threads=1",
        &pin,
        verdict,
        code,
        LATENCY,
    );
}

/// The same with `--one-per-domain`: fewer pairs measured, the same map.
/// `LATENCY_DOMAIN_PIN_10=…` replays a draw.
#[test]
#[ignore = "boots QEMU guests; .ci/run runs them"]
fn latency_one_per_domain_finds_a_random_placement_of_ten_vcpus() {
    let pin = random_pin("LATENCY_DOMAIN_PIN_10", 10);
    let (verdict, code) = verdict_on_ten_cores(&pin);
    let args = ["latency", "--json", "--one-per-domain"];
    let run = boot_latency(
        "10,sockets=1,cores=10,threads=1",
        &pin,
        verdict,
        code,
        &args,
    );
    let measured = run.json()["effort"]["pairs_measured"]
        .as_u64()
        .unwrap_or_default();
    assert!(measured < 45, "{measured} of 45 pairs measured\n{run}");
}

/// The verdict, and its exit status, on 10 vCPUs published as 10 cores and
/// placed by `pin`: differ wherever two share a host CPU.
fn verdict_on_ten_cores(pin: &str) -> (&'static str, i32) {
    if groups_of_pin(pin).iter().any(|g| g.len() > 1) {
        ("differ", 3)
    } else {
        ("agree", 0)
    }
}

/// Issue 42's real change: a sweep in [`NO_SMT_GUEST`] on host CPUs 0 and
/// 1 with no cap (`THROTTLE=100,100`) is the baseline; the same sweep with
/// vCPU 1 capped at 25 % (`THROTTLE=100,25`) is judged against it by
/// `report --baseline` on the host. Step 2 shares the work with the capped
/// vCPU (1/1.25 of the work per time instead of 1/2): about +60 %,
/// regressed. Step 1 runs on vCPU 0 alone, which nothing capped: the cap
/// adds nothing to it, so step 2's change lies beyond step 1's, interval
/// clear of interval. Step 1 itself compares two boots a minute apart on a
/// shared host, and the host moves it: +1.7 %, +28.7 %, +18.4 % and
/// −19.6 % in four runs, so its own verdict is the host's, not asserted.
/// The cap is that strong because the host's move applies to step 2 too:
/// with a 60 % cap (about +25 %), the run whose step 1 read −19.6 % read
/// step 2 at −0.1 %, unchanged, though within the capped boot step 2 ran
/// 1.57× step 1's speed against the uncapped boot's 1.93×.
#[test]
#[ignore = "boots QEMU guests; .ci/run runs them"]
fn a_capped_vcpu_regresses_the_step_that_uses_it_and_no_other() {
    let sweep = |throttle: &str| {
        let run = Guest::new().boot_throttled(NO_SMT_GUEST, "0,1", throttle, &sweep_args("12"));
        assert_eq!(run.exit_code, 0, "{run}");
        run.json()
    };
    let dir = tempfile::tempdir().unwrap();
    let save = |name: &str, json: &serde_json::Value| {
        let path = dir.path().join(name);
        std::fs::write(&path, serde_json::to_vec(json).unwrap()).unwrap();
        path
    };
    let old = save("uncapped.json", &sweep("100,100"));
    let new = save("capped.json", &sweep("100,25"));
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_placement-study"))
        .args(["report", "--baseline"])
        .args([&old, &new])
        .args(["--threshold", "10%", "--json"])
        .output()
        .expect("the binary runs");
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    let verdict = |row: &str| {
        report["judged"][0]["rows"]
            .as_array()
            .and_then(|rows| rows.iter().find(|r| r["row"] == row))
            .unwrap_or_else(|| panic!("no row {row}: {report:#}"))["verdict"]
            .clone()
    };
    eprintln!("{report:#}");
    assert_eq!(verdict("step 2"), "regressed", "{report:#}");
    let interval = |row: &str, end: &str| {
        report["judged"][0]["rows"]
            .as_array()
            .and_then(|rows| rows.iter().find(|r| r["row"] == row))
            .and_then(|r| r["ci95"][end].as_f64())
            .unwrap_or_else(|| panic!("no {end} of {row}: {report:#}"))
    };
    assert!(
        interval("step 2", "low") > interval("step 1", "high"),
        "the capped vCPU's step changed no more than the uncapped one's: {report:#}"
    );
    assert_eq!(output.status.code(), Some(7));
}

/// `memory` in a guest of two NUMA nodes whose SLIT publishes distance 21:
/// under TCG both nodes' memory is the same host memory, so every remote
/// latency is the local one, and the distance reads as fiction (exit 3).
/// The same guest's ladder reads QEMU's invented cache sizes as differing.
#[test]
#[ignore = "boots QEMU guests; .ci/run runs them"]
fn memory_reads_a_published_distance_of_21_as_fiction() {
    let run = Guest::new().boot_two_nodes(21, &["memory", "--json", "-"]);
    assert_eq!(run.exit_code, 3, "{run}");
    let result = run.json();
    let numa = &result["numa_judgement"];
    assert_eq!(numa["verdict"], "differ", "{run}");
    let reason = numa["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("distance 21 says ×2.1") && reason.contains("the distance is not measured"),
        "{reason}"
    );
    // Both nodes' buffers landed where they were placed.
    let columns = result["matrix"]["columns"].as_array().unwrap();
    assert_eq!(columns.len(), 2, "{run}");
    assert!(columns.iter().all(|c| c["landed"] == true), "{run}");
    // QEMU's CPU model publishes its own cache sizes, not the host's, and
    // a TCG guest's chase runs on the host's caches: the ladder differs,
    // naming the level no step bears out (QEMU's 4 MiB L2, where the
    // softmmu TLB leaves no step near it) or the host's step no level
    // explains (its 2 MiB L2, rising from 1.3 MiB). Three boots read
    // "fake: L2 (4 MiB) …; hidden: … 1.3 MiB and 3.2 MiB" once and
    // "hidden: … 1.3 MiB and 2.5 MiB" twice.
    let ladder = &result["ladder_judgement"];
    assert_eq!(ladder["verdict"], "differ", "{run}");
    let reason = ladder["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("fake: L") || reason.contains("hidden: a step between"),
        "{reason}"
    );
    let fake = ladder["levels"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|l| l["status"] == "fake");
    for level in fake {
        let named = format!("fake: L{} (", level["level"]);
        assert!(reason.contains(&named), "{reason}");
    }
}

/// `run --arms node:0,node:1 -- COMMAND` in a two-node guest: each arm
/// runs the command on its node's CPU, and says so.
#[test]
#[ignore = "boots QEMU guests; .ci/run runs them"]
fn run_arms_by_node_run_a_command_on_each_node() {
    let run = Guest::new().boot_two_nodes(
        21,
        &[
            "run",
            "--skip-gate",
            "--arms",
            "node:0,node:1",
            "--threads",
            "1",
            "--reps",
            "3",
            "--warmups",
            "1",
            "--json",
            "-",
            "--",
            "sh",
            "-c",
            "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done",
        ],
    );
    let result = run.json();
    // Under TCG a shell loop's wall time varies by tens of percent, so an
    // arm may miss its CV bar, which counts only with --strict; nothing
    // else may fail.
    let failed: Vec<&str> = result["checks"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["status"] == "failed")
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert!(
        failed.iter().all(|name| name.starts_with("cv-bar ")),
        "{failed:?}\n{run}"
    );
    assert_eq!(run.exit_code, 0, "{run}");
    for (arm, cpu) in [("node:0", 0), ("node:1", 1)] {
        let placement = result["plan"]["placements"]
            .as_array()
            .and_then(|p| p.iter().find(|p| p["arm"] == arm))
            .unwrap_or_else(|| panic!("no placement of {arm}\n{run}"));
        assert_eq!(placement["cpus"], serde_json::json!([cpu]), "{run}");
        let residency = residency(&result, arm, &run);
        assert_eq!(
            residency["held"], "passed",
            "{arm} stayed on node {cpu}'s CPU\n{run}"
        );
    }
}

/// `memory` in a guest of two sockets of two cores: QEMU publishes an L3
/// per socket (CPUs 0-1 and 2-3), but every vCPU is a host thread, and a
/// line passed between two of them meets in the host's caches wherever the
/// guest says their L3 is. Pinned so (vCPUs 0 and 3 on host CPU 0, 1 and 2
/// on host CPU 1) that the pair inside the published L3 (0, 1) and the
/// pair across its edge (0, 2) take the same path between two host CPUs,
/// the sharing must read as differing, never agreed; a boot whose pair was
/// time-sliced may say undecided, and boots again, up to three times.
/// Four boots read differs: inside against outside 197/196, 200/195,
/// 241/195 and 217/215 ns.
#[test]
#[ignore = "boots QEMU guests; .ci/run runs them"]
fn memory_reads_an_invented_l3_sharing_as_differing() {
    let mut undecided = Vec::new();
    for boot in 1..=3 {
        let run = Guest::new().boot(
            "4,sockets=2,cores=2,threads=1",
            Some("0,1,1,0"),
            &["memory", "--json", "-"],
        );
        let result = run.json();
        let levels = result["sharing"]["levels"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let l3 = levels
            .iter()
            .find(|level| level["level"] == 3)
            .unwrap_or_else(|| panic!("no L3 sharing planned\n{run}"));
        assert_eq!(l3["inside"], serde_json::json!([0, 1]), "{run}");
        assert_eq!(l3["outside"], serde_json::json!([0, 2]), "{run}");
        let reason = l3["reason"].as_str().unwrap_or_default().to_owned();
        match l3["status"].as_str() {
            Some("differs") => {
                assert_eq!(run.exit_code, 3, "{run}");
                assert_eq!(result["verdict"], "differ", "{run}");
                eprintln!(
                    "memory in the two-socket guest: L3 sharing differs: {reason} (boot \
                     {boot}; undecided before: {undecided:?})"
                );
                return;
            }
            Some("undecided") => undecided.push(reason),
            other => panic!("the invented L3 sharing read {other:?}: {reason}\n{run}"),
        }
    }
    eprintln!("memory in the two-socket guest: undecided on three boots: {undecided:#?}");
}

/// A guest of one node (QEMU publishes no SLIT, so the node's distance to
/// itself is the only one): the matrix agrees with what is published.
#[test]
#[ignore = "boots QEMU guests; .ci/run runs them"]
fn memory_of_one_node_agrees() {
    let run = Guest::new().boot(NO_SMT_GUEST, None, &["memory", "--json", "-"]);
    let result = run.json();
    assert_eq!(result["numa_judgement"]["verdict"], "agree", "{run}");
    assert_eq!(
        result["matrix"]["cells"].as_array().map(Vec::len),
        Some(1),
        "{run}"
    );
}
