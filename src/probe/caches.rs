//! CPU caches from `cpuN/cache/index*/`: one [`Cache`] per instance, with
//! the CPUs that share it.
//!
//! Every CPU lists every cache it uses, so an L3 shared by 64 CPUs appears
//! 64 times. An `index` folder whose shared set was already seen under the
//! same name is that same instance: only its shared set is read, which keeps
//! a large machine to one file per CPU and cache level.

use crate::cpuset::CpuSet;
use crate::probe::model::Cache;
use crate::probe::sysfs::{CPU_DIR, OnlineOnly, SetFiles, SetForm, SiblingSets, SysfsRoot};
use anyhow::{Result, anyhow};
use std::collections::{BTreeSet, HashMap};

/// Where an index folder names the CPUs sharing it, list first.
const SHARED_FILES: [(&str, SetForm); 2] = [
    ("shared_cpu_list", SetForm::List),
    ("shared_cpu_map", SetForm::Mask),
];

/// Every cache instance of the online CPUs, ordered by level, type, then
/// lowest CPU.
pub fn read_caches(root: &SysfsRoot, cpus: &[SiblingSets]) -> Result<Vec<Cache>> {
    let online = CpuSet::from_cpus(cpus.iter().map(|c| c.cpu));
    // The kernel describes the caches of every CPU or of none: the first
    // CPU's folder tells, without a failed open per CPU.
    let Some(first) = cpus.first() else {
        return Ok(Vec::new());
    };
    if !root.exists(&format!("{CPU_DIR}/cpu{}/cache", first.cpu)) {
        return Ok(Vec::new());
    }
    let mut shared_files = SetFiles::new(&SHARED_FILES);
    let mut online_only = OnlineOnly::new(&online);
    // Ordered, not hashed: finding a set that is already there compares
    // shared sets in constant time (see `CpuSet`), where hashing would read
    // all of an L3's CPUs once per CPU.
    let mut seen: BTreeSet<(String, CpuSet)> = BTreeSet::new();
    let mut instances: HashMap<(u32, String, CpuSet), Cache> = HashMap::new();
    for cpu in cpus {
        let cache_dir = format!("{CPU_DIR}/cpu{}/cache", cpu.cpu);
        for index in root.list_dir(&cache_dir)?.iter() {
            if !index.starts_with("index") {
                continue;
            }
            let dir = format!("{cache_dir}/{index}");
            let shared = shared_cpus(root, &mut shared_files, &dir, cpu, &mut online_only)?;
            if !seen.insert((index.clone(), shared.clone())) {
                continue;
            }
            // A new instance: its attributes are opened without listing
            // the folder first. The kernel writes all five, and on a
            // machine with a cache per core a listing (three system calls)
            // per instance costs more than the rare failed open it saves.
            let Some(cache) = read_instance(root, &dir, shared)? else {
                continue;
            };
            let key = (cache.level, cache.kind.clone(), cache.cpus.clone());
            instances.entry(key).or_insert(cache);
        }
    }
    let mut caches: Vec<Cache> = instances.into_values().collect();
    caches.sort_by(|a, b| (a.level, &a.kind, &a.cpus).cmp(&(b.level, &b.kind, &b.cpus)));
    Ok(caches)
}

/// The online CPUs sharing a cache. Some kernels (ia64) write an all-zero
/// map; the cache then belongs to the CPU's core, as hwloc also assumes.
fn shared_cpus(
    root: &SysfsRoot,
    files: &mut SetFiles,
    dir: &str,
    cpu: &SiblingSets,
    online: &mut OnlineOnly,
) -> Result<CpuSet> {
    let read = files.read(root, dir)?.map(|(_, set)| set);
    let shared = online.of(read.unwrap_or_default());
    if shared.contains(cpu.cpu) {
        Ok(shared)
    } else {
        Ok(cpu.core.clone())
    }
}

/// One cache's attributes; `None` for an index folder without a level or
/// type (nothing a reader could call a cache).
fn read_instance(root: &SysfsRoot, dir: &str, cpus: CpuSet) -> Result<Option<Cache>> {
    let Some(level) = root.read_parsed::<u32>(&format!("{dir}/level"), "a cache level number")?
    else {
        return Ok(None);
    };
    let Some(kind) = root.read_value(&format!("{dir}/type"))? else {
        return Ok(None);
    };
    let size_path = format!("{dir}/size");
    let size_bytes = match root.read_value(&size_path)? {
        Some(text) => Some(parse_size(&text).ok_or_else(|| {
            anyhow!(
                "{}: expected a size like 48K or 1M, found '{text}'",
                root.name(&size_path)
            )
        })?),
        None => None,
    };
    Ok(Some(Cache {
        level,
        kind,
        size_bytes,
        line_bytes: root.read_parsed(
            &format!("{dir}/coherency_line_size"),
            "a line size in bytes",
        )?,
        ways: root.read_parsed(&format!("{dir}/ways_of_associativity"), "a number of ways")?,
        cpus,
    }))
}

/// `48K` → 49152; `1M`, `2G` and a bare byte count likewise.
pub fn parse_size(text: &str) -> Option<u64> {
    let (digits, unit) = match text.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((at, _)) => text.split_at(at),
        None => (text, ""),
    };
    let scale: u64 = match unit.trim() {
        "" => 1,
        "K" | "k" | "KB" | "KiB" => 1 << 10,
        "M" | "MB" | "MiB" => 1 << 20,
        "G" | "GB" | "GiB" => 1 << 30,
        _ => return None,
    };
    digits.parse::<u64>().ok()?.checked_mul(scale)
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes_as_the_kernel_writes_them() {
        assert_eq!(parse_size("48K"), Some(48 * 1024));
        assert_eq!(parse_size("266240K"), Some(266_240 * 1024));
        assert_eq!(parse_size("1M"), Some(1 << 20));
        assert_eq!(parse_size("64"), Some(64));
        assert_eq!(parse_size("K"), None);
        assert_eq!(parse_size("12Q"), None);
        assert_eq!(parse_size("99999999999999999999K"), None);
    }
}
