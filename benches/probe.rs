//! Probing speed on the largest saved machines of the conformance corpus:
//! the largest sysfs snapshot (by CPU count) and the largest CPUID dump.
//! Target: under 50 ms each, and quicker than `lstopo-no-graphics` reading
//! the same snapshot (`HWLOC_FSROOT=DIR lstopo-no-graphics`).
//!
//! Run: `cargo bench --bench probe`. Skips (with a message) when
//! ../shared/conformance is absent.

use criterion::{Criterion, criterion_group, criterion_main};
use placement_study::cpuset::CpuSet;
use placement_study::probe::{self, cpuid::CpuidSource};
use std::path::{Path, PathBuf};
use std::process::Command;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/conformance/hwloc")
}

/// Extracts `tarball` (relative to the corpus) and returns `inner` inside it.
fn extract(tarball: &str, inner: &str, into: &Path) -> PathBuf {
    let status = Command::new("tar")
        .arg("-xjf")
        .arg(corpus().join(tarball))
        .arg("-C")
        .arg(into)
        .status()
        .expect("tar runs");
    assert!(status.success(), "tar -xjf {tarball} failed");
    into.join(inner)
}

fn bench_probe(c: &mut Criterion) {
    if !corpus().is_dir() {
        eprintln!("skipping: {} not found", corpus().display());
        return;
    }
    let dir = tempfile::tempdir().expect("a temp dir");
    // 256 CPUs: the largest sysfs snapshot of the corpus.
    let sysfs = extract(
        "linux/256ia64-64n2s2c.tar.bz2",
        "256ia64-64n2s2c",
        dir.path(),
    );
    // 256 CPUs: the largest CPUID dump of the corpus.
    let dump = extract(
        "x86/Intel-KnightsLanding-XeonPhi-7210.tar.bz2",
        "Intel-KnightsLanding-XeonPhi-7210",
        dir.path(),
    );
    c.bench_function("probe sysfs 256ia64-64n2s2c (256 CPUs)", |b| {
        b.iter(|| probe::probe(Some(&sysfs), None).expect("probes"))
    });
    let source = CpuidSource::Dump(dump);
    c.bench_function("read cpuid dump KnightsLanding (256 CPUs)", |b| {
        b.iter(|| probe::cpuid::read_report(&source, &CpuSet::default()).expect("reads"))
    });
}

criterion_group!(benches, bench_probe);
criterion_main!(benches);
