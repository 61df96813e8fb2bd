
/// `latency --json` in a guest: few samples per pair (a stacked pair ends
/// after three samples at the bound anyway), so the ten-vCPU guest's 45
/// pairs stay quick under emulation.
const LATENCY: &[&str] = &["latency", "--json", "--samples", "20"];

/// Boots [`LATENCY`] on guest `smp` with `pin` until it reaches `verdict`
/// with exit `code`, and checks what every run must show: the control and
/// pinning passed, every pair measured, and the stacked pairs exactly the
/// vCPUs `pin` puts on one host CPU.
fn boot_latency(smp: &str, pin: &str, verdict: &str, code: i32) -> GuestRun {
    let guest = Guest::new();
    let run = boot_expecting(verdict, code, || guest.boot(smp, Some(pin), LATENCY));
    let json = run.json();
    assert_eq!(json["control_check"]["status"], "passed", "control\n{run}");
    assert_eq!(json["pinning"]["status"], "passed", "pinning\n{run}");
    assert_eq!(
        json["effort"]["pairs_measured"], json["effort"]["all_pairs"],
        "pairs measured\n{run}"
    );
    let expected: Vec<[u32; 2]> = groups_of_pin(pin)
        .iter()
        .flat_map(|group| {
            let group = group.clone();
            (0..group.len())
                .flat_map(move |i| (i + 1..group.len()).map(move |j| (i, j)))
                .map(move |(i, j)| [group[i], group[j]])
        })
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
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
        "guest: latency PIN={pin}: {:.1} s measuring, classes {}, gaps {}",
        json["effort"]["measuring_seconds"].as_f64().unwrap_or_default(),
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
    let run = boot_latency(SMT_GUEST, SIBLINGS_SHARE_A_HOST_CPU, "agree", 0);
    let json = run.json();
    let agreed = smt_pairs(&json, "agreed");
    assert_eq!(agreed, [serde_json::json!([0, 1]), serde_json::json!([2, 3])]);
}

#[test]
#[ignore = "boots QEMU guests; .ci/run runs them"]
fn latency_finds_the_crossed_map_when_guest_siblings_are_on_separate_host_cpus() {
    let run = boot_latency(SMT_GUEST, SIBLINGS_ON_SEPARATE_HOST_CPUS, "differ", 3);
    let json = run.json();
    let (fake, hidden) = (smt_pairs(&json, "fake"), smt_pairs(&json, "hidden"));
    assert_eq!(fake, [serde_json::json!([0, 1]), serde_json::json!([2, 3])]);
    assert_eq!(hidden, [serde_json::json!([0, 2]), serde_json::json!([1, 3])]);
}

/// 10 vCPUs published as 10 cores, placed at random on the two host CPUs:
/// the stacked pairs are the placement. `LATENCY_PIN_10=…` replays a draw.
#[test]
#[ignore = "boots QEMU guests; .ci/run runs them"]
fn latency_finds_a_random_placement_of_ten_vcpus() {
    let pin = random_pin("LATENCY_PIN_10", 10);
    let stacked_somewhere = groups_of_pin(&pin).iter().any(|g| g.len() > 1);
    let (verdict, code) = if stacked_somewhere {
        ("differ", 3)
    } else {
        ("agree", 0)
    };
    boot_latency("10,sockets=1,cores=10,threads=1", &pin, verdict, code);
}
