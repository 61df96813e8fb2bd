//! Probing cost against CPU count, on generated machines of 1024, 4096,
//! 8192 and 16384 CPUs in one package, and of 8192 CPUs in packages of 64
//! cores (tests/big_machine): `topology` (probe, then the
//! text view and the JSON document), `snapshot`'s copying of the
//! topology files (the folder snapshot), and `snapshot FILE.json`'s
//! recording of them into one document written to a file, and
//! `--sysfs-root FILE.json` reading it back. All must grow linearly; but
//! the folder copy, 8192 CPUs well under a second and 100 MB.
//!
//! Run: `cargo bench --bench scaling`. Every machine is written first
//! (the largest has some 700,000 files: minutes), then timed; a filter
//! such as `-- "one package/8192"` picks which are timed. The whole
//! command, process start
//! and output included, is measured on a machine written to disk, e.g. with
//! `/usr/bin/time -v target/release/placement-study topology --sysfs-root
//! DIR`; a document of a generated machine is written by `snapshot
//! FILE.json` in a mount namespace whose /sys and /proc are the machine's
//! (`unshare -m sh -c 'mount --bind DIR/sys /sys && mount --bind DIR/proc
//! /proc && placement-study snapshot FILE.json'`).

#[path = "../tests/big_machine/mod.rs"]
mod big_machine;

use big_machine::BigMachine;
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use placement_study::probe::{self, SysfsRoot, snapshot};
use placement_study::report::{topology, view::View};
use placement_study::saved::{load_snapshot, write_new_file};
use placement_study::study::snapshot::record_snapshot;
use std::rc::Rc;
use std::time::Duration;

const SIZES: [u32; 4] = [1024, 4096, 8192, 16384];

fn bench_scaling(c: &mut Criterion) {
    let mut group = c.benchmark_group("generated machine");
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(5));
    // One package of all CPUs, the shape where any per-CPU work over a
    // package's CPUs shows as quadratic; and, at 8192 CPUs, a layout of
    // many packages of 64 cores.
    let machines = SIZES
        .map(|cpus| ("one package", BigMachine::one_package(cpus)))
        .into_iter()
        .chain([("64 cores per package", BigMachine::with_cpus(8192))]);
    for (shape, machine) in machines {
        let dir = tempfile::tempdir().expect("a temporary folder");
        machine.write(dir.path()).expect("writes the machine");
        let root = dir.path();
        let id = |what: &str| BenchmarkId::new(format!("{what}, {shape}"), machine.cpus);
        group.bench_with_input(id("topology"), root, |b, root| {
            b.iter(|| {
                let probed = probe::probe(Some(root), None).expect("probes");
                let text =
                    topology::blocks(&probed, &View::default()).to_terminal(&View::default());
                let json = serde_json::to_vec(&probed).expect("serializes");
                (text.len(), json.len())
            });
        });
        group.bench_with_input(id("snapshot"), root, |b, root| {
            b.iter(|| {
                let copy = tempfile::tempdir().expect("a temporary folder");
                snapshot::copy_topology_files(root, copy.path()).expect("copies")
            });
        });
        group.bench_with_input(id("snapshot FILE.json"), root, |b, root| {
            b.iter(|| {
                let folder = tempfile::tempdir().expect("a temporary folder");
                let path = folder.path().join("machine.json");
                let document = record_snapshot(root, false).expect("records");
                let text = serde_json::to_vec(&document).expect("serializes");
                write_new_file(&path, &text).expect("writes");
                text.len()
            });
        });
        let saved = tempfile::tempdir().expect("a temporary folder");
        let document = saved.path().join("machine.json");
        let recorded = record_snapshot(root, false).expect("records");
        let text = serde_json::to_vec(&recorded).expect("serializes");
        write_new_file(&document, &text).expect("writes");
        group.bench_with_input(id("topology from FILE.json"), &document, |b, path| {
            b.iter(|| {
                let loaded = load_snapshot(path).expect("loads");
                let root = SysfsRoot::document(path, Rc::new(loaded.recording));
                probe::probe_root(&root, None).expect("probes").cpus.len()
            });
        });
    }
    group.finish();
}

criterion_group!(benches, bench_scaling);
criterion_main!(benches);
