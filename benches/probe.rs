//! Probing speed on the largest saved machines of the conformance corpus:
//! the largest sysfs snapshot by CPU count (256ia64-64n2s2c, 256 CPUs, an
//! old kernel without `*_list` files or `cpu/online`) and the largest CPUID
//! dump. Target: under 50 ms each.
//!
//! Run: `cargo bench --bench probe`. Skips (with a message) when
//! ../shared/conformance is absent.
//!
//! This measures the probe inside one process; the whole command, process
//! start and JSON output included, is compared with hwloc on the same files
//! (goal: at least 5x faster than `lstopo-no-graphics`) with the snapshot
//! extracted to `R` (a folder in /dev/shm) and a release build:
//!
//! ```text
//! hyperfine -N --warmup 5 \
//!     'target/release/placement-study topology --json --sysfs-root R' \
//!     'env HWLOC_FSROOT=R lstopo-no-graphics'
//! ```
//!
//! and its file accesses are counted with
//! `strace -f -c -e trace=openat,open,statx,newfstatat` on the first command.

#[path = "../tests/conformance/mod.rs"]
mod conformance;

use conformance::{Corpus, Row};
use criterion::{Criterion, criterion_group, criterion_main};
use placement_study::probe;

/// The manifest row of the machine with the most CPUs, and that count.
fn largest(rows: &[Row]) -> (&Row, usize) {
    rows.iter()
        .map(|row| {
            let cpus = row.expected("cpus").and_then(|cpus| cpus.parse().ok());
            (row, cpus.unwrap_or(0))
        })
        .max_by_key(|&(_, cpus)| cpus)
        .expect("a manifest has rows")
}

fn bench_probe(c: &mut Criterion) {
    let Some(corpus) = Corpus::find("benches/probe.rs bench_probe") else {
        return;
    };
    let sysfs_rows = corpus.read_manifest("sysfs-manifest.tsv");
    let (snapshot, snapshot_cpus) = largest(&sysfs_rows);
    let snapshot_dir = corpus
        .extract(snapshot.get("tarball"), &[])
        .expect("extracts the snapshot");
    let root = snapshot_dir.path().join(snapshot.get("top_dir"));
    c.bench_function(
        &format!(
            "probe sysfs {} ({snapshot_cpus} CPUs)",
            snapshot.get("name")
        ),
        |b| b.iter(|| probe::probe(Some(&root), None).expect("probes")),
    );
    #[cfg(target_arch = "x86_64")]
    bench_cpuid_dump(c, &corpus);
}

/// CPUID is decoded only by x86_64 builds.
#[cfg(target_arch = "x86_64")]
fn bench_cpuid_dump(c: &mut Criterion, corpus: &Corpus) {
    let cpuid_rows = corpus.read_manifest("cpuid-manifest.tsv");
    let (dump, dump_cpus) = largest(&cpuid_rows);
    let cpuid_dir = dump.get("cpuid_dir");
    let dump_dir = corpus
        .extract(dump.get("tarball"), &[cpuid_dir])
        .expect("extracts the dump");
    let source = probe::CpuidSource::Dump(dump_dir.path().join(cpuid_dir));
    c.bench_function(
        &format!("read cpuid dump {} ({dump_cpus} CPUs)", dump.get("name")),
        |b| b.iter(|| probe::cpuid::read_report(&source, &Default::default()).expect("reads")),
    );
}

criterion_group!(benches, bench_probe);
criterion_main!(benches);
