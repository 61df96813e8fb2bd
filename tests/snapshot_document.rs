//! `snapshot FILE.json`, the snapshot as one document, and `--sysfs-root
//! FILE.json` reading it back: every fixture machine (and every machine of
//! the conformance corpus, where it is present) recorded into a document
//! probes as its folder does, which shows the recording holds every read
//! the probe makes; the live machine's document probes as its folder
//! snapshot does; and bad documents and targets are one-line errors.

use crate::common::placement_study;
use crate::conformance::Corpus;
use placement_study::probe::{SysfsRoot, Topology, probe, probe_root};
use placement_study::saved::{SnapshotResult, load_snapshot};
use placement_study::study::snapshot::record_snapshot;
use serde_json::Value;
use std::fs;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// Records `folder` (without CPUID) into `NAME.json` in `into`, as
/// `snapshot` writes it.
fn record_into(folder: &Path, into: &Path) -> PathBuf {
    let document = record_snapshot(folder, false)
        .unwrap_or_else(|e| panic!("recording {}: {e:#}", folder.display()));
    let name = folder.file_name().unwrap().to_string_lossy();
    let path = into.join(format!("{name}.json"));
    fs::write(&path, serde_json::to_vec(&document).unwrap()).unwrap();
    path
}

/// `topology --no-cpuid --sysfs-root ROOT --json -`, without what names the
/// root or the time it ran.
fn topology_json(root: &Path) -> Value {
    let root = root.to_str().unwrap();
    let output = placement_study(&["topology", "--no-cpuid", "--sysfs-root", root, "--json=-"]);
    assert!(
        output.status.success(),
        "topology --sysfs-root {root}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut document: Value = serde_json::from_slice(&output.stdout).unwrap();
    without_run_fields(&mut document);
    document
}

/// Drops the fields that differ from one run, or one root, to the next.
fn without_run_fields(document: &mut Value) {
    let fields = document.as_object_mut().unwrap();
    fields.remove("started_unix");
    fields.remove("source");
}

/// Every fixture machine's document gives the identical `topology --json`
/// as its folder (the host too: the saved name, else the folder's name,
/// which the document's name repeats).
#[test]
fn every_fixture_machine_reads_back_from_its_document_as_from_its_folder() {
    let scratch = tempfile::tempdir().unwrap();
    for folder in crate::common::fixture_folders("sysfs") {
        let document = record_into(&folder, scratch.path());
        assert_eq!(
            topology_json(&document),
            topology_json(&folder),
            "{}",
            folder.display()
        );
    }
}

/// The machine a probe gives as JSON, but for the root it names: in the
/// source, and before each file a message names (`prefix`).
fn unnamed(mut topology: Topology, prefix: &str) -> String {
    topology.source.sysfs_root = None;
    serde_json::to_string_pretty(&topology)
        .unwrap()
        .replace(prefix, "ROOT/")
}

/// The document, written and loaded back as `--sysfs-root` loads it.
fn reloaded(document: &SnapshotResult, path: &Path) -> SysfsRoot {
    fs::write(path, serde_json::to_vec(document).unwrap()).unwrap();
    let loaded = load_snapshot(path).unwrap_or_else(|e| panic!("{e:#}"));
    SysfsRoot::document(path, Rc::new(loaded.recording))
}

/// The same for every machine of hwloc's corpus, through the library (the
/// corpus is 34 tarballs): a machine the probe refuses is refused while
/// recording too.
#[test]
fn every_corpus_machine_reads_back_from_its_document_as_from_its_folder() {
    let Some(corpus) = Corpus::find(
        "snapshot_document::every_corpus_machine_reads_back_from_its_document_as_from_its_folder",
    ) else {
        return;
    };
    let written = tempfile::tempdir().unwrap();
    for row in corpus.read_manifest("sysfs-manifest.tsv") {
        let name = row.get("name");
        let scratch = corpus.extract(row.get("tarball"), &[]).unwrap();
        let folder = scratch.path().join(row.get("top_dir"));
        let from_folder = catch_unwind(AssertUnwindSafe(|| probe(Some(&folder), None)))
            .unwrap_or_else(|_| panic!("{name}: probe panicked"));
        let recorded = record_snapshot(&folder, false);
        let (from_folder, document) = match (from_folder, recorded) {
            (Ok(topology), Ok(document)) => (topology, document),
            (Err(_), Err(_)) => continue,
            (folder, document) => panic!(
                "{name}: the folder probes {:?}, recording it {:?}",
                folder.err(),
                document.err()
            ),
        };
        let root = reloaded(&document, &written.path().join(format!("{name}.json")));
        let from_document = probe_root(&root, None).unwrap_or_else(|e| panic!("{name}: {e:#}"));
        let document_path = written.path().join(format!("{name}.json"));
        assert_eq!(
            unnamed(from_document, &format!("{}: ", document_path.display())),
            unnamed(from_folder, &format!("{}/", folder.display())),
            "{name}: the document probes otherwise than its folder"
        );
    }
}

/// A snapshot taken with the binary, as a document and as a folder, of
/// this machine: both read back the same (CPUID included, on x86_64).
#[test]
fn this_machine_s_document_reads_back_as_its_folder_snapshot() {
    let scratch = tempfile::tempdir().unwrap();
    let document = scratch.path().join("host.json");
    let folder = scratch.path().join("host");
    for target in [&document, &folder] {
        let output = placement_study(&["snapshot", target.to_str().unwrap()]);
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let topology = |root: &Path| {
        let output = placement_study(&[
            "topology",
            "--sysfs-root",
            root.to_str().unwrap(),
            "--json=-",
        ]);
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let mut document: Value = serde_json::from_slice(&output.stdout).unwrap();
        let source = document["source"].clone();
        without_run_fields(&mut document);
        (document, source)
    };
    let (from_document, source) = topology(&document);
    let (from_folder, _) = topology(&folder);
    assert_eq!(from_document, from_folder);
    if cfg!(target_arch = "x86_64") {
        let expected = format!("{}: cpuid", document.display());
        assert_eq!(
            source["cpuid"],
            expected.as_str(),
            "its own CPUID dump is read"
        );
    }
}

/// The one line `args` fails with.
fn refusal(args: &[&str]) -> String {
    let output = placement_study(args);
    assert!(!output.status.success(), "{args:?} succeeded");
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    stderr
}

#[test]
fn a_document_that_is_not_a_whole_snapshot_is_refused_naming_it() {
    let scratch = tempfile::tempdir().unwrap();
    let machine = &crate::common::fixture_folders("sysfs")[0];
    let document = record_into(machine, scratch.path());
    let text = fs::read(&document).unwrap();
    let at = |name: &str| scratch.path().join(name);
    let read = |path: &Path| refusal(&["topology", "--sysfs-root", path.to_str().unwrap()]);

    fs::write(at("truncated.json"), &text[..text.len() / 2]).unwrap();
    let error = read(&at("truncated.json"));
    assert!(
        error.contains("truncated.json: ") && error.contains("was it truncated?"),
        "{error}"
    );

    let topology = placement_study(&[
        "topology",
        "--sysfs-root",
        machine.to_str().unwrap(),
        "--json=-",
    ]);
    fs::write(at("topology.json"), topology.stdout).unwrap();
    let error = read(&at("topology.json"));
    assert!(
        error.contains("topology.json: a 'topology' document, not a snapshot; --sysfs-root reads a snapshot folder or a file written by `placement-study snapshot FILE.json`"),
        "{error}"
    );

    let mut value: Value = serde_json::from_slice(&text).unwrap();
    value["complete"] = Value::Bool(false);
    fs::write(at("incomplete.json"), value.to_string()).unwrap();
    let error = read(&at("incomplete.json"));
    assert!(
        error.contains("incomplete.json: an incomplete snapshot"),
        "{error}"
    );

    // A value the probe cannot read names the document and the file in it.
    let mut value: Value = serde_json::from_slice(&text).unwrap();
    value["recording"]["files"]["sys/devices/system/cpu/online"] = Value::from("0-x\n");
    fs::write(at("garbled.json"), value.to_string()).unwrap();
    let error = read(&at("garbled.json"));
    assert!(
        error.contains("garbled.json: sys/devices/system/cpu/online: expected a CPU list"),
        "{error}"
    );

    // `report` names what a snapshot is for.
    let error = refusal(&["report", document.to_str().unwrap()]);
    assert!(
        error.contains("a snapshot, which holds no results"),
        "{error}"
    );
}

#[test]
fn snapshot_json_never_writes_over_anything() {
    let scratch = tempfile::tempdir().unwrap();
    let at = |name: &str| scratch.path().join(name);
    let snapshot = |path: &Path| refusal(&["snapshot", path.to_str().unwrap()]);

    fs::create_dir(at("folder.json")).unwrap();
    let error = snapshot(&at("folder.json"));
    assert!(
        error.contains("folder.json: is a folder; a .json snapshot is one new file"),
        "{error}"
    );

    fs::write(at("mine.json"), "mine").unwrap();
    let error = snapshot(&at("mine.json"));
    assert!(
        error.contains("mine.json: already exists (a file); name a new file"),
        "{error}"
    );
    assert_eq!(fs::read_to_string(at("mine.json")).unwrap(), "mine");

    std::os::unix::fs::symlink(at("elsewhere.json"), at("link.json")).unwrap();
    let error = snapshot(&at("link.json"));
    assert!(
        error.contains("link.json: is a symbolic link to "),
        "{error}"
    );
    assert!(!at("elsewhere.json").exists());

    // Nothing was left beside them: no temp file.
    let mut names: Vec<String> = fs::read_dir(scratch.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["folder.json", "link.json", "mine.json"]);
}
