//! `placement-study topology`: probe and print.

use crate::cli::{SourceArgs, TopologyArgs};
use crate::probe::cpuid::CpuidSource;
use crate::probe::{self, Topology};
use crate::report;
use anyhow::Result;
use std::path::Path;

/// Which CPUID source the options ask for. Without options: the live CPU
/// for the live system; for `--sysfs-root DIR`, the dump `DIR/cpuid` that
/// `snapshot` writes, when present (never the live CPU: it belongs to
/// another machine than the snapshot).
pub fn cpuid_source(args: &SourceArgs) -> Option<CpuidSource> {
    if args.no_cpuid {
        return None;
    }
    if let Some(dump) = &args.cpuid_dump {
        return Some(CpuidSource::Dump(dump.clone()));
    }
    match &args.sysfs_root {
        Some(root) => {
            let dump = root.join(probe::snapshot::CPUID_DIR);
            dump.is_dir().then_some(CpuidSource::Dump(dump))
        }
        None if cfg!(target_arch = "x86_64") => Some(CpuidSource::Live),
        None => None,
    }
}

/// Probes the machine the options describe.
pub fn probe_from(args: &SourceArgs) -> Result<Topology> {
    let source = cpuid_source(args);
    // With only a CPUID dump, the structure comes from the APIC ids.
    let sysfs_root: Option<&Path> = args.sysfs_root.as_deref();
    probe::probe(sysfs_root, source.as_ref())
}

pub fn run(args: &TopologyArgs) -> Result<i32> {
    let topology = probe_from(&args.source)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&topology)?);
    } else {
        print!("{}", report::topology::render(&topology));
    }
    Ok(0)
}
