//! The JSON Schemas in `schemas/`: generated from the documents' types
//! ([`DocumentKind::json_schema`] for each kind of the one list, and the
//! baseline comparison's), the committed files checked to be the generated
//! ones, and the generated ones checked against REAL documents: what the
//! built binary prints and saves on this machine and on every fixture,
//! every saved document under `fixtures/`, and the recorded samples. Each
//! case is a schema reference and a document, so a new kind is one more
//! row.
//!
//! After a deliberate change to a document's type, rewrite the files with
//! `UPDATE_SCHEMAS=1 cargo test --test tests schemas::` and review `git
//! diff schemas/`. Under CI (`CI` set) a missing or differing schema fails
//! and nothing is written.

use crate::common;

use jsonschema::error::ValidationErrorKind;
use jsonschema::{Retrieve, Uri, ValidationError, Validator};
use placement_study::report::baseline::BaselineReport;
use placement_study::saved::DocumentKind;
use placement_study::saved::schema::document_schema;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use strum::VariantArray;

/// A document and the schema (file, or `file#/$defs/Name`) it must satisfy.
struct Case {
    /// Where the document came from, for the failure message.
    what: String,
    schema: String,
    document: Value,
}

fn repo_path(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(relative)
}

/// `file://` URI of `path`, every byte outside the unreserved set and `/`
/// percent-encoded, as URI references require.
fn file_uri(path: &Path) -> String {
    let mut uri = String::from("file://");
    for &byte in path.as_os_str().as_encoded_bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            uri.push(byte as char);
        } else {
            uri.push_str(&format!("%{byte:02X}"));
        }
    }
    uri
}

/// The schema file of a `kind` document: `gate.schema.json`.
fn schema_file(kind: &str) -> String {
    format!("{kind}.schema.json")
}

/// Every schema, generated, by its file name in `schemas/`: each kind's
/// (from the list of kinds, so a new kind has its file), and the baseline
/// comparison's.
fn generated() -> &'static [(String, Value)] {
    static SCHEMAS: OnceLock<Vec<(String, Value)>> = OnceLock::new();
    SCHEMAS.get_or_init(|| {
        let mut schemas: Vec<(String, Value)> = DocumentKind::VARIANTS
            .iter()
            .map(|kind| (schema_file(&kind.to_string()), kind.json_schema().into()))
            .collect();
        schemas.push((
            schema_file("baseline"),
            document_schema::<BaselineReport>("baseline").into(),
        ));
        schemas
    })
}

/// The committed schemas are the generated ones, and there are no others.
#[test]
fn the_committed_schemas_are_the_generated_ones() {
    let update = std::env::var_os("UPDATE_SCHEMAS").is_some() && std::env::var_os("CI").is_none();
    let folder = repo_path("schemas");
    let mut differing = Vec::new();
    for (name, schema) in generated() {
        let text = serde_json::to_string_pretty(schema).unwrap() + "\n";
        let path = folder.join(name);
        if fs::read(&path).ok().as_deref() == Some(text.as_bytes()) {
            continue;
        }
        if update {
            fs::write(&path, text).expect("the schema is written");
        } else {
            differing.push(name.as_str());
        }
    }
    assert!(
        differing.is_empty(),
        "these schemas are missing or differ from the types' (UPDATE_SCHEMAS=1 cargo test \
         --test tests schemas:: rewrites them; review the diff): {differing:?}"
    );
    let mut others: Vec<String> = fs::read_dir(&folder)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".schema.json"))
        .filter(|name| generated().iter().all(|(generated, _)| generated != name))
        .collect();
    others.sort();
    assert!(
        others.is_empty(),
        "schemas/ has schemas of no document type: {others:?}"
    );
}

/// Every generated schema, by the `file://` URI of its file in `schemas/`:
/// the only documents a `$ref` may reach (nothing is fetched from anywhere
/// else).
struct SchemaFolder(HashMap<String, Value>);

impl SchemaFolder {
    fn generated() -> SchemaFolder {
        let folder = repo_path("schemas").canonicalize().unwrap();
        let schemas = generated()
            .iter()
            .map(|(name, schema)| (file_uri(&folder.join(name)), schema.clone()))
            .collect();
        SchemaFolder(schemas)
    }
}

impl Retrieve for SchemaFolder {
    fn retrieve(
        &self,
        uri: &Uri<String>,
    ) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        self.0
            .get(uri.as_str())
            .cloned()
            .ok_or_else(|| format!("{uri}: not a schema in schemas/").into())
    }
}

/// A validator for `reference`, resolved against the generated schemas.
fn validator(reference: &str) -> Validator {
    let base = file_uri(&repo_path("schemas").canonicalize().unwrap()) + "/";
    let root = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$ref": reference,
    });
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .with_base_uri(base)
        .with_retriever(SchemaFolder::generated())
        .build(&root)
        .unwrap_or_else(|e| panic!("{reference}: the schema does not compile: {e}"))
}

/// The validation errors of `document` against `reference`, one line each:
/// an `anyOf` or `oneOf` that failed (a nullable object, an enum with
/// data) followed by each of its branches' errors, so a wrong field deep
/// in an optional object is named where it is.
fn violations(reference: &str, document: &Value) -> Vec<String> {
    fn lines(error: &ValidationError<'_>, into: &mut Vec<String>) {
        into.push(format!("at {}: {error}", error.instance_path()));
        if let ValidationErrorKind::AnyOf { context }
        | ValidationErrorKind::OneOfNotValid { context } = error.kind()
        {
            for error in context.iter().flatten() {
                lines(error, into);
            }
        }
    }
    let mut found = Vec::new();
    for error in validator(reference).iter_errors(document) {
        lines(&error, &mut found);
    }
    found
}

fn assert_valid(cases: &[Case]) {
    assert!(!cases.is_empty());
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|case| {
            let errors = violations(&case.schema, &case.document);
            (!errors.is_empty()).then(|| {
                format!(
                    "{} against {}:\n  {}",
                    case.what,
                    case.schema,
                    errors.join("\n  ")
                )
            })
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Runs the binary; its stdout must be JSON, its exit code one of `codes`.
fn binary_json(args: &[&str], codes: &[i32]) -> Value {
    let output = Command::new(env!("CARGO_BIN_EXE_placement-study"))
        .args(args)
        .output()
        .expect("the test binary runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.code().is_some_and(|c| codes.contains(&c)),
        "{args:?} exited {:?}: {stderr}",
        output.status
    );
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: stdout is not JSON ({e}); stderr: {stderr}"))
}

/// The saved results in `fixtures/results/` named `KIND-*.json`, sorted,
/// each with its path.
fn saved_results(kind: &str) -> Vec<(PathBuf, Value)> {
    let prefix = format!("{kind}-");
    saved_documents()
        .into_iter()
        .filter(|(path, _)| {
            path.parent() == Some(&repo_path("fixtures/results"))
                && path
                    .file_name()
                    .is_some_and(|name| name.to_string_lossy().starts_with(&prefix))
        })
        .collect()
}

/// Every saved document under `fixtures/`, sorted by path, each with its
/// file: a `.json` file that is one document (an object with a `kind`),
/// and each such line of a `.jsonl` file (the fleet's `--json-line`
/// captures). Recorded samples (lists, bare costs) are no documents.
fn saved_documents() -> Vec<(PathBuf, Value)> {
    fn walk(folder: &Path, files: &mut Vec<PathBuf>) {
        for entry in fs::read_dir(folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, files);
            } else {
                files.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(&repo_path("fixtures"), &mut files);
    files.sort();
    let is_document = |value: &Value| value.get("kind").is_some_and(Value::is_string);
    let mut documents = Vec::new();
    for path in files {
        let text =
            || fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let parsed = |text: &str| -> Value {
            serde_json::from_str(text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        };
        match path.extension().and_then(|e| e.to_str()) {
            Some("json") => {
                let document = parsed(&text());
                if is_document(&document) {
                    documents.push((path, document));
                }
            }
            Some("jsonl") => {
                for line in text().lines().filter(|line| !line.trim().is_empty()) {
                    let document = parsed(line);
                    assert!(is_document(&document), "{}: {line}", path.display());
                    documents.push((path.clone(), document));
                }
            }
            _ => {}
        }
    }
    documents
}

fn live_topology() -> Value {
    binary_json(&["topology", "--json"], &[0])
}

/// `snapshot FILE.json` of this machine, and the document of each fixture
/// machine as the recorder makes it.
#[test]
fn snapshot_documents_validate() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("host.json");
    let output = common::placement_study(&["snapshot", path.to_str().unwrap()]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut cases = vec![Case {
        what: "snapshot FILE.json (live)".into(),
        schema: "snapshot.schema.json".into(),
        document: serde_json::from_slice(&fs::read(&path).unwrap()).unwrap(),
    }];
    for folder in crate::common::fixture_folders("sysfs") {
        let document = placement_study::study::snapshot::record_snapshot(&folder, false)
            .unwrap_or_else(|e| panic!("recording {}: {e:#}", folder.display()));
        cases.push(Case {
            what: format!("the snapshot document of {}", folder.display()),
            schema: "snapshot.schema.json".into(),
            document: serde_json::to_value(&document).unwrap(),
        });
    }
    assert_valid(&cases);
}

#[test]
fn topology_documents_validate() {
    let mut cases = vec![Case {
        what: "topology --json (live)".into(),
        schema: "topology.schema.json".into(),
        document: live_topology(),
    }];
    for folder in crate::common::fixture_folders("sysfs") {
        let folder = folder.to_str().unwrap();
        cases.push(Case {
            what: format!("topology --json --sysfs-root {folder} --no-cpuid"),
            schema: "topology.schema.json".into(),
            document: binary_json(
                &["topology", "--json", "--sysfs-root", folder, "--no-cpuid"],
                &[0],
            ),
        });
    }
    // A snapshot whose cores are unknown: smt null, and why.
    let unknown_root = crate::topology_fixtures::laptop_without_topology();
    let unknown = unknown_root.path().to_str().unwrap();
    cases.push(Case {
        what: "topology --json of a snapshot without topology folders".into(),
        schema: "topology.schema.json".into(),
        document: binary_json(
            &["topology", "--json", "--sysfs-root", unknown, "--no-cpuid"],
            &[0],
        ),
    });
    cases.push(Case {
        what: "gate --json of a snapshot without topology folders".into(),
        schema: "gate.schema.json".into(),
        document: binary_json(
            &["gate", "--json", "--sysfs-root", unknown, "--no-cpuid"],
            &[5],
        ),
    });
    // Each CPUID dump beside the live sysfs: a full CPUID report, and a
    // crosscheck that (mostly) disagrees, so both shapes are covered.
    for folder in crate::common::fixture_folders("cpuid") {
        let folder = folder.to_str().unwrap();
        cases.push(Case {
            what: format!("topology --json --cpuid-dump {folder}"),
            schema: "topology.schema.json".into(),
            document: binary_json(&["topology", "--json", "--cpuid-dump", folder], &[0]),
        });
    }
    assert_valid(&cases);
}

#[test]
fn gate_document_validates() {
    // Short repetitions so a host with SMT measures quickly too; exit codes
    // 0, 3, 4, 5 are the verdicts.
    let document = binary_json(
        &[
            "gate",
            "--json",
            "--rep-ms",
            "5",
            "--warmups",
            "1",
            "--min-reps",
            "6",
            "--max-reps",
            "6",
            "--batch-gap",
            "0",
        ],
        &[0, 3, 4, 5],
    );
    if live_topology()["summary"]["smt"] == false {
        assert_eq!(document["verdict"], "no-smt");
    }
    assert_valid(&[Case {
        what: "gate --json".into(),
        schema: "gate.schema.json".into(),
        document,
    }]);
}

/// The recorded repetitions in `fixtures/samples/` (the files that are
/// lists of sample objects; the others hold bare costs), from hosts with a
/// PMU.
#[test]
fn recorded_samples_validate() {
    let mut cases = Vec::new();
    for entry in fs::read_dir(repo_path("fixtures/samples")).unwrap() {
        let path = entry.unwrap().path();
        let document: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let samples = match document {
            Value::Array(items) if items.iter().all(Value::is_object) => items,
            _ => continue,
        };
        for (index, sample) in samples.into_iter().enumerate() {
            cases.push(Case {
                what: format!("{} [{index}]", path.display()),
                schema: "gate.schema.json#/$defs/RepSample".into(),
                document: sample,
            });
        }
    }
    assert_valid(&cases);
}

#[test]
fn run_document_validates() {
    if !common::two_cpus_allowed() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.json");
    let output = Command::new(env!("CARGO_BIN_EXE_placement-study"))
        .args(common::TWO_WORKER_RUN)
        .arg("--json")
        .arg(&path)
        .output()
        .unwrap();
    // 0 valid, 6 invalid: both write the document.
    assert!(
        matches!(output.status.code(), Some(0 | 6)),
        "run exited {:?}: {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let document: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
    assert_valid(&[Case {
        what: "run --json".into(),
        schema: "run.schema.json".into(),
        document,
    }]);
}

#[test]
fn command_document_validates() {
    let document = binary_json(
        &[
            "run",
            "--json",
            "--skip-gate",
            "--arms",
            "one-per-core,same-cpu",
            "--threads",
            "1",
            "--reps",
            "2",
            "--warmups",
            "0",
            "--",
            "true",
        ],
        &[0],
    );
    assert_valid(&[Case {
        what: "run --json -- true".into(),
        schema: "command.schema.json".into(),
        document,
    }]);
}

/// Every saved document under `fixtures/`, each against its kind's
/// schema: a document of a new kind is checked as soon as it is added.
/// Each saved result in `fixtures/results/` is named `KIND-*.json`, and
/// every kind `report` reads has one there.
#[test]
fn saved_documents_validate() {
    let cases: Vec<Case> = saved_documents()
        .into_iter()
        .map(|(path, document)| {
            let kind = document["kind"].as_str().unwrap();
            let known = DocumentKind::VARIANTS
                .iter()
                .any(|known| known.to_string() == kind);
            assert!(known, "{}: an unknown kind {kind:?}", path.display());
            if path.parent() == Some(&repo_path("fixtures/results")) {
                let name = path.file_name().unwrap().to_string_lossy();
                assert!(
                    name.starts_with(&format!("{kind}-")),
                    "{name}: a {kind} document: name it {kind}-*.json"
                );
            }
            Case {
                what: path.display().to_string(),
                schema: schema_file(kind),
                document,
            }
        })
        .collect();
    let results = fs::read_dir(repo_path("fixtures/results"))
        .unwrap()
        .filter(|entry| entry.as_ref().unwrap().path().extension() == Some("json".as_ref()))
        .count();
    let documents = cases
        .iter()
        .filter(|case| Path::new(&case.what).parent() == Some(&repo_path("fixtures/results")))
        .count();
    assert_eq!(
        documents, results,
        "a file in fixtures/results/ is no saved document"
    );
    for kind in DocumentKind::VARIANTS {
        if *kind == DocumentKind::Snapshot {
            continue;
        }
        assert!(
            !saved_results(&kind.to_string()).is_empty(),
            "fixtures/results/ has no {kind} result"
        );
    }
    assert_valid(&cases);
}

/// `report --baseline OLD NEW --json` of recorded documents: a sweep
/// against itself, and against itself with step 1 twice as slow.
#[test]
fn baseline_documents_validate() {
    let dir = tempfile::tempdir().unwrap();
    let old = repo_path("fixtures/results/sweep-vm-per-worker.json");
    let mut slower: Value = serde_json::from_str(&fs::read_to_string(&old).unwrap()).unwrap();
    for sample in slower["samples"].as_array_mut().unwrap() {
        if sample["arm"] == "baseline" {
            let wall = sample["wall_ns"].as_f64().unwrap();
            sample["wall_ns"] = json!((wall * 2.0) as u64);
        }
    }
    let new = dir.path().join("slower.json");
    fs::write(&new, serde_json::to_vec(&slower).unwrap()).unwrap();
    let (old, new) = (old.to_str().unwrap(), new.to_str().unwrap());
    let cases: Vec<Case> = [(old, 0), (new, 7)]
        .into_iter()
        .map(|(file, code)| Case {
            what: format!("report --baseline {old} {file} --json"),
            schema: "baseline.schema.json".into(),
            document: binary_json(&["report", "--baseline", old, file, "--json"], &[code]),
        })
        .collect();
    assert_valid(&cases);
}

#[test]
fn pairs_document_validates() {
    if !common::two_cpus_allowed() {
        return;
    }
    // Exit codes 0, 3, 5 are the map verdicts.
    let document = binary_json(&[common::SHORT_PAIRS, &["--json"]].concat(), &[0, 3, 5]);
    assert_valid(&[Case {
        what: "pairs --json".into(),
        schema: "pairs.schema.json".into(),
        document,
    }]);
}

#[test]
fn latency_document_validates() {
    if !common::two_cpus_allowed() {
        return;
    }
    // Exit codes 0, 3, 5 are the map verdicts.
    let document = binary_json(&["latency", "--samples", "5", "--json"], &[0, 3, 5]);
    assert_valid(&[Case {
        what: "latency --json".into(),
        schema: "latency.schema.json".into(),
        document,
    }]);
}

/// A short `hybrid` study: two workers (so a host with many cores is quick
/// too: a baseline does every worker's share), two batches of three rounds
/// of the shortest repetitions without a pause, no warm-ups. Add the
/// outputs.
const SHORT_HYBRID: &[&str] = &[
    "hybrid",
    "--workers",
    "2",
    "--rep-ms",
    "50",
    "--reps",
    "6",
    "--batch-gap",
    "0",
    "--warmups",
    "0",
];

/// Whether [`SHORT_HYBRID`] can run here: it puts its two workers on two
/// allowed cores; otherwise says why the caller skips.
fn two_cores_allowed() -> bool {
    let topology = live_topology();
    let mut cores: Vec<(u64, u64)> = topology["cpus"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|cpu| cpu["allowed"] == true)
        .map(|cpu| {
            (
                cpu["package"].as_u64().unwrap(),
                cpu["core"].as_u64().unwrap(),
            )
        })
        .collect();
    cores.sort_unstable();
    cores.dedup();
    let enough = cores.len() >= 2;
    if !enough {
        eprintln!("skipping: the short hybrid study needs two allowed cores");
    }
    enough
}

/// [`SHORT_HYBRID`]'s `--json` document, measured once for every test that
/// reads it; `None` where it cannot run.
fn live_hybrid() -> Option<&'static Value> {
    static DOCUMENT: OnceLock<Option<Value>> = OnceLock::new();
    DOCUMENT
        .get_or_init(|| {
            // 0 the classes agree, 3 differ, 5 inconclusive, 6 invalid: all
            // write the document.
            two_cores_allowed()
                .then(|| binary_json(&[SHORT_HYBRID, &["--json"]].concat(), &[0, 3, 5, 6]))
        })
        .as_ref()
}

#[test]
fn hybrid_document_validates() {
    let Some(document) = live_hybrid() else {
        return;
    };
    // Every repetition's workers say what they did of the shared items.
    let samples = document["samples"].as_array().unwrap();
    assert!(!samples.is_empty(), "no repetition saved");
    assert_valid(&[Case {
        what: "hybrid --json".into(),
        schema: "hybrid.schema.json".into(),
        document: document.clone(),
    }]);
}

/// `observe ARGS --json`'s document, or `None` (the caller skips, saying
/// why) where this host does not let it open its perf events. Its exit
/// status must be one of `codes`.
fn live_observe(args: &[&str], codes: &[i32]) -> Option<Value> {
    let output = Command::new(env!("CARGO_BIN_EXE_placement-study"))
        .args(["observe", "--json", "-"])
        .args(args)
        .output()
        .expect("the test binary runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    if output.status.code() == Some(1) && stderr.contains("perf_event_open") {
        eprintln!("skipping: observe cannot record here: {stderr}");
        return None;
    }
    assert!(
        output.status.code().is_some_and(|c| codes.contains(&c)),
        "observe {args:?} exited {:?}: {stderr}",
        output.status
    );
    Some(
        serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
            panic!("observe {args:?}: stdout is not JSON ({e}); stderr: {stderr}")
        }),
    )
}

#[test]
fn observe_documents_validate() {
    // The kernel (0 valid, 6 invalid), with a timeline; a command that
    // exits 3 and one a signal ends (observe exits with their statuses).
    let runs: [(&[&str], &[i32]); 3] = [
        (
            &[
                "--kernel",
                "mul",
                "--threads",
                "2",
                "--seconds",
                "0.2",
                "--interval",
                "50",
            ],
            &[0, 6],
        ),
        (&["--", "sh", "-c", "exit 3"], &[3]),
        (&["--", "sh", "-c", "kill -TERM $$"], &[143]),
    ];
    let mut cases = Vec::new();
    for (args, codes) in runs {
        let Some(document) = live_observe(args, codes) else {
            return;
        };
        cases.push(Case {
            what: format!("observe --json {args:?}"),
            schema: "observe.schema.json".into(),
            document,
        });
    }
    // A running process of our own for a moment (a sleeping one: little
    // or no time on a CPU, so 6 is as likely as 0).
    let mut sleeper = Command::new("sleep").arg("30").spawn().unwrap();
    let pid = sleeper.id().to_string();
    let document = live_observe(&["--pid", &pid, "--seconds", "0.2"], &[0, 6]);
    sleeper.kill().unwrap();
    sleeper.wait().unwrap();
    let Some(document) = document else {
        return;
    };
    assert_eq!(document["options"]["mode"], "pid");
    cases.push(Case {
        what: format!("observe --json --pid {pid} --seconds 0.2"),
        schema: "observe.schema.json".into(),
        document,
    });
    assert_eq!(
        cases[1].document["command_end"],
        json!({"how": "exited", "code": 3})
    );
    assert_eq!(
        cases[2].document["command_end"],
        json!({"how": "signaled", "signal": 15})
    );
    assert_valid(&cases);
}

/// Each mutation of `document` (a JSON pointer, what the change is, the
/// value put there) must fail `reference` at that pointer.
fn assert_rejected_at(reference: &str, document: &Value, mutations: &[(&str, &str, Value)]) {
    let passed: Vec<String> = mutations
        .iter()
        .filter_map(|(pointer, what, value)| {
            let mut mutated = document.clone();
            *mutated
                .pointer_mut(pointer)
                .unwrap_or_else(|| panic!("{pointer}: not in the document")) = value.clone();
            let errors = violations(reference, &mutated);
            let named = errors
                .iter()
                .any(|e| e.starts_with(&format!("at {pointer}:")));
            (!named).then(|| format!("{what} at {pointer} passed: {errors:?}"))
        })
        .collect();
    assert!(passed.is_empty(), "{}", passed.join("\n"));
}

/// A gate's evidence block as the gate writes it, crosscheck included.
fn evidence_document() -> Value {
    json!({
        "cpuid_hypervisor_bit": true,
        "cpuid_hypervisor_signature": "KVMKVMKVM",
        "cpuid_hypervisor_name": "KVM",
        "cpuinfo_hypervisor_flag": true,
        "dmi_vendor": null,
        "dmi_product": null,
        "crosscheck": {"agrees": true, "mismatches": []},
        "hypervisor_sources": [
            {"file": "/sys/class/dmi/id/sys_vendor", "says": "QEMU", "names": "QEMU", "guest": true},
        ],
    })
}

#[test]
fn the_schemas_bite() {
    let topology = live_topology();
    assert_rejected_at(
        "topology.schema.json",
        &topology,
        &[
            (
                "/summary/cpus",
                "a string where a count belongs",
                json!("two"),
            ),
            ("/schema_version", "another schema version", json!(2)),
            ("/cpus/0/siblings/0", "a negative CPU number", json!(-1)),
            (
                "/environment/hardware_pmu",
                "null for a boolean",
                Value::Null,
            ),
        ],
    );
    assert_required(
        "topology.schema.json",
        &topology,
        &[("", "host"), ("", "evidence"), ("/summary", "cpus")],
    );
    // A topology document from before 0.2.0: no head, no kind.
    let mut legacy = topology.clone();
    for field in ["kind", "tool_version", "host", "evidence"] {
        legacy.as_object_mut().unwrap().remove(field);
    }
    assert!(violations("topology.schema.json", &legacy).is_empty());
    legacy["summary"]["cpus"] = json!("two");
    assert!(!violations("topology.schema.json", &legacy).is_empty());
    let check = json!({"name": "pinning", "status": "maybe", "detail": ""});
    let errors = violations("gate.schema.json#/$defs/Check", &check);
    assert!(
        errors.iter().any(|e| e.starts_with("at /status:")),
        "an enum value outside the list passed: {errors:?}"
    );
    // Through a reference into another schema file.
    assert!(violations("gate.schema.json#/$defs/Evidence", &evidence_document()).is_empty());
    let mut evidence = evidence_document();
    evidence["crosscheck"]["agrees"] = json!("yes");
    let errors = violations("gate.schema.json#/$defs/Evidence", &evidence);
    assert!(
        errors.iter().any(|e| e.starts_with("at /crosscheck:")),
        "{errors:?}"
    );
    let mut source = evidence_document();
    source["hypervisor_sources"][0]["guest"] = json!("yes");
    let errors = violations("gate.schema.json#/$defs/Evidence", &source);
    assert!(
        errors
            .iter()
            .any(|e| e.starts_with("at /hypervisor_sources/0/guest:")),
        "{errors:?}"
    );
    let mut extra = topology;
    extra["a_field_added_later"] = json!(true);
    assert!(violations("topology.schema.json", &extra).is_empty());
}

#[test]
fn the_pairs_schema_bites() {
    let (_, pairs) = saved_results("pairs")
        .into_iter()
        .find(|(path, _)| path.ends_with("pairs-guest-crossed-siblings.json"))
        .expect("the crossed-siblings fixture");
    assert_rejected_at(
        "pairs.schema.json",
        &pairs,
        &[
            ("/verdict", "an unknown verdict", json!("maybe")),
            ("/kind", "another kind", json!("gate")),
            ("/search", "snake case for kebab case", json!("all_pairs")),
            (
                "/map/cpus/0/relation",
                "a pair relation where a CPU relation belongs",
                json!("fake"),
            ),
            (
                "/map/pairs/0/measured",
                "an outcome missing from the pair statuses",
                json!("unmeasured"),
            ),
            (
                "/comparisons/0/against/0",
                "a negative CPU number",
                json!(-1),
            ),
            ("/comparisons/0/index", "a 0-based index", json!(0)),
            (
                "/control_samples/0/arm",
                "an arm no placement has",
                json!("probe"),
            ),
        ],
    );
    // Missing fields, the flattened comparison's among them.
    assert_required(
        "pairs.schema.json",
        &pairs,
        &[("", "map"), ("/comparisons/0", "probe"), ("/map", "pairs")],
    );
    // A comparison's repetition excluded on the probe's loaded arm, and a
    // field added later, are fine.
    let mut accepted = pairs;
    accepted["comparisons"][0]["excluded"] = json!([
        {"arm": "loaded", "rep": 2, "why": "worker 1 moved from CPU 1 to CPU 0"},
    ]);
    accepted["a_field_added_later"] = json!(true);
    let errors = violations("pairs.schema.json", &accepted);
    assert!(errors.is_empty(), "{errors:?}");
}

#[test]
fn the_hybrid_schema_bites() {
    // The live study, or where it cannot run a saved one.
    let Some(hybrid) = live_hybrid()
        .cloned()
        .or_else(|| saved_results("hybrid").into_iter().next().map(|(_, d)| d))
    else {
        eprintln!("skipping: no hybrid document (neither live nor in fixtures/results/)");
        return;
    };
    assert_rejected_at(
        "hybrid.schema.json",
        &hybrid,
        &[
            ("/kind", "another kind", json!("pairs")),
            ("/schema_version", "another schema version", json!(2)),
            ("/ceiling", "a string where a number belongs", json!("2.0")),
            ("/options/rep_ms", "a negative duration", json!(-50)),
            ("/plan/worker_cpus/0", "a negative CPU number", json!(-1)),
            (
                "/plan/schemes/0/arm",
                "a placement arm no scheme has",
                json!("one-per-core"),
            ),
            (
                "/schemes/0/arm",
                "the baseline's arm for a scheme's",
                json!("baseline"),
            ),
            (
                "/schemes/0/scheme",
                "the printed name for the saved one",
                json!("static"),
            ),
            (
                "/class_judgement/verdict",
                "a pairs relation for a verdict",
                json!("agreed"),
            ),
            ("/baselines/0/class", "null for a class name", Value::Null),
            (
                "/samples/0/arm",
                "an arm hybrid does not measure",
                json!("loaded"),
            ),
            (
                "/samples/0/workers/0/items/stolen",
                "a string where a count belongs",
                json!("0"),
            ),
            (
                "/samples/0/workers/0/items/per_cpu/0/cpu",
                "a negative CPU number",
                json!(-1),
            ),
        ],
    );
    // Missing fields (an optional one, such as the ceiling, may be absent:
    // it reads as null).
    assert_required(
        "hybrid.schema.json",
        &hybrid,
        &[
            ("", "kind"),
            ("/work", "items"),
            ("/options", "every_cpu"),
            ("/schemes/0", "worker_rows"),
            ("/class_judgement", "measured"),
            ("/samples/0/workers/0/items", "per_cpu"),
        ],
    );
    // A null ceiling (a worker CPU without a measured speed) and a field
    // added later are fine; so is a hybrid sample against the shared
    // RepSample, and the same sample without items (as other commands
    // write it).
    let mut accepted = hybrid.clone();
    accepted["ceiling"] = Value::Null;
    accepted["a_field_added_later"] = json!(true);
    let errors = violations("hybrid.schema.json", &accepted);
    assert!(errors.is_empty(), "{errors:?}");
    let mut sample = hybrid["samples"][0].clone();
    assert!(violations("gate.schema.json#/$defs/RepSample", &sample).is_empty());
    sample["workers"][0]
        .as_object_mut()
        .unwrap()
        .remove("items");
    assert!(violations("gate.schema.json#/$defs/RepSample", &sample).is_empty());
}

#[test]
fn the_observe_schema_bites() {
    let (_, observe) = saved_results("observe")
        .into_iter()
        .find(|(path, _)| path.ends_with("observe-kernel-vm.json"))
        .expect("the kernel observation fixture");
    assert_rejected_at(
        "observe.schema.json",
        &observe,
        &[
            ("/kind", "another kind", json!("hybrid")),
            ("/schema_version", "another schema version", json!(2)),
            ("/options/mode", "a mode observe lacks", json!("process")),
            (
                "/options/threads",
                "a string where a count belongs",
                json!("2"),
            ),
            ("/cpus/0/class", "a class no topology names", json!("fast")),
            (
                "/class_residency/0/class",
                "the Rust name for the saved one",
                json!("LowPowerEfficiency"),
            ),
            (
                "/threads/0/intervals/0/cpu",
                "a negative CPU number",
                json!(-1),
            ),
            ("/timeline/0/class_ms", "a number for a list", json!(1.0)),
            ("/reconciliation/holds", "null for a boolean", Value::Null),
            (
                "/command_end",
                "an end without how it ended",
                json!({"code": 0}),
            ),
            (
                "/command_end",
                "a signal under the exit's tag",
                json!({"how": "exited", "signal": 9}),
            ),
            ("/exit_status", "a status no shell reports", json!(256)),
        ],
    );
    assert_required(
        "observe.schema.json",
        &observe,
        &[
            ("", "kind"),
            ("", "reconciliation"),
            ("", "class_residency"),
            ("/options", "cycles"),
            ("/cpus/0", "task_clock_ms"),
            ("/reconciliation", "handover_ms"),
        ],
    );
    // A command's end either way, a "class N" class, a thread that never
    // settled, and a field added later are fine.
    for end in [
        json!({"how": "exited", "code": 3}),
        json!({"how": "signaled", "signal": 15}),
    ] {
        let mut accepted = observe.clone();
        accepted["options"]["mode"] = json!("command");
        accepted["options"]["command"] = json!(["sh", "-c", "exit 3"]);
        accepted["command_end"] = end;
        accepted["exit_status"] = json!(3);
        accepted["cpus"][0]["class"] = json!("class 3");
        accepted["threads"][0]["settled_after_ms"] = Value::Null;
        accepted["a_field_added_later"] = json!(true);
        let errors = violations("observe.schema.json", &accepted);
        assert!(errors.is_empty(), "{errors:?}");
    }
}

/// A memory document with a measured sharing (a package's L3, 40 ns
/// inside against 120 ns outside), as the judge writes it: valid, and the
/// schema bites on a wrong status or a missing pair.
#[test]
fn the_memory_sharing_schema_bites() {
    use placement_study::cpuset::CpuSet;
    use placement_study::judge::latency::PairLatency;
    use placement_study::judge::memory_sharing::judge_sharing;
    use placement_study::plan::memory::SharingPlan;
    let (_, mut memory) = saved_results("memory")
        .into_iter()
        .next()
        .expect("a memory fixture");
    let pair = |cpus: [u32; 2], ns: f64| PairLatency {
        cpus,
        one_way_ns: Some(ns),
        p10_ns: Some(ns),
        p90_ns: Some(ns * 1.1),
        samples: 10,
        bounded_samples: 0,
        no_progress_samples: 0,
        pinned: true,
        inferred_from: None,
    };
    let plans = [
        SharingPlan {
            level: 3,
            kind: "Unified".into(),
            cpus: CpuSet::from_cpus(0..32),
            inside: Some([0, 1]),
            outside: Some([0, 32]),
        },
        SharingPlan {
            level: 4,
            kind: "Unified".into(),
            cpus: CpuSet::from_cpus(0..64),
            inside: Some([0, 1]),
            outside: None,
        },
    ];
    let judged = judge_sharing(0, &plans, &[pair([0, 1], 40.0), pair([0, 32], 120.0)]);
    memory["sharing"] = serde_json::to_value(&judged).unwrap();
    let errors = violations("memory.schema.json", &memory);
    assert!(errors.is_empty(), "{errors:?}");
    assert_rejected_at(
        "memory.schema.json",
        &memory,
        &[
            ("/sharing/levels/0/status", "a verdict word", json!("agree")),
            ("/sharing/verdict", "a status word", json!("agreed")),
            ("/sharing/levels/0/inside", "one CPU", json!([0])),
        ],
    );
    assert_required(
        "memory.schema.json",
        &memory,
        // An absent optional value reads as none, as the reader reads it.
        &[("/sharing", "levels"), ("/sharing/levels/0", "level")],
    );
}

/// Each `(parent, field)` removed from `document` on its own must fail
/// `schema` at `parent`, naming the field.
fn assert_required(schema: &str, document: &Value, fields: &[(&str, &str)]) {
    let passed: Vec<String> = fields
        .iter()
        .filter_map(|(parent, field)| {
            let mut missing = document.clone();
            missing
                .pointer_mut(parent)
                .and_then(Value::as_object_mut)
                .and_then(|object| object.remove(*field))
                .unwrap_or_else(|| panic!("{parent}/{field}: not in the document"));
            let errors = violations(schema, &missing);
            let named = errors.iter().any(|e| {
                e.starts_with(&format!("at {parent}:")) && e.contains(&format!("\"{field}\""))
            });
            (!named).then(|| format!("no {field} in {parent:?} passed: {errors:?}"))
        })
        .collect();
    assert!(passed.is_empty(), "{}", passed.join("\n"));
}
