//! The built binary on an Arm snapshot (`fixtures/sysfs/dgx-spark-gb10`),
//! end to end: the text view names the cores from their MIDR and says CPUID
//! is not part of the architecture; `--json` carries the same facts.

use serde_json::{Value, json};
use std::path::Path;
use std::process::{Command, Output};

const FIXTURE: &str = "fixtures/sysfs/dgx-spark-gb10";

fn topology(extra: &[&str]) -> Output {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE);
    let output = Command::new(env!("CARGO_BIN_EXE_placement-study"))
        .arg("topology")
        .arg("--sysfs-root")
        .arg(root)
        .args(extra)
        .output()
        .expect("the binary runs");
    assert_eq!(
        output.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

#[test]
fn topology_text_names_the_cores_and_the_missing_cpuid() {
    let text = String::from_utf8(topology(&[]).stdout).expect("UTF-8");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "ARM Cortex-X925 r0p1 ×10 + Cortex-A725 r0p1 ×10");
    for expected in [
        "  performance            CPUs 0-4,10-14    from cpu_capacity (capacity 1024, Cortex-X925)",
        "  efficiency             CPUs 5-9,15-19    from cpu_capacity (capacity 560, Cortex-A725)",
        "  cpuid           not part of aarch64 (CPU identity from MIDR_EL1)",
        "  midr            ARM Cortex-X925 r0p1 on CPUs 0-4,10-14 (0x410fd851)",
    ] {
        assert!(
            lines.contains(&expected),
            "no line {expected:?} in:\n{text}"
        );
    }
    assert!(!text.contains("unknown CPU"), "{text}");
}

#[test]
fn topology_json_records_the_midr_and_why_there_is_no_cpuid() {
    let document: Value = serde_json::from_slice(&topology(&["--json"]).stdout).expect("JSON");
    assert_eq!(document["source"]["cpuid"], Value::Null);
    assert_eq!(document["source"]["cpuid_absent"], "not part of aarch64");
    assert_eq!(document["cpuid"], Value::Null);
    let midr = &document["midr"];
    assert_eq!(midr["source"], "midr_el1");
    assert_eq!(midr["arch"], "aarch64");
    assert_eq!(
        midr["kinds"][1],
        json!({
            "cpus": [5, 6, 7, 8, 9, 15, 16, 17, 18, 19],
            "midr": "0x410fd871",
            "implementer": 0x41,
            "implementer_name": "ARM",
            "variant": 0,
            "architecture": 0xf,
            "part": 0xd87,
            "part_name": "Cortex-A725",
            "revision": 1,
            "name": "ARM Cortex-A725 r0p1"
        })
    );
    assert_eq!(
        document["environment"]["model_name"],
        "ARM Cortex-X925 r0p1 ×10 + Cortex-A725 r0p1 ×10"
    );
    assert_eq!(document["classes"][0]["source"], "cpu_capacity");
}
