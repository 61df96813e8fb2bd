//! Facts about the kernel and platform that change what a measurement
//! means: SMT and turbo state, governors, clocksource, TSC flags, perf
//! permissions, PMUs, isolated CPUs, and (live only) this process's
//! affinity. Every fact is optional; a file that is absent leaves it unset,
//! a file that is present but garbled is an error naming it.

use crate::cpuset::{CpuSet, parse_list};
use crate::input::ReadLimit;
use crate::probe::hypervisor;
use crate::probe::model::{CorePmu, Environment};
use crate::probe::sysfs::{CPU_DIR, SetForm, SysfsRoot};
use anyhow::{Context, Result, anyhow, bail};
use procfs::FromBufRead;
use std::collections::BTreeSet;

const CPUFREQ_DIR: &str = "sys/devices/system/cpu/cpufreq";
const PMU_DIR: &str = "sys/bus/event_source/devices";

/// Reads the [`Environment`] under `root`; `online` names the CPUs whose
/// cpufreq folders count where the kernel has no policy folders.
pub fn read_environment(root: &SysfsRoot, online: &CpuSet) -> Result<Environment> {
    let policies = cpufreq_policies(root)?;
    let (turbo, turbo_source) = read_turbo(root, &policies)?;
    let (governors, scaling_driver) = read_cpufreq(root, &policies, online)?;
    let cpuinfo = FirstCpuInfo::read(root)?;
    let pmu_devices = hardware_pmus(root)?;
    Ok(Environment {
        kernel: read_kernel(root)?,
        smt_control: root.read_value(&format!("{CPU_DIR}/smt/control"))?,
        smt_active: read_flag(root, &format!("{CPU_DIR}/smt/active"))?,
        turbo,
        turbo_source,
        governors,
        scaling_driver,
        clocksource: root
            .read_value("sys/devices/system/clocksource/clocksource0/current_clocksource")?,
        constant_tsc: cpuinfo.has_flag("constant_tsc"),
        nonstop_tsc: cpuinfo.has_flag("nonstop_tsc"),
        hypervisor_flag: cpuinfo.has_flag("hypervisor"),
        perf_event_paranoid: root
            .read_parsed("proc/sys/kernel/perf_event_paranoid", "an integer like 2")?,
        hardware_pmu: !pmu_devices.is_empty(),
        core_pmus: core_pmus(root, &pmu_devices)?,
        pmu_devices,
        isolated: read_list(root, &format!("{CPU_DIR}/isolated"))?,
        nohz_full: read_list(root, &format!("{CPU_DIR}/nohz_full"))?,
        allowed_cpus: if root.is_live() {
            Some(crate::affinity::allowed_cpus()?)
        } else {
            saved_allowed_cpus(root)?
        },
        dmi_vendor: root.read_value("sys/class/dmi/id/sys_vendor")?,
        dmi_product: root.read_value("sys/class/dmi/id/product_name")?,
        hypervisor_sources: hypervisor::read_sources(
            root,
            cpuinfo.has_flag("hypervisor"),
            cpuinfo.model_name.as_deref(),
        )?,
        model_name: cpuinfo.model_name,
        devicetree_compatible: read_devicetree_compatible(root)?,
    })
}

/// The device tree root's `compatible` property: NUL-separated strings,
/// most specific first, joined with ", ". `None` on machines booted without
/// a device tree (x86, ACPI-only Arm servers).
fn read_devicetree_compatible(root: &SysfsRoot) -> Result<Option<String>> {
    let text = root.read_value("sys/firmware/devicetree/base/compatible")?;
    Ok(text.map(|text| {
        text.split('\0')
            .filter(|name| !name.is_empty())
            .collect::<Vec<_>>()
            .join(", ")
    }))
}

/// The allowed CPUs a snapshot recorded: `Cpus_allowed_list` of the
/// `proc/self/status` that `placement-study snapshot` saves. `None` when the
/// snapshot has no such file (hwloc's snapshots, hand-made fixtures).
fn saved_allowed_cpus(root: &SysfsRoot) -> Result<Option<CpuSet>> {
    const FILE: &str = "proc/self/status";
    let Some(status) = root.read_text(FILE)? else {
        return Ok(None);
    };
    let Some(list) = status
        .lines()
        .find_map(|line| line.strip_prefix("Cpus_allowed_list:"))
    else {
        return Ok(None);
    };
    parse_list(list)
        .map(Some)
        .map_err(|e| anyhow!("{}: Cpus_allowed_list: {e}", root.name(FILE)))
}

/// `osrelease`, or on the live system without /proc, `uname -r`.
fn read_kernel(root: &SysfsRoot) -> Result<Option<String>> {
    let release = root.read_value("proc/sys/kernel/osrelease")?;
    if release.is_some() || !root.is_live() {
        return Ok(release);
    }
    let uname = nix::sys::utsname::uname().context("uname")?;
    Ok(Some(uname.release().to_string_lossy().into_owned()))
}

/// Turbo on or off, and the file that said so: `intel_pstate/no_turbo`
/// (inverted), else the global `cpufreq/boost`, else per-policy `boost`
/// (amd-pstate), on when any policy boosts.
fn read_turbo(root: &SysfsRoot, policies: &[String]) -> Result<(Option<bool>, Option<String>)> {
    if let Some(disabled) = read_flag(root, &format!("{CPU_DIR}/intel_pstate/no_turbo"))? {
        return Ok((Some(!disabled), Some("intel_pstate/no_turbo".to_owned())));
    }
    if let Some(boost) = read_flag(root, &format!("{CPUFREQ_DIR}/boost"))? {
        return Ok((Some(boost), Some("cpufreq/boost".to_owned())));
    }
    let mut any_policy = None;
    // Every policy has the same files: none boosts unless the first can.
    let first_can_boost = policies
        .first()
        .is_some_and(|first| root.exists(&format!("{first}/boost")));
    for policy in policies.iter().filter(|_| first_can_boost) {
        if let Some(boost) = read_flag(root, &format!("{policy}/boost"))? {
            any_policy = Some(any_policy.unwrap_or(false) || boost);
        }
    }
    Ok((
        any_policy,
        any_policy.map(|_| "cpufreq/policy*/boost".to_owned()),
    ))
}

/// The distinct governors and the scaling driver, from the cpufreq policy
/// folders or, on kernels without them, each online CPU's `cpufreq/`.
fn read_cpufreq(
    root: &SysfsRoot,
    policies: &[String],
    online: &CpuSet,
) -> Result<(Vec<String>, Option<String>)> {
    let mut dirs = policies.to_vec();
    if dirs.is_empty() {
        dirs = online
            .iter()
            .map(|cpu| format!("{CPU_DIR}/cpu{cpu}/cpufreq"))
            .filter(|dir| root.exists(dir))
            .collect();
    }
    let mut governors = BTreeSet::new();
    let mut driver = None;
    if let Some(first) = dirs.first() {
        // Every policy (or CPU) has the same files: the first one tells.
        root.list_dir(first)?;
    }
    for dir in &dirs {
        governors.extend(root.read_value(&format!("{dir}/scaling_governor"))?);
        if driver.is_none() {
            driver = root.read_value(&format!("{dir}/scaling_driver"))?;
        }
    }
    Ok((governors.into_iter().collect(), driver))
}

/// The `cpufreq/policyN` folders (relative to the root), in numeric order.
fn cpufreq_policies(root: &SysfsRoot) -> Result<Vec<String>> {
    let mut numbered: Vec<(u32, &str)> = Vec::new();
    let names = root.list_dir(CPUFREQ_DIR)?;
    for name in names.iter() {
        if let Some(number) = name.strip_prefix("policy").and_then(|n| n.parse().ok()) {
            numbered.push((number, name));
        }
    }
    numbered.sort_unstable();
    if let Some((_, first)) = numbered.first() {
        // Every policy has the same files: the first one's listing tells.
        root.list_dir(&format!("{CPUFREQ_DIR}/{first}"))?;
    }
    Ok(numbered
        .into_iter()
        .map(|(_, name)| format!("{CPUFREQ_DIR}/{name}"))
        .collect())
}

/// Registered core PMUs: `cpu` (or `cpu_core`, `cpu_atom`, ... on hybrids)
/// on x86, `armv8_pmuv3_0` and friends on Arm. Uncore and software PMUs do
/// not count toward `hardware_pmu`.
/// How the kernel names CPU PMUs: `cpu` (x86: `cpu`, `cpu_core`,
/// `cpu_atom`), `armv` (Arm's PMUv3 driver: `armv8_pmuv3_0`,
/// `armv8_cortex_a72`), `apple_` (Apple M-series on Asahi Linux).
pub const CPU_PMU_PREFIXES: [&str; 3] = ["cpu", "armv", "apple_"];

/// The CPU PMUs the kernel registers (see [`CPU_PMU_PREFIXES`]).
pub fn hardware_pmus(root: &SysfsRoot) -> Result<Vec<String>> {
    Ok(root
        .list_dir(PMU_DIR)?
        .iter()
        .filter(|name| {
            CPU_PMU_PREFIXES
                .iter()
                .any(|prefix| name.starts_with(prefix))
        })
        .cloned()
        .collect())
}

/// The CPU PMUs among `names` that say which CPUs they count on: those
/// with both a `type` and a `cpus` file (a homogeneous machine's one `cpu`
/// PMU has no `cpus`).
fn core_pmus(root: &SysfsRoot, names: &[String]) -> Result<Vec<CorePmu>> {
    let mut pmus = Vec::new();
    for name in names {
        let dir = format!("{PMU_DIR}/{name}");
        let pmu_type = root.read_parsed(&format!("{dir}/type"), "a PMU type number")?;
        let cpus = root.read_cpuset(&[(&format!("{dir}/cpus"), SetForm::List)])?;
        if let (Some(pmu_type), Some(cpus)) = (pmu_type, cpus) {
            pmus.push(CorePmu {
                name: name.clone(),
                pmu_type,
                cpus,
            });
        }
    }
    Ok(pmus)
}

/// A `0`/`1` file.
fn read_flag(root: &SysfsRoot, relative: &str) -> Result<Option<bool>> {
    match root.read_value(relative)?.as_deref() {
        None => Ok(None),
        Some("1") => Ok(Some(true)),
        Some("0") => Ok(Some(false)),
        Some(other) => bail!("{}: expected 0 or 1, found '{other}'", root.name(relative)),
    }
}

/// A CPU list file; absent, empty or `(null)` is the empty set.
fn read_list(root: &SysfsRoot, relative: &str) -> Result<CpuSet> {
    Ok(root
        .read_cpuset(&[(relative, SetForm::List)])?
        .unwrap_or_default())
}

/// `/proc/cpuinfo` holds one block per CPU and only the first is parsed;
/// reading stops once it is complete, so this limit only bounds a file
/// whose first block never ends.
pub const CPUINFO_LIMIT: ReadLimit = ReadLimit {
    max_bytes: 16 << 20,
    expected: "a /proc/cpuinfo file",
};

/// The first processor's block of `/proc/cpuinfo`: the model name and the
/// feature flags (x86 only; other architectures have no `flags` line).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FirstCpuInfo {
    pub model_name: Option<String>,
    pub flags: Option<Vec<String>>,
}

impl FirstCpuInfo {
    fn read(root: &SysfsRoot) -> Result<Self> {
        let path = "proc/cpuinfo";
        let Some(text) = root.read_text_bounded(path, CPUINFO_LIMIT, first_block_complete)? else {
            return Ok(FirstCpuInfo::default());
        };
        FirstCpuInfo::parse(&text).map_err(|why| anyhow!("{}: {why}", root.name(path)))
    }

    /// Parses the first processor's block of a whole `/proc/cpuinfo` text
    /// (or of any prefix holding that block); later blocks are ignored.
    /// The error says what was expected.
    pub fn parse(text: &str) -> Result<Self, String> {
        // Parsing only the first block keeps a 384-CPU cpuinfo cheap.
        let block = first_processor_block(text);
        let parsed = procfs::CpuInfo::from_buf_read(block.as_bytes())
            .map_err(|e| format!("expected cpuinfo lines 'key : value': {e}"))?;
        Ok(FirstCpuInfo {
            model_name: parsed.model_name(0).map(str::to_owned),
            flags: parsed
                .flags(0)
                .map(|flags| flags.into_iter().map(str::to_owned).collect()),
        })
    }

    /// `Some(present)` when there is a flags line to look in.
    fn has_flag(&self, flag: &str) -> Option<bool> {
        self.flags
            .as_ref()
            .map(|flags| flags.iter().any(|f| f == flag))
    }
}

/// From the first `processor` line to the blank line that ends its block
/// (from the start when no line starts with `processor`).
fn first_processor_block(text: &str) -> &str {
    // The line start follows a `\n` (or is 0), so it is a char boundary.
    let block = &text[first_processor_line(text.as_bytes()).unwrap_or(0)..];
    block.find("\n\n").map_or(block, |end| &block[..end])
}

/// Have `bytes` (the start of a cpuinfo) the whole first processor block?
/// Not before a `processor` line was read: a header may come first.
fn first_block_complete(bytes: &[u8]) -> bool {
    first_processor_line(bytes)
        .is_some_and(|start| bytes[start..].windows(2).any(|pair| pair == b"\n\n"))
}

/// Where the first line starting with `processor` starts.
fn first_processor_line(bytes: &[u8]) -> Option<usize> {
    (0..bytes.len())
        .filter(|&at| at == 0 || bytes[at - 1] == b'\n')
        .find(|&at| bytes[at..].starts_with(b"processor"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_block_skips_headers_and_later_cpus() {
        let text = "header: x\n\nprocessor\t: 0\nflags\t: fpu hypervisor\n\nprocessor\t: 1\nflags\t: fpu\n";
        assert_eq!(
            first_processor_block(text),
            "processor\t: 0\nflags\t: fpu hypervisor"
        );
        assert_eq!(first_processor_block("no cpus here"), "no cpus here");
        assert!(!first_block_complete(b"processor: 0\n"));
        assert!(first_block_complete(b"x\n\nprocessor: 0\n\n"));
        assert!(!first_block_complete(b"x\n\n"), "no processor line yet");
    }

    #[test]
    fn cpuinfo_parses_the_first_block() {
        let info = FirstCpuInfo::parse(
            "processor\t: 0\nmodel name\t: Test CPU\nflags\t\t: fpu hypervisor\n\nprocessor\t: 1\n",
        )
        .unwrap();
        assert_eq!(info.model_name.as_deref(), Some("Test CPU"));
        assert_eq!(info.has_flag("hypervisor"), Some(true));
        assert_eq!(FirstCpuInfo::parse("").unwrap(), FirstCpuInfo::default());
    }
}
