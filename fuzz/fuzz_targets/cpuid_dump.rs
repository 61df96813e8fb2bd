//! CPUID dumps, parsed and decoded into a report the way `--cpuid-dump`
//! does (`report_from_dump_files`), then turned into CPU entries and core
//! classes, and cross-checked: with every CPU readable, and with only the
//! first (as under a restricted affinity). The input is up to 8 `puN`
//! files separated by NUL bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use placement_study::cpuset::CpuSet;
use placement_study::probe::classes::classes_from_cpuid;
use placement_study::probe::cpuid::{DumpFile, report_from_dump_files};
use placement_study::probe::crosscheck::{crosscheck, entries_from_cpuid};

fuzz_target!(|data: &[u8]| {
    let files: Vec<DumpFile> = data
        .split(|&byte| byte == 0)
        .take(8)
        .zip(0u32..)
        .map(|(text, cpu)| DumpFile {
            cpu,
            path: format!("pu{cpu}").into(),
            text: String::from_utf8_lossy(text).into_owned(),
        })
        .collect();
    let Ok(report) = report_from_dump_files(&files) else {
        return;
    };
    let entries = entries_from_cpuid(&report);
    assert_eq!(entries.len(), files.len());
    let _ = classes_from_cpuid(&report);
    let every_cpu = CpuSet::from_cpus(entries.iter().map(|e| e.cpu));
    let _ = crosscheck(&entries, &report, &every_cpu);
    let _ = crosscheck(&entries, &report, &CpuSet::from_cpus([0]));
});
