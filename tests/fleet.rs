//! `report --fleet` end to end, fed by real fleet engines from Debian that
//! drive "hosts" on this one machine.
//!
//! * **pdsh** with `-R exec` (the rcmd module that runs the command here,
//!   `%h` replaced by the host's name) runs `tests/fleet/guest-host` for
//!   three hosts, each a QEMU guest booted by `../shared/vm/boot-guest.sh`
//!   with another placement: one core of two threads on one host CPU
//!   (physical), the same core on two host CPUs (virtual), and two cores of
//!   one thread (no-smt). Each runs `gate --json-line -` with its threshold
//!   at 40 %, midway between the two placements' penalties (about +100 %
//!   and 0), so that a busy host cannot flip a verdict (the script says
//!   more); `-f 1` boots one guest at a time, since they are pinned to this
//!   machine's CPUs. A host whose gate is inconclusive boots its guest once
//!   more, saying why on stderr, so its line is the second boot's (a test
//!   that boots no guest checks that retry on recorded lines).
//! * **clush** with `--worker=exec` (ClusterShell's worker that runs the
//!   command here) runs `tests/fleet/snapshot-host` for hosts that are saved
//!   results in `fixtures/results/`, re-rendered on one line, and for one
//!   host whose line is cut off.
//!
//! * **Slurm** (slurm-wlm and munge): a one-node cluster on this machine
//!   runs the gate through `srun` and `sbatch --array`, and the man page's
//!   health check, copied from the page, under slurmd.
//! * **SSH**: five hosts, each a network namespace with its own address,
//!   host key and sshd, reached by pdsh's ssh module, clush and the man
//!   page's Ansible recipe with a generated key: hosts that answer, one
//!   left on an older version, one whose sshd is stopped, one that hangs.
//!
//! Both engines prefix each line a host prints with `HOST: `, and the
//! report must count the hosts right: by verdict, CPU model and hypervisor,
//! with the outliers, the missing host and the broken one named.
//!
//! These tests are `#[ignore]`d (they need the engines, root for the
//! namespaces and daemons, and the pdsh fleet boots guests); `.ci/run`
//! installs the engines and runs them with `cargo test --test fleet --
//! --ignored --test-threads=1 --nocapture`. Their daemons run at idle
//! priority and are stopped when each test ends, also when it fails.

#[allow(
    dead_code,
    reason = "the guest tests' harness; this file needs only its boot script and binary"
)]
mod support;

use serde_json::Value;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;
use support::Guest;

/// The product, as built for this test (the host side of the fleet).
const PLACEMENT_STUDY: &str = env!("CARGO_BIN_EXE_placement-study");
/// pdsh's per-host command: boots the guest named by its last argument.
const GUEST_HOST: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fleet/guest-host");
/// clush's per-host command: re-renders the saved result named after the host.
const SNAPSHOT_HOST: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fleet/snapshot-host");

/// What guest-host says on stderr when an inconclusive gate boots its
/// guest once more.
const GUEST_HOST_RETRIED: &str = "booting once more";

/// The CPU model every QEMU TCG guest reports.
const TCG_MODEL: &str = "QEMU TCG CPU version 2.5+";

#[test]
#[ignore = "needs pdsh and boots QEMU guests; .ci/run runs it"]
fn pdsh_fleet_of_guests_is_counted_by_verdict() {
    let guest = Guest::new();
    let binary = support::static_binary();
    let pdsh = Engine::run(
        Command::new("pdsh")
            .args(["-R", "exec", "-f", "1", "-w", "physical,virtual,nosmt"])
            .arg("bash")
            .args([Path::new(GUEST_HOST), &guest.boot_script, binary])
            .arg("%h"),
    );
    assert_eq!(pdsh.stdout.lines().count(), 3, "one line per guest\n{pdsh}");
    // Shown whole: the stderr shown above is cut short.
    for retry in pdsh
        .stderr
        .lines()
        .filter(|l| l.contains(GUEST_HOST_RETRIED))
    {
        println!("fleet: {retry}");
    }

    let hosts = "--hosts=physical,virtual,nosmt,ghost";
    let report = counted_report(
        "pdsh",
        &pdsh.stdout,
        hosts,
        "4 hosts: 3 with a result, 0 broken, 1 missing",
        "Missing (1): ghost",
    );
    for verdict in ["physical", "virtual", "no-smt"] {
        assert_row(&report, &["gate", verdict, "1", "0"]);
    }
    assert_row(&report, &[TCG_MODEL, "3"]);

    let rows = fleet_rows(&pdsh.stdout, &[hosts]);
    let expected = [
        ("ghost", "missing", None),
        ("nosmt", "ok", Some("no-smt")),
        ("physical", "ok", Some("physical")),
        ("virtual", "ok", Some("virtual")),
    ];
    assert_eq!(
        rows.len(),
        expected.len(),
        "one JSON line per host\n{rows:#?}"
    );
    for (host, status, verdict) in expected {
        let row = &rows[host];
        assert_eq!(row["status"], status, "{host}'s status\n{row:#}");
        if let Some(verdict) = verdict {
            assert_eq!(row["kind"], "gate", "{host}'s kind\n{row:#}");
            assert_eq!(row["verdict"], verdict, "{host}'s verdict\n{row:#}");
            assert_eq!(row["model"], TCG_MODEL, "{host}'s model\n{row:#}");
            assert_eq!(
                row["hypervisor"], rows["physical"]["hypervisor"],
                "one hypervisor\n{row:#}"
            );
            assert_penalty(row, verdict);
        }
    }
    assert_row(&report, &[label(&rows["physical"]["hypervisor"]), "3"]);

    // `2>&1`: pdsh's own lines ("pdsh@head: virtual: bash exited with exit
    // code 3") and each host's stderr (boot-guest.sh's) change nothing.
    let merged = format!("{}{}", pdsh.stdout, pdsh.stderr);
    let verdicts = |rows: &BTreeMap<String, Value>| -> Vec<String> {
        rows.values()
            .map(|row| row["verdict"].to_string())
            .collect()
    };
    assert_eq!(
        verdicts(&fleet_rows(&merged, &[hosts])),
        verdicts(&rows),
        "pdsh's stdout and stderr together\n{merged}"
    );
}

#[test]
#[ignore = "needs ClusterShell's clush; .ci/run runs it"]
fn clush_fleet_of_saved_results_names_outliers_and_broken_hosts() {
    let snapshots = [
        "pairs-guest-crossed-siblings",
        "pairs-guest-hidden-siblings",
        "hybrid-guest-slow-second-core",
        "observe-kernel-vm",
    ];
    let hosts = format!("{},truncated", snapshots.join(","));
    // The exec worker hands the command to a shell, arguments joined by spaces.
    let clush = Engine::run(
        Command::new("clush")
            .args(["--worker=exec", "--nostdin", "-w", &hosts])
            .arg(format!("bash '{SNAPSHOT_HOST}' '{PLACEMENT_STUDY}' %h")),
    );
    assert_eq!(
        clush.stdout.lines().count(),
        5,
        "one line per host\n{clush}"
    );

    let hosts_option = format!("--hosts={hosts}");
    let report = fleet_report(&clush.stdout, &[&hosts_option]);
    println!("fleet: report --fleet --hosts=... - <clush's stdout:\n{report}");
    assert!(
        report.contains("5 hosts: 4 with a result, 1 broken, 0 missing"),
        "{report}"
    );
    assert_row(&report, &["pairs map", "differ", "2", "2"]);
    // Flagged for its repetitions' spread (failed CV bars), not its maps.
    assert_row(&report, &["hybrid classes", "differ", "1", "1"]);
    assert_row(&report, &["observe", "reconciled", "1"]);
    assert_row(&report, &[TCG_MODEL, "3"]);
    assert_row(&report, &["Intel(R) Xeon(R) Processor", "1"]);

    let rows = fleet_rows(&clush.stdout, &[&hosts_option]);
    assert_eq!(rows.len(), 5, "one JSON line per host\n{rows:#?}");
    for host in snapshots {
        let row = &rows[host];
        let saved = saved_result(host);
        assert_eq!(row["status"], "ok", "{host}'s status\n{row:#}");
        assert_eq!(row["kind"], saved["kind"], "{host}'s kind\n{row:#}");
        assert_eq!(row["model"], saved["model"], "{host}'s model\n{row:#}");
        let maps_differ = row["outliers"].as_array().is_some_and(|why| {
            why.iter().any(|w| {
                w.as_str()
                    .is_some_and(|w| w.starts_with("sibling maps differ"))
            })
        });
        assert_eq!(
            maps_differ,
            host.starts_with("pairs-"),
            "{host}: only the pairs hosts' published and measured maps differ\n{row:#}"
        );
    }
    // Hosts are counted by the hypervisor their results name: the three
    // TCG guests' and the KVM host's, told apart.
    let tcg = label(&rows["pairs-guest-crossed-siblings"]["hypervisor"]);
    let kvm = label(&rows["observe-kernel-vm"]["hypervisor"]);
    assert_ne!(tcg, kvm, "TCG and KVM share a label\n{report}");
    for host in [
        "pairs-guest-hidden-siblings",
        "hybrid-guest-slow-second-core",
    ] {
        assert_eq!(label(&rows[host]["hypervisor"]), tcg, "{host}'s hypervisor");
    }
    assert_row(&report, &[tcg, "3"]);
    assert_row(&report, &[kvm, "1"]);

    let truncated = &rows["truncated"];
    assert_eq!(truncated["status"], "broken", "{truncated:#}");
    assert!(
        report.contains("Broken (1)\n  truncated: "),
        "the broken host is named\n{report}"
    );
}

/// guest-host's one retry, with a stand-in for boot-guest.sh that replays
/// recorded consoles, no guest booted: an inconclusive gate (exit 5) boots
/// once more, saying why on stderr, and the host's line and status are the
/// second boot's; a second inconclusive gate, a wrong verdict or a timeout
/// is final.
#[test]
fn guest_host_boots_once_more_only_after_an_inconclusive_gate() {
    let decided = recorded_gate_line();
    let inconclusive = with_a_failed_control(&decided);
    let failed = (inconclusive.as_str(), 5);
    let virtual_gate = (decided.as_str(), 3);

    let host = GuestHostReplay::run("virtual", &[failed, virtual_gate]);
    assert_eq!((host.boots, host.status), (2, Some(3)), "{host}");
    assert_eq!(host.stdout, format!("{decided}\n"), "{host}");
    let why = host
        .stderr
        .lines()
        .find(|line| line.contains(GUEST_HOST_RETRIED))
        .unwrap_or_else(|| panic!("no retry line\n{host}"));
    assert!(
        why.starts_with(
            "guest-host: virtual: gate inconclusive (exit 5; control failed; \"two workers"
        ) && why.contains("the same-CPU control failed: the control CPU was not"),
        "{why}"
    );

    let host = GuestHostReplay::run("virtual", &[failed, failed, virtual_gate]);
    assert_eq!((host.boots, host.status), (2, Some(5)), "{host}");
    assert_eq!(host.stdout, format!("{inconclusive}\n"), "{host}");

    // Virtual where physical belongs: wrong, and never retried.
    let host = GuestHostReplay::run("physical", &[virtual_gate, virtual_gate]);
    assert_eq!((host.boots, host.status), (1, Some(3)), "{host}");
    assert!(!host.stderr.contains(GUEST_HOST_RETRIED), "{host}");

    let host = GuestHostReplay::run("virtual", &[("boot-guest: TIMEOUT", 124), virtual_gate]);
    assert_eq!((host.boots, host.status), (1, Some(124)), "{host}");
    assert!(host.stderr.contains("printed no JSON line"), "{host}");
}

/// The virtual one-core guest's real gate line (as `report --json-line`
/// re-renders fixtures/results/gate-guest-one-core-split.json).
fn recorded_gate_line() -> String {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/results/gate-guest-one-core-split.json");
    let output = Command::new(PLACEMENT_STUDY)
        .arg("report")
        .arg(&fixture)
        .arg("--json-line=-")
        .output()
        .unwrap_or_else(|error| panic!("cannot run {PLACEMENT_STUDY}: {error}"));
    assert!(output.status.success(), "report {}", fixture.display());
    String::from_utf8_lossy(&output.stdout)
        .trim_end()
        .to_owned()
}

/// `line` as the flake that turned `.ci/run` red printed it: the same-CPU
/// control failed (`judge::gate::control_check`'s words), so the gate
/// said inconclusive and its sentence says why.
fn with_a_failed_control(line: &str) -> String {
    let document: Value = serde_json::from_str(line).expect("a gate line");
    let detail = "the control CPU was not the workers' alone: both workers on one CPU cost \
        3.12× what one worker costs alone there (TSC ticks per byte, medians of 5 and 5 \
        repetitions; expected about 2×, accepted 1.4–2.8): something else ran there or their \
        buffers evicted each other";
    let sentence = document["sentence"].as_str().expect("a sentence");
    let (measured, _) = sentence.split_once(": placement is").expect("a verdict");
    let inconclusive = format!(
        "{measured}: inconclusive: the interval straddles the threshold; raise --max-reps, \
         lengthen --rep-ms, or quiet the machine (stop other load, pin the governor); the \
         same-CPU control failed: {detail}"
    );
    let json = |value: &Value| value.to_string();
    let replaced = [
        (
            r#""verdict":"virtual""#.to_owned(),
            r#""verdict":"inconclusive""#.to_owned(),
        ),
        (
            json(&document["sentence"]),
            json(&Value::from(inconclusive)),
        ),
        (
            format!(
                r#""status":"passed","detail":{}"#,
                json(&document["control"]["detail"])
            ),
            format!(
                r#""status":"failed","detail":{}"#,
                json(&Value::from(detail))
            ),
        ),
    ];
    let mut line = line.to_owned();
    for (from, to) in replaced {
        assert_eq!(line.matches(&from).count(), 1, "{from} once in {line}");
        line = line.replace(&from, &to);
    }
    line
}

/// One run of guest-host against a stand-in boot-guest.sh that replays a
/// console and status per boot.
struct GuestHostReplay {
    boots: usize,
    status: Option<i32>,
    stdout: String,
    stderr: String,
}

/// The stand-in: boot N prints `console-N` and exits with `status-N`.
const REPLAYING_BOOT_GUEST: &str = r#"dir=$(dirname "$0")
n=$(( $(cat "$dir/boots") + 1 ))
echo "$n" > "$dir/boots"
cat "$dir/console-$n" && exit "$(cat "$dir/status-$n")"
"#;

impl GuestHostReplay {
    /// guest-host for `host`, boot N replaying `boots[N - 1]`: a document
    /// line (or any console) and boot-guest.sh's status.
    fn run(host: &str, boots: &[(&str, i32)]) -> GuestHostReplay {
        let folder = tempfile::tempdir().expect("a temporary folder");
        let file = |name: &str, text: &str| {
            let path = folder.path().join(name);
            std::fs::write(&path, text)
                .unwrap_or_else(|error| panic!("cannot write {}: {error}", path.display()));
            path
        };
        let boot_guest = file("boot-guest.sh", REPLAYING_BOOT_GUEST);
        file("boots", "0");
        for (boot, (console, status)) in boots.iter().enumerate() {
            let n = boot + 1;
            // As the guest console shows it: the progress line redrawn, then
            // the document, then boot-guest.sh's EXIT line.
            let console =
                format!("\x1b[2Kgate: rep 3/15 {{siblings}}\x1b[2K{console}\nEXIT={status}\n");
            file(&format!("console-{n}"), &console);
            file(&format!("status-{n}"), &status.to_string());
        }
        let output = Command::new("bash")
            .arg(GUEST_HOST)
            .arg(&boot_guest)
            .arg(PLACEMENT_STUDY)
            .arg(host)
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|error| panic!("cannot run bash {GUEST_HOST}: {error}"));
        let boots = std::fs::read_to_string(folder.path().join("boots")).expect("the boot count");
        GuestHostReplay {
            boots: boots.trim().parse().expect("a boot count"),
            status: output.status.code(),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }
}

impl std::fmt::Display for GuestHostReplay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "--- guest-host: {} boots, exit {:?}\n--- stdout:\n{}--- stderr:\n{}",
            self.boots, self.status, self.stdout, self.stderr
        )
    }
}

/// Panics unless a gate `row` of the pdsh fleet carries its penalty as its
/// `verdict` implies: none for no-smt; else the paired estimate inside its
/// 95 % interval, from at least 3 repetitions per arm, the clock named,
/// the guests' 40 % threshold, and no doubt (a gate cut short or with a
/// failed control says inconclusive).
fn assert_penalty(row: &Value, verdict: &str) {
    if verdict == "no-smt" {
        for field in ["penalty", "penalty_ci95", "penalty_reps", "penalty_clock"] {
            assert!(row[field].is_null(), "no-smt has no {field}\n{row:#}");
        }
        return;
    }
    let number = |value: &Value| {
        value
            .as_f64()
            .unwrap_or_else(|| panic!("not a number: {value}\n{row:#}"))
    };
    let penalty = number(&row["penalty"]);
    let (low, high) = (
        number(&row["penalty_ci95"]["low"]),
        number(&row["penalty_ci95"]["high"]),
    );
    assert!(
        low <= penalty && penalty <= high,
        "the penalty inside its interval\n{row:#}"
    );
    assert!(
        row["penalty_reps"].as_u64().is_some_and(|n| n >= 3),
        "repetitions per arm\n{row:#}"
    );
    assert!(row["penalty_clock"].is_string(), "the clock\n{row:#}");
    assert!(
        (number(&row["penalty_threshold"]) - 0.40).abs() < 1e-9,
        "guest-host's --threshold 40%\n{row:#}"
    );
    assert_eq!(
        row["penalty_doubts"],
        Value::Array(Vec::new()),
        "a decided gate has no doubt\n{row:#}"
    );
}

/// Lines of an engine's stderr shown: all of pdsh's and boot-guest.sh's
/// diagnostics; clush's hosts print their human views there, hundreds of
/// lines.
const STDERR_LINES_SHOWN: usize = 24;

/// A fleet engine's run: the command and what it printed.
struct Engine {
    command: String,
    stdout: String,
    stderr: String,
}

impl Engine {
    /// Runs `command` (stdin closed: clush would forward it to every host)
    /// and prints its output, so that a CI log shows what the engine did.
    fn run(command: &mut Command) -> Engine {
        let program = command.get_program().to_string_lossy().into_owned();
        let shown = format!("{command:?}");
        let started = Instant::now();
        let output = command
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|error| {
                panic!(
                    "cannot run {program}: {error} (Debian's pdsh and clustershell packages; .ci/run installs them)"
                )
            });
        let engine = Engine {
            command: shown,
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        };
        println!(
            "fleet: {program} exited {} in {:.1} s\n{}",
            output.status,
            started.elapsed().as_secs_f64(),
            engine.abridged()
        );
        engine
    }

    /// The output with each line cut to its first 120 characters (a
    /// gate's line holds every raw sample), and stderr to its first
    /// [`STDERR_LINES_SHOWN`] lines.
    fn abridged(&self) -> String {
        let cut = |text: &str, most: usize| -> String {
            let mut shown: String = text
                .lines()
                .take(most)
                .map(|line| match line.char_indices().nth(120) {
                    Some((end, _)) => format!("{}…\n", &line[..end]),
                    None => format!("{line}\n"),
                })
                .collect();
            let more = text.lines().count().saturating_sub(most);
            if more > 0 {
                shown.push_str(&format!("… {more} more lines\n"));
            }
            shown
        };
        format!(
            "--- stdout:\n{}--- stderr:\n{}",
            cut(&self.stdout, usize::MAX),
            cut(&self.stderr, STDERR_LINES_SHOWN)
        )
    }
}

impl std::fmt::Display for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "--- {}\n{}", self.command, self.abridged())
    }
}

/// `report --fleet HOSTS -` of an `engine`'s standard output, shown: it
/// must hold the `counts` line and the `missing` one.
fn counted_report(engine: &str, stdout: &str, hosts: &str, counts: &str, missing: &str) -> String {
    let report = fleet_report(stdout, &[hosts]);
    println!("fleet: report --fleet {hosts} - <{engine}'s stdout:\n{report}");
    assert!(report.contains(counts), "{report}");
    assert!(report.contains(missing), "{report}");
    report
}

/// `placement-study report --fleet ARGS -` with `input` on standard input:
/// its standard output, after checking it exited 0.
fn fleet_report(input: &str, args: &[&str]) -> String {
    report_fleet(args, &[Path::new("-")], input)
}

/// `placement-study report --fleet ARGS FILES` with `input` on standard
/// input: its standard output, after checking it exited 0.
fn report_fleet(args: &[&str], files: &[&Path], input: &str) -> String {
    let mut child = Command::new(PLACEMENT_STUDY)
        .args(["report", "--fleet"])
        .args(files)
        // After the files: a word after a bare --json would be its file.
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|error| panic!("cannot run {PLACEMENT_STUDY}: {error}"));
    let mut stdin = child.stdin.take().expect("a piped stdin");
    // From a thread: a report that wrote before reading all of its input
    // would otherwise deadlock against this write.
    let input = input.to_owned();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let output = child.wait_with_output().expect("the report's output");
    writer
        .join()
        .expect("the stdin writer")
        .expect("writing the report's stdin");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "report --fleet {} exited {}\n--- stdout:\n{stdout}--- stderr:\n{}",
        args.join(" "),
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

/// `report --fleet ARGS --json -` of `input`, by host.
fn fleet_rows(input: &str, args: &[&str]) -> BTreeMap<String, Value> {
    let args = [args, &["--json"]].concat();
    by_host(&fleet_report(input, &args))
}

/// `report --fleet --json`'s lines, by host; each host here has one row.
fn by_host(json: &str) -> BTreeMap<String, Value> {
    let mut rows = BTreeMap::new();
    for line in json.lines() {
        let row: Value = serde_json::from_str(line)
            .unwrap_or_else(|error| panic!("not a JSON line ({error}): {line}"));
        let host = row["host"].as_str().expect("a host name").to_owned();
        assert!(rows.insert(host, row).is_none(), "a host twice\n{json}");
    }
    rows
}

/// Panics, showing the report, unless one of its table rows starts with
/// `cells` (a row's cells are between its `│`s).
fn assert_row(report: &str, cells: &[&str]) {
    let found = report.lines().any(|line| {
        let row: Vec<&str> = line
            .split('│')
            .map(str::trim)
            .filter(|cell| !cell.is_empty())
            .collect();
        row.starts_with(cells)
    });
    assert!(found, "no table row starting {cells:?}\n{report}");
}

/// A row's hypervisor label.
fn label(hypervisor: &Value) -> &str {
    hypervisor
        .as_str()
        .unwrap_or_else(|| panic!("no hypervisor label: {hypervisor}"))
}

/// The saved result a clush host re-renders.
fn saved_result(host: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("fixtures/results/{host}.json"));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("cannot read {}: {error}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

/// The man page's Slurm recipes, run under a one-node cluster on this
/// machine (`slurmctld`, `slurmd` and `munged` with a generated
/// `slurm.conf` and key in a temporary folder, stopped at the end, also on
/// failure): `srun` and an `sbatch --array` job run `gate --json-line -`
/// for `report --fleet`; then the documented health check, taken from the
/// man page as it stands, runs under slurmd every 2 s. Its verdict policy
/// (the man page's `expected-verdict` file) first agrees with the gate,
/// and the node stays up; then it says physical, and slurmd's run of the
/// check drains the node with the recipe's reason.
///
/// The check's `placement-study` is the gate on a `--sysfs-root` snapshot
/// of a 2-vCPU KVM guest without SMT (the recipe's PATH names the folder
/// of that stand-in first): no-smt on any machine, at once, and never a
/// measurement every 2 s. Its `scontrol` is the real one, told where the
/// generated `slurm.conf` is.
#[test]
#[ignore = "needs slurm-wlm and munge, and root; .ci/run runs it"]
fn slurm_runs_the_gate_and_its_health_check_drains_a_node_whose_verdict_is_wrong() {
    let folder = tempfile::tempdir().expect("a temporary folder");
    let dir = folder.path();
    let cluster = SlurmCluster::start(dir);
    let node = cluster.node.as_str();
    let hosts = format!("--hosts={node}");

    let srun = Engine::run(
        cluster
            .client("srun")
            .args(["--exclusive", "-w", node, "--ntasks-per-node=1"])
            .args([PLACEMENT_STUDY, "gate", "--json-line", "-"]),
    );
    let report = fleet_report(&srun.stdout, &[&hosts]);
    println!("fleet: report --fleet {hosts} - <srun's stdout:\n{report}");
    assert!(
        report.contains("1 host: 1 with a result, 0 broken, 0 missing"),
        "{report}"
    );
    let rows = fleet_rows(&srun.stdout, &[&hosts]);
    assert_eq!(rows[node]["kind"], "gate", "{rows:#?}");

    let gate_folder = dir.join("gate");
    std::fs::create_dir(&gate_folder).expect("the array's folder");
    let output = gate_folder.join("%a.out");
    let sbatch = Engine::run(
        cluster
            .client("sbatch")
            .args(["--wait", "--array=1-2", "--exclusive", "-o"])
            .arg(&output)
            .arg("--wrap")
            .arg(format!("{PLACEMENT_STUDY} gate --json-line -")),
    );
    assert!(sbatch.stdout.starts_with("Submitted batch job"), "{sbatch}");
    let files = report_fleet(&[&hosts, "--json"], &[&gate_folder], "");
    println!("fleet: report --fleet {hosts} --json gate/:\n{files}");
    let row: Value = serde_json::from_str(files.trim()).expect("one JSON line");
    assert_eq!(row["host"], node, "{row:#}");
    assert_eq!(row["status"], "ok", "{row:#}");
    // Both tasks ran on the one node: the later gate is kept.
    assert_eq!(row["notes"][0], "replaced 1 earlier", "{row:#}");

    cluster.set_policy("no-smt");
    // The second run starts after the first one ended, drain or not.
    cluster.wait_for_health_checks(2);
    let up = cluster.show_node();
    assert!(
        up.contains("State=IDLE ") && !up.contains("DRAIN"),
        "a good verdict leaves the node up\n{up}"
    );
    cluster.set_policy("physical");
    cluster.wait_for_health_checks(1);
    let drained = wait_for(30, "the node drained", || {
        let node = cluster.show_node();
        (node.contains("DRAIN"), node)
    });
    println!("fleet: scontrol show node {node} after a wrong verdict:\n{drained}");
    assert!(drained.contains("State=IDLE+DRAIN "), "{drained}");
    assert!(
        drained.contains("Reason=placement-study gate: no-smt (exit 4), expected physical"),
        "the recipe's reason\n{drained}"
    );
}

/// The `--sysfs-root` snapshot the stand-in gates of the Slurm and SSH
/// fleets read: a 2-vCPU KVM guest without SMT, so that the gate says
/// no-smt at once on any machine.
const NO_SMT_SNAPSHOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/sysfs/kvm-guest-2cpu");

/// Daemons and network namespaces a test started, stopped and deleted
/// when dropped (also when the test panics), so that none outlives it.
#[derive(Default)]
struct Started {
    daemons: Vec<(String, std::process::Child)>,
    namespaces: Vec<String>,
}

impl Started {
    /// Starts `command` (with its arguments) at idle priority (SCHED_IDLE,
    /// nice 19: it never takes a CPU from timed tests sharing the machine),
    /// its output in `log`; `name` is the name `stop` knows it by.
    fn daemon(&mut self, name: &str, log: &Path, command: &[String]) {
        let log_file = std::fs::File::create(log)
            .unwrap_or_else(|error| panic!("cannot create {}: {error}", log.display()));
        let child = Command::new("chrt")
            .args(["-i", "0", "nice", "-n", "19"])
            .args(command)
            .stdin(Stdio::null())
            .stdout(log_file.try_clone().expect("the log, twice"))
            .stderr(log_file)
            .spawn()
            .unwrap_or_else(|error| panic!("cannot start {name}: {error}"));
        self.daemons.push((name.to_owned(), child));
    }

    /// Stops the daemon `name`, now.
    fn stop(&mut self, name: &str) {
        let at = self
            .daemons
            .iter()
            .position(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("no daemon {name}"));
        let (_, mut child) = self.daemons.remove(at);
        stop_child(&mut child);
    }
}

/// Kills `child` and reaps it.
fn stop_child(child: &mut std::process::Child) {
    let _ = child.kill();
    let _ = child.wait();
}

impl Drop for Started {
    fn drop(&mut self) {
        for (_, child) in self.daemons.iter_mut().rev() {
            stop_child(child);
        }
        for namespace in &self.namespaces {
            // What a session left running there (the hung host's command).
            if let Ok(pids) = Command::new("ip")
                .args(["netns", "pids", namespace])
                .output()
            {
                for pid in String::from_utf8_lossy(&pids.stdout).split_whitespace() {
                    let _ = Command::new("kill").args(["-KILL", pid]).status();
                }
            }
            let _ = Command::new("ip")
                .args(["netns", "delete", namespace])
                .status();
        }
    }
}

/// Polls `done` every 200 ms for at most `seconds`; panics with `what`
/// and the last answer when it never holds.
fn wait_for(seconds: u64, what: &str, mut done: impl FnMut() -> (bool, String)) -> String {
    let deadline = Instant::now() + std::time::Duration::from_secs(seconds);
    loop {
        let (ok, answer) = done();
        if ok {
            return answer;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: not after {seconds} s\n{answer}"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

/// A file of `text`, made executable when `mode` says so.
fn write_file(path: &Path, text: &str, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text)
        .unwrap_or_else(|error| panic!("cannot write {}: {error}", path.display()));
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .unwrap_or_else(|error| panic!("cannot chmod {}: {error}", path.display()));
}

/// The text of the man page's example that follows the line `anchor`
/// (its first `.nf` ... `.fi` block after it), as a reader copies it.
fn man_page_example(anchor: &str) -> String {
    let page = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/man/placement-study.1"
    ))
    .expect("the man page");
    let lines: Vec<&str> = page.lines().collect();
    let at = lines
        .iter()
        .position(|line| *line == anchor)
        .unwrap_or_else(|| panic!("no line {anchor:?} in the man page"));
    let start = at + lines[at..].iter().position(|l| *l == ".nf").expect(".nf") + 1;
    let end = start
        + lines[start..]
            .iter()
            .position(|l| *l == ".fi")
            .expect(".fi");
    lines[start..end]
        .iter()
        .map(|line| line.replace("\\-", "-").replace("\\e", "\\") + "\n")
        .collect()
}

/// `text` with `from` replaced by `to`, which it must hold once.
fn replaced_once(text: &str, from: &str, to: &str) -> String {
    assert_eq!(text.matches(from).count(), 1, "{from:?} once in\n{text}");
    text.replace(from, to)
}

/// A one-node Slurm cluster on this machine, stopped when dropped.
struct SlurmCluster {
    /// This machine's name, as `slurmd -C` gives it: the node.
    node: String,
    conf: std::path::PathBuf,
    policy: std::path::PathBuf,
    /// One line per run of the health check's gate.
    gate_runs: std::path::PathBuf,
    /// munged, slurmctld and slurmd: held for its `Drop`, which stops them.
    _daemons: Started,
}

impl SlurmCluster {
    fn start(dir: &Path) -> SlurmCluster {
        let probed = Command::new("slurmd")
            .arg("-C")
            .output()
            .unwrap_or_else(|error| {
                panic!("cannot run slurmd -C: {error} (Debian's slurm-wlm; .ci/run installs it)")
            });
        let node_line = String::from_utf8_lossy(&probed.stdout)
            .lines()
            .next()
            .expect("slurmd -C's NodeName line")
            .to_owned();
        let node = node_line
            .split_whitespace()
            .next()
            .and_then(|field| field.strip_prefix("NodeName="))
            .unwrap_or_else(|| panic!("no NodeName in {node_line:?}"))
            .to_owned();

        let key = dir.join("munge.key");
        let mut bytes = [0u8; 1024];
        std::io::Read::read_exact(
            &mut std::fs::File::open("/dev/urandom").expect("/dev/urandom"),
            &mut bytes,
        )
        .expect("random bytes");
        std::fs::write(&key, bytes).expect("the munge key");
        // munged refuses a key others can read.
        std::fs::set_permissions(&key, std::os::unix::fs::PermissionsExt::from_mode(0o600))
            .expect("the munge key's mode");

        let bin = dir.join("bin");
        std::fs::create_dir(&bin).expect("the health check's PATH folder");
        let conf = dir.join("slurm.conf");
        let gate_runs = dir.join("gate-runs");
        write_file(
            &bin.join("placement-study"),
            &format!(
                "#!/bin/sh\necho \"$*\" >> '{}'\nexec '{PLACEMENT_STUDY}' \"$@\" --sysfs-root '{NO_SMT_SNAPSHOT}'\n",
                gate_runs.display()
            ),
            0o755,
        );
        write_file(
            &bin.join("scontrol"),
            &format!(
                "#!/bin/sh\nSLURM_CONF='{}' exec /usr/bin/scontrol \"$@\"\n",
                conf.display()
            ),
            0o755,
        );
        let policy = dir.join("expected-verdict");
        std::fs::write(&policy, "no-smt\n").expect("the verdict policy");
        let health = dir.join("placement-health");
        let recipe = man_page_example(".B /etc/placement-study/expected-verdict");
        let recipe = replaced_once(
            &recipe,
            "PATH=/usr/local/bin:/usr/bin:/bin",
            &format!("PATH={}:/usr/local/bin:/usr/bin:/bin", bin.display()),
        );
        let recipe = replaced_once(
            &recipe,
            "/etc/placement-study/expected-verdict",
            &policy.display().to_string(),
        );
        write_file(&health, &recipe, 0o755);
        let health_conf = man_page_example(".BR slurm.conf :");
        let health_conf = replaced_once(
            &health_conf,
            "/usr/local/sbin/placement-health",
            &health.display().to_string(),
        );
        let health_conf = replaced_once(
            &health_conf,
            "HealthCheckInterval=3600",
            "HealthCheckInterval=2",
        );

        for folder in ["state", "spool"] {
            std::fs::create_dir(dir.join(folder)).expect("a Slurm folder");
        }
        let d = dir.display();
        write_file(
            &conf,
            &format!(
                "ClusterName=placement\n\
                 SlurmctldHost={node}(127.0.0.1)\n\
                 SlurmctldPort=16817\n\
                 SlurmdPort=16818\n\
                 SlurmUser=root\n\
                 AuthType=auth/munge\n\
                 CredType=cred/munge\n\
                 AuthInfo=socket={d}/munge.socket\n\
                 StateSaveLocation={d}/state\n\
                 SlurmdSpoolDir={d}/spool\n\
                 SlurmctldPidFile={d}/slurmctld.pid\n\
                 SlurmdPidFile={d}/slurmd.pid\n\
                 ProctrackType=proctrack/linuxproc\n\
                 TaskPlugin=task/none\n\
                 JobAcctGatherType=jobacct_gather/none\n\
                 AccountingStorageType=accounting_storage/none\n\
                 MpiDefault=none\n\
                 SelectType=select/cons_tres\n\
                 ReturnToService=2\n\
                 {health_conf}\
                 {node_line} NodeAddr=127.0.0.1 State=UNKNOWN\n\
                 PartitionName=fleet Nodes={node} Default=YES MaxTime=5 State=UP\n"
            ),
            0o644,
        );

        let mut started = Started::default();
        started.daemon(
            "munged",
            &dir.join("munged.out"),
            &[
                "munged".into(),
                "--foreground".into(),
                "--force".into(),
                format!("--key-file={}", key.display()),
                format!("--socket={d}/munge.socket"),
                format!("--pid-file={d}/munged.pid"),
                format!("--seed-file={d}/munged.seed"),
                format!("--log-file={d}/munged.log"),
            ],
        );
        let socket = dir.join("munge.socket");
        wait_for(30, "munged's socket", || (socket.exists(), String::new()));
        // SLURM_CONF reaches the daemons through `env`.
        let conf_env = format!("SLURM_CONF={}", conf.display());
        for (name, flags) in [("slurmctld", "-D -c"), ("slurmd", "-D")] {
            let mut command = vec!["env".to_owned(), conf_env.clone(), name.to_owned()];
            command.extend(flags.split(' ').map(str::to_owned));
            started.daemon(name, &dir.join(format!("{name}.out")), &command);
        }
        let cluster = SlurmCluster {
            node,
            conf,
            policy,
            gate_runs,
            _daemons: started,
        };
        wait_for(60, "the node idle in sinfo", || {
            let state = stdout_of(cluster.client("sinfo").args(["-h", "-o", "%T"]));
            (state.trim() == "idle", state)
        });
        cluster
    }

    /// A Slurm client command told where the cluster's `slurm.conf` is.
    fn client(&self, program: &str) -> Command {
        let mut command = Command::new(program);
        command.env("SLURM_CONF", &self.conf);
        command
    }

    /// Writes the node's verdict policy, the recipe's `expected-verdict`.
    fn set_policy(&self, verdict: &str) {
        std::fs::write(&self.policy, format!("{verdict}\n")).expect("the verdict policy");
    }

    /// Waits until the health check's gate has run `runs` more times
    /// (slurmd runs it every 2 s while the node is idle).
    fn wait_for_health_checks(&self, runs: usize) {
        let count = || {
            std::fs::read_to_string(&self.gate_runs)
                .map(|text| text.lines().count())
                .unwrap_or(0)
        };
        let before = count();
        wait_for(60, "the health check's runs", || {
            (count() >= before + runs, format!("{} runs", count()))
        });
    }

    /// `scontrol show node`.
    fn show_node(&self) -> String {
        stdout_of(self.client("scontrol").args(["show", "node", &self.node]))
    }
}

/// `command`'s standard output, whatever its status.
fn stdout_of(command: &mut Command) -> String {
    let output = command
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|error| panic!("cannot run {command:?}: {error}"));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The hosts of the SSH fleet: each a network namespace on this machine
/// with its own address and `sshd` (own host key and config), reached with
/// a generated client key.
const SSH_HOSTS: &str = "node[1-5]";

/// The man page's pdsh, ClusterShell and Ansible recipes over real SSH.
/// node1 and node2 run this build's gate (on the no-SMT snapshot, so that
/// it says no-smt at once on any machine: their sshd's PATH names a
/// stand-in that adds `--sysfs-root`); node3's `placement-study` is an
/// older version (a stand-in that prints the same document with
/// `tool_version` 0.0.9); node4's sshd is stopped; node5's command hangs
/// past the engines' 5 s timeout.
///
/// Piped as the recipes pipe them (the engines' standard output alone),
/// node4 and node5 sent no line: missing. With the engines' standard error
/// too (`2>&1`), each is named with the engine's reason (ssh's "Connection
/// refused", the engine's timeout), under the hosts without a result.
#[test]
#[ignore = "needs root (network namespaces), openssh-server, pdsh, clustershell and ansible-core; .ci/run runs it"]
fn ssh_fleet_in_network_namespaces_is_counted_through_pdsh_clush_and_ansible() {
    let folder = tempfile::tempdir().expect("a temporary folder");
    let fleet = SshFleet::start(folder.path());
    let hosts = format!("--hosts={SSH_HOSTS}");

    let mut pdsh = Command::new("pdsh");
    pdsh.env("PDSH_SSH_ARGS", fleet.pdsh_ssh_args())
        .args(["-R", "ssh", "-u", "5", "-w", SSH_HOSTS]);
    let mut clush = Command::new("clush");
    clush
        .env("CLUSTERSHELL_CFGDIR", fleet.clush_config())
        .args(["--nostdin", "-u", "5", "-w", SSH_HOSTS]);
    for (name, mut engine) in [("pdsh", pdsh), ("clush", clush)] {
        let run = Engine::run(engine.args(["placement-study", "gate", "--json-line", "-"]));
        assert_ssh_fleet_counted(name, &run, &hosts);
        let merged = format!("{}{}", run.stdout, run.stderr);
        let rows = fleet_rows(&merged, &[&hosts]);
        assert_reason(&rows["node4"], "Connection refused");
        assert_reason(&rows["node5"], "command timeout");
        println!(
            "fleet: with {name}'s stderr, node4: {}; node5: {}",
            rows["node4"]["reason"], rows["node5"]["reason"]
        );
    }

    // The man page's Ansible recipe as it stands, run by sh in a folder of
    // its own, `placement-study` on this side this build.
    let ansible_dir = folder.path().join("ansible");
    std::fs::create_dir(&ansible_dir).expect("Ansible's folder");
    let recipe =
        man_page_example("reads the folder as it is (an unreachable host's file holds Ansible's");
    let ansible = Engine::run(
        Command::new("sh")
            .arg("-c")
            .arg(&recipe)
            .current_dir(&ansible_dir)
            .env("PATH", fleet.control_path())
            .env("ANSIBLE_CONFIG", fleet.ansible_config()),
    );
    assert!(
        ansible
            .stdout
            .contains("5 hosts: 3 with a result, 2 broken, 0 missing"),
        "{ansible}"
    );
    let rows = by_host(&report_fleet(
        &[&hosts, "--json"],
        &[&ansible_dir.join("gate")],
        "",
    ));
    assert_ssh_fleet_rows(&rows);
    // "Failed to connect to the host via ssh: ... Connection refused", or,
    // pipelined, now and then "Data could not be sent to remote host
    // \"node4\". Make sure this host can be reached over ssh: ...".
    println!(
        "fleet: Ansible's node4: {}; node5: {}",
        rows["node4"]["reason"], rows["node5"]["reason"]
    );
    assert_reason(&rows["node4"], "ssh");
    assert_reason(
        &rows["node5"],
        "failed to execute in the expected time frame (10)",
    );
}

/// Panics unless `row` is a host without a result whose reason holds
/// `words`.
fn assert_reason(row: &Value, words: &str) {
    assert_eq!(row["status"], "broken", "{row:#}");
    assert!(
        row["reason"].as_str().is_some_and(|r| r.contains(words)),
        "the reason holds {words:?}\n{row:#}"
    );
}

/// Five sshd hosts in network namespaces, torn down when dropped.
struct SshFleet {
    dir: std::path::PathBuf,
    started: Started,
}

/// The older version node3's stand-in claims.
const OLD_VERSION: &str = "0.0.9";

impl SshFleet {
    fn start(dir: &Path) -> SshFleet {
        let d = dir.display();
        let keygen = |path: &Path| {
            let status = Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", "", "-f"])
                .arg(path)
                .status()
                .unwrap_or_else(|error| {
                    panic!("cannot run ssh-keygen: {error} (Debian's openssh-client)")
                });
            assert!(status.success(), "ssh-keygen {}", path.display());
        };
        keygen(&dir.join("client_key"));
        std::fs::copy(dir.join("client_key.pub"), dir.join("authorized_keys"))
            .expect("authorized_keys");
        std::fs::create_dir_all("/run/sshd").expect("sshd's privilege separation folder");

        let mut started = Started::default();
        let mut known_hosts = String::new();
        let mut ssh_config = String::new();
        for n in 1..=5 {
            let host = format!("node{n}");
            let (namespace, link) = (format!("ps29-{host}"), format!("ps29h{n}"));
            let address = format!("10.29.{n}.2");
            // Left by a run that was killed before its Drop.
            let _ = Command::new("ip")
                .args(["netns", "delete", &namespace])
                .stderr(Stdio::null())
                .status();
            started.namespaces.push(namespace.clone());
            for command in [
                format!("ip netns add {namespace}"),
                format!("ip link add {link} type veth peer name eth0 netns {namespace}"),
                format!("ip addr add 10.29.{n}.1/24 dev {link}"),
                format!("ip link set {link} up"),
                format!("ip -n {namespace} addr add {address}/24 dev eth0"),
                format!("ip -n {namespace} link set eth0 up"),
                format!("ip -n {namespace} link set lo up"),
            ] {
                let words: Vec<&str> = command.split(' ').collect();
                let status = Command::new(words[0])
                    .args(&words[1..])
                    .status()
                    .unwrap_or_else(|error| panic!("cannot run {command}: {error}"));
                assert!(status.success(), "{command}");
            }

            let home = dir.join(&host);
            let bin = home.join("bin");
            std::fs::create_dir_all(&bin).expect("a host's folder");
            let stand_in = match n {
                3 => format!(
                    "'{PLACEMENT_STUDY}' \"$@\" --sysfs-root '{NO_SMT_SNAPSHOT}' |\n  \
                     sed 's/\"tool_version\":\"[^\"]*\"/\"tool_version\":\"{OLD_VERSION}\"/'\n"
                ),
                5 => "exec sleep 60\n".to_owned(),
                _ => format!("exec '{PLACEMENT_STUDY}' \"$@\" --sysfs-root '{NO_SMT_SNAPSHOT}'\n"),
            };
            write_file(
                &bin.join("placement-study"),
                &format!("#!/bin/sh\n{stand_in}"),
                0o755,
            );
            let host_key = home.join("host_key");
            keygen(&host_key);
            let public = std::fs::read_to_string(home.join("host_key.pub")).expect("a host key");
            let public: Vec<&str> = public.split_whitespace().take(2).collect();
            known_hosts.push_str(&format!("{address} {}\n", public.join(" ")));
            ssh_config.push_str(&format!("Host {host}\n  HostName {address}\n"));
            let sshd_config = home.join("sshd_config");
            write_file(
                &sshd_config,
                &format!(
                    "ListenAddress {address}\n\
                     HostKey {}\n\
                     PidFile none\n\
                     AuthorizedKeysFile {d}/authorized_keys\n\
                     PermitRootLogin prohibit-password\n\
                     PasswordAuthentication no\n\
                     KbdInteractiveAuthentication no\n\
                     UsePAM no\n\
                     StrictModes no\n\
                     Subsystem sftp internal-sftp\n\
                     SetEnv PATH={}:/usr/local/bin:/usr/bin:/bin\n",
                    host_key.display(),
                    bin.display()
                ),
                0o644,
            );
            started.daemon(
                &host,
                &home.join("sshd.log"),
                &[
                    "ip".into(),
                    "netns".into(),
                    "exec".into(),
                    namespace,
                    "/usr/sbin/sshd".into(),
                    "-D".into(),
                    "-e".into(),
                    "-f".into(),
                    sshd_config.display().to_string(),
                ],
            );
        }
        write_file(&dir.join("known_hosts"), &known_hosts, 0o644);
        ssh_config.push_str(&format!(
            "Host *\n  User root\n  IdentityFile {d}/client_key\n  IdentitiesOnly yes\n  \
             UserKnownHostsFile {d}/known_hosts\n  StrictHostKeyChecking yes\n  BatchMode yes\n  \
             ConnectTimeout 5\n  LogLevel ERROR\n"
        ));
        write_file(&dir.join("ssh_config"), &ssh_config, 0o644);
        let mut fleet = SshFleet {
            dir: dir.to_owned(),
            started,
        };
        for n in [1, 2, 3, 5] {
            fleet.wait_for_sshd(n);
        }
        fleet.wait_for_sshd(4);
        fleet.started.stop("node4");
        fleet
    }

    /// Waits until node`n`'s sshd answers `ssh true`.
    fn wait_for_sshd(&self, n: usize) {
        wait_for(30, &format!("node{n}'s sshd"), || {
            let output = Command::new("ssh")
                .arg("-F")
                .arg(self.dir.join("ssh_config"))
                .args([&format!("node{n}"), "true"])
                .stdin(Stdio::null())
                .output()
                .expect("ssh runs");
            (
                output.status.success(),
                String::from_utf8_lossy(&output.stderr).into_owned(),
            )
        });
    }

    /// pdsh's ssh module's arguments (PDSH_SSH_ARGS): the generated
    /// client config, then the host.
    fn pdsh_ssh_args(&self) -> String {
        format!("-F {} %h", self.dir.join("ssh_config").display())
    }

    /// A ClusterShell configuration folder (CLUSTERSHELL_CFGDIR) whose
    /// clush.conf gives ssh the generated client config.
    fn clush_config(&self) -> std::path::PathBuf {
        let folder = self.dir.join("clustershell");
        std::fs::create_dir_all(&folder).expect("the clush.conf folder");
        write_file(
            &folder.join("clush.conf"),
            &format!(
                "[Main]\nssh_options: -F {}\n",
                self.dir.join("ssh_config").display()
            ),
            0o644,
        );
        folder
    }

    /// ansible.cfg: the hosts' inventory, a 10 s task timeout, ssh with the
    /// generated client config, pipelined (one ssh per host: without it, a
    /// loaded machine's hosts can outlast the timeout while Ansible copies
    /// its module over).
    fn ansible_config(&self) -> std::path::PathBuf {
        let inventory = self.dir.join("inventory");
        write_file(
            &inventory,
            "node[1:5] ansible_python_interpreter=/usr/bin/python3\n",
            0o644,
        );
        let config = self.dir.join("ansible.cfg");
        write_file(
            &config,
            &format!(
                "[defaults]\ninventory = {}\ntask_timeout = 10\n\n\
                 [ssh_connection]\nssh_args = -F {}\npipelining = True\n",
                inventory.display(),
                self.dir.join("ssh_config").display()
            ),
            0o644,
        );
        config
    }

    /// PATH on this side: `placement-study` is this build.
    fn control_path(&self) -> std::ffi::OsString {
        let bin = self.dir.join("control-bin");
        std::fs::create_dir_all(&bin).expect("the control side's folder");
        let link = bin.join("placement-study");
        if !link.exists() {
            std::os::unix::fs::symlink(PLACEMENT_STUDY, &link).expect("the control side's link");
        }
        let mut path = bin.into_os_string();
        path.push(":");
        path.push(std::env::var_os("PATH").unwrap_or_default());
        path
    }
}

/// `report --fleet` of an engine's standard output: node1 to node3
/// counted, node3 with its older version; node4 and node5 missing.
fn assert_ssh_fleet_counted(engine: &str, run: &Engine, hosts: &str) {
    let report = counted_report(
        engine,
        &run.stdout,
        hosts,
        "5 hosts: 3 with a result, 0 broken, 2 missing",
        "Missing (2): node[4-5]",
    );
    assert_row(&report, &["gate", "no-smt", "3", "0"]);
    assert_row(&report, &[env!("CARGO_PKG_VERSION"), "2"]);
    assert_row(&report, &[OLD_VERSION, "1"]);
    let rows = fleet_rows(&run.stdout, &[hosts]);
    assert_ssh_fleet_rows(&rows);
    for host in ["node4", "node5"] {
        assert_eq!(rows[host]["status"], "missing", "{:#}", rows[host]);
    }
}

/// node1 to node3's rows: a no-smt gate each, node3's by the older version.
fn assert_ssh_fleet_rows(rows: &BTreeMap<String, Value>) {
    for (host, version) in [
        ("node1", env!("CARGO_PKG_VERSION")),
        ("node2", env!("CARGO_PKG_VERSION")),
        ("node3", OLD_VERSION),
    ] {
        let row = &rows[host];
        assert_eq!(row["status"], "ok", "{host}\n{row:#}");
        assert_eq!(row["verdict"], "no-smt", "{host}\n{row:#}");
        assert_eq!(row["tool_version"], version, "{host}\n{row:#}");
    }
}
