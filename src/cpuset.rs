//! Sets of logical CPU numbers, and the two text forms the kernel writes them
//! in: lists (`0-3,8-11`) and hex masks (`000000ff,ffffffff`).

use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// A sorted, de-duplicated set of logical CPU numbers.
///
/// Immutable and shared: a clone shares the numbers, and a set compares
/// equal to a clone of itself without reading them. On a machine of 8192
/// CPUs in one package, each CPU's package set is 8192 numbers; copies
/// and element-wise comparisons per CPU would cost time and memory
/// quadratic in the CPU count.
///
/// Serialized as a JSON array of numbers; reading one back sorts and
/// de-duplicates it and refuses CPU numbers not below [`MAX_CPUS`].
#[derive(Clone, Debug, Default, Eq)]
pub struct CpuSet(Arc<[u32]>);

/// By content, as equality is.
impl Hash for CpuSet {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.hash(state);
    }
}

impl PartialEq for CpuSet {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.0 == other.0
    }
}

impl Ord for CpuSet {
    fn cmp(&self, other: &Self) -> Ordering {
        if Arc::ptr_eq(&self.0, &other.0) {
            return Ordering::Equal;
        }
        self.0.cmp(&other.0)
    }
}

impl PartialOrd for CpuSet {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Serialize for CpuSet {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for CpuSet {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let cpus = Vec::<u32>::deserialize(deserializer)?;
        for &cpu in &cpus {
            check_cpu_number(cpu.into()).map_err(serde::de::Error::custom)?;
        }
        Ok(CpuSet::from_cpus(cpus))
    }
}

/// Written by hand, as its Serialize is: an array of CPU numbers, ascending,
/// each below [`MAX_CPUS`] (what Deserialize refuses otherwise).
impl schemars::JsonSchema for CpuSet {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "CpuSet".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "Logical CPU numbers, ascending.",
            "type": "array",
            "items": {"type": "integer", "minimum": 0, "maximum": MAX_CPUS - 1},
            "uniqueItems": true,
        })
    }
}

impl CpuSet {
    /// Builds a set from any CPU numbers (sorted and de-duplicated here).
    pub fn from_cpus(cpus: impl IntoIterator<Item = u32>) -> Self {
        let mut v: Vec<u32> = cpus.into_iter().collect();
        v.sort_unstable();
        v.dedup();
        CpuSet(v.into())
    }
    pub fn cpus(&self) -> &[u32] {
        &self.0
    }
    pub fn len(&self) -> usize {
        self.0.len()
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    pub fn contains(&self, cpu: u32) -> bool {
        self.0.binary_search(&cpu).is_ok()
    }
    pub fn first(&self) -> Option<u32> {
        self.0.first().copied()
    }
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.0.iter().copied()
    }
    pub fn last(&self) -> Option<u32> {
        self.0.last().copied()
    }
    /// Every pair of its CPUs, the lower first, in order: 0-1, 0-2, 1-2.
    pub fn pairs(&self) -> impl Iterator<Item = [u32; 2]> + '_ {
        let cpus = &self.0;
        cpus.iter()
            .enumerate()
            .flat_map(move |(i, &a)| cpus[i + 1..].iter().map(move |&b| [a, b]))
    }
    /// The CPUs of `self` also in `other`. When `other` is one unbroken
    /// range holding all of `self` (the online CPUs nearly always are), the
    /// answer is `self` itself, shared, in constant time: probing
    /// restricts every CPU's package set to the online CPUs.
    pub fn intersection(&self, other: &CpuSet) -> CpuSet {
        if let (Some(low), Some(high)) = (other.first(), other.last()) {
            let unbroken = (high - low) as usize + 1 == other.len();
            let within = self.first().is_some_and(|first| first >= low)
                && self.last().is_some_and(|last| last <= high);
            if unbroken && within {
                return self.clone();
            }
        }
        CpuSet(self.iter().filter(|c| other.contains(*c)).collect())
    }
}

impl FromIterator<u32> for CpuSet {
    fn from_iter<I: IntoIterator<Item = u32>>(iter: I) -> Self {
        CpuSet::from_cpus(iter)
    }
}

/// Prints the kernel's list form, e.g. `0-3,8-11`; an empty set prints nothing.
impl fmt::Display for CpuSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        let mut i = 0;
        while i < self.0.len() {
            let start = self.0[i];
            let mut end = start;
            while i + 1 < self.0.len() && self.0[i + 1] == end + 1 {
                i += 1;
                end = self.0[i];
            }
            if !first {
                f.write_str(",")?;
            }
            first = false;
            if start == end {
                write!(f, "{start}")?;
            } else {
                write!(f, "{start}-{end}")?;
            }
            i += 1;
        }
        Ok(())
    }
}

/// CPU numbers must be below this: above the largest `NR_CPUS` any Linux
/// architecture builds with (8192, x86_64 `MAXSMP`), with room to spare. A
/// larger number in a file is corruption, and refusing it bounds every set
/// (and every mask rendered from one) to 2 KiB of bits.
pub const MAX_CPUS: u32 = 16384;

/// 32-bit words a mask of [`MAX_CPUS`] CPUs needs: masks with more are refused.
pub const MAX_MASK_WORDS: usize = MAX_CPUS as usize / 32;

/// Two CPUs as a pair, the lower first: the key every pair map uses.
pub fn cpu_pair(a: u32, b: u32) -> [u32; 2] {
    [a.min(b), a.max(b)]
}

/// Strips what real sysfs files carry around the value: whitespace, `\n`,
/// NUL bytes (some kernels write `\n\0`).
pub fn trim_sysfs(text: &str) -> &str {
    text.trim_matches(|c: char| c.is_whitespace() || c == '\0')
}

/// The start of `text`, escaped and short enough to quote in a one-line
/// error (a garbled file may hold megabytes, newlines or control bytes).
pub fn excerpt(text: &str) -> String {
    const LIMIT: usize = 60;
    match text.char_indices().nth(LIMIT) {
        Some((cut, _)) => format!("{}...", text[..cut].escape_debug()),
        None => text.escape_debug().to_string(),
    }
}

/// `cpu` itself, or an error naming it and [`MAX_CPUS`].
pub fn check_cpu_number(cpu: u64) -> Result<u32, String> {
    u32::try_from(cpu)
        .ok()
        .filter(|&cpu| cpu < MAX_CPUS)
        .ok_or_else(|| format!("CPU {cpu} is past the limit: CPU numbers must be below {MAX_CPUS}"))
}

/// `N` from a name like `cpuN` or `puN`: `prefix`, then decimal digits
/// without sign or leading zero, as the kernel and hwloc write them. `None`
/// for any other name (`cpufreq`, `cpu+1`, `pu07`); an error naming the name
/// when N is not below [`MAX_CPUS`].
pub fn numbered_cpu(name: &str, prefix: &str) -> Result<Option<u32>, String> {
    let Some(digits) = name.strip_prefix(prefix) else {
        return Ok(None);
    };
    let canonical = !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits == "0" || !digits.starts_with('0'));
    if !canonical {
        return Ok(None);
    }
    // Digits only, so parsing fails only on overflow: over the limit too.
    let cpu = digits.parse::<u64>().unwrap_or(u64::MAX);
    check_cpu_number(cpu)
        .map(Some)
        .map_err(|why| format!("{}: {why}", excerpt(name)))
}

/// Parses the list form (`0-3,8-11`, `5`, empty). Every CPU number must be
/// below [`MAX_CPUS`].
pub fn parse_list(text: &str) -> Result<CpuSet, String> {
    let text = trim_sysfs(text);
    if text.is_empty() {
        return Ok(CpuSet::default());
    }
    // Ranges first, expanded once merged: a list repeating `0-16383` a
    // million times must cost a million ranges, not 16 billion CPUs.
    let mut ranges: Vec<(u32, u32)> = Vec::new();
    for part in text.split(',') {
        let part = part.trim();
        let bad = || {
            format!(
                "'{}' in CPU list '{}' is not N or N-M",
                excerpt(part),
                excerpt(text)
            )
        };
        let number = |digits: &str| -> Result<u32, String> {
            let digits = digits.trim();
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad());
            }
            // Digits only, so parsing fails only on overflow: over the limit too.
            check_cpu_number(digits.parse::<u64>().unwrap_or(u64::MAX))
                .map_err(|why| format!("{why}, in CPU list '{}'", excerpt(text)))
        };
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (number(a)?, number(b)?),
            None => {
                let n = number(part)?;
                (n, n)
            }
        };
        if hi < lo {
            return Err(format!(
                "range '{part}' in CPU list '{}' runs backwards",
                excerpt(text)
            ));
        }
        ranges.push((lo, hi));
    }
    ranges.sort_unstable();
    let mut cpus = Vec::new();
    let mut next = 0; // The lowest CPU not yet pushed.
    for (lo, hi) in ranges {
        let from = lo.max(next);
        if from <= hi {
            cpus.extend(from..=hi);
            next = hi + 1;
        }
    }
    Ok(CpuSet(cpus.into()))
}

/// Parses the hex mask form: comma-separated 32-bit words, most significant
/// first (`000000ff,ffffffff`), at most [`MAX_MASK_WORDS`] of them.
pub fn parse_mask(text: &str) -> Result<CpuSet, String> {
    let text = trim_sysfs(text);
    if text.is_empty() {
        return Ok(CpuSet::default());
    }
    let mut cpus = Vec::new();
    // Least significant word first, lowest bit first: already sorted.
    // Bytes, not chars: a 256-CPU machine has hundreds of 32-word masks.
    for (index, word) in text.as_bytes().rsplit(|&b| b == b',').enumerate() {
        if index == MAX_MASK_WORDS {
            return Err(format!(
                "CPU mask '{}' has more than {MAX_MASK_WORDS} 32-bit words: CPU numbers must be below {MAX_CPUS}",
                excerpt(text)
            ));
        }
        let word = word.trim_ascii();
        let digits = word.strip_prefix(b"0x").unwrap_or(word);
        if digits == b"00000000" {
            continue; // The common case, quickly.
        }
        let bits = (1..=8).contains(&digits.len()).then(|| {
            digits.iter().try_fold(0u32, |bits, &digit| {
                Some(bits << 4 | char::from(digit).to_digit(16)?)
            })
        });
        let Some(Some(mut bits)) = bits else {
            return Err(format!(
                "'{}' in CPU mask '{}' is not a 32-bit hex word",
                excerpt(&String::from_utf8_lossy(word)),
                excerpt(text)
            ));
        };
        // Only the set bits: sibling masks are mostly zero words.
        while bits != 0 {
            cpus.push(index as u32 * 32 + bits.trailing_zeros());
            bits &= bits - 1;
        }
    }
    Ok(CpuSet(cpus.into()))
}

/// Renders the hex mask form, as the kernel does (words of 8 hex digits).
pub fn format_mask(set: &CpuSet) -> String {
    let top = set.iter().max().unwrap_or(0);
    let nwords = top as usize / 32 + 1;
    let mut words = vec![0u32; nwords];
    for cpu in set.iter() {
        words[cpu as usize / 32] |= 1 << (cpu % 32);
    }
    words
        .iter()
        .rev()
        .map(|w| format!("{w:08x}"))
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_and_mask_agree_on_real_forms() {
        assert_eq!(parse_list("0-3,8-11\n").unwrap().to_string(), "0-3,8-11");
        assert_eq!(parse_mask("00000f0f\n\0").unwrap().to_string(), "0-3,8-11");
        assert_eq!(parse_mask("00000001,00000000").unwrap().to_string(), "32");
        assert!(parse_list("").unwrap().is_empty());
        assert!(parse_mask("\n\0").unwrap().is_empty());
    }

    #[test]
    fn garbage_is_an_error_quoting_the_text() {
        assert!(parse_list("0-x").unwrap_err().contains("0-x"));
        assert!(parse_list("5-2").is_err());
        assert!(parse_mask("zz").unwrap_err().contains("zz"));
        assert!(parse_mask("(null)").is_err());
        assert!(parse_mask("+f").is_err());
        assert!(parse_list("+1").is_err());
    }

    #[test]
    fn cpu_numbers_stop_below_the_limit() {
        assert_eq!(parse_list("16383").unwrap().to_string(), "16383");
        let error = parse_list("0,16384").unwrap_err();
        assert!(
            error.contains("16384") && error.contains("below 16384"),
            "{error}"
        );
        assert!(
            parse_list("99999999999999999999")
                .unwrap_err()
                .contains("limit")
        );
        let widest = vec!["00000000"; MAX_MASK_WORDS].join(",");
        assert!(parse_mask(&widest).unwrap().is_empty());
        let error = parse_mask(&format!("1,{widest}")).unwrap_err();
        assert!(error.contains("more than 512"), "{error}");
    }

    #[test]
    fn repeated_ranges_merge() {
        assert_eq!(parse_list("4-7,0-5,2,9").unwrap().to_string(), "0-7,9");
        let many = vec!["0-16383"; 10_000].join(",");
        assert_eq!(parse_list(&many).unwrap().len(), 16384);
    }

    #[test]
    fn numbered_names() {
        assert_eq!(numbered_cpu("cpu12", "cpu"), Ok(Some(12)));
        assert_eq!(numbered_cpu("pu0", "pu"), Ok(Some(0)));
        for other in ["cpufreq", "cpu", "cpu+1", "cpu07", "pu-1", "node0"] {
            assert_eq!(numbered_cpu(other, "cpu"), Ok(None), "{other}");
        }
        assert!(
            numbered_cpu("cpu16384", "cpu")
                .unwrap_err()
                .contains("cpu16384")
        );
        assert!(numbered_cpu("pu99999999999999999999", "pu").is_err());
    }

    #[test]
    fn a_set_within_an_unbroken_range_is_kept_shared() {
        let package = parse_list("0-8191").unwrap();
        let online = parse_list("0-8191").unwrap();
        let kept = package.intersection(&online);
        assert!(Arc::ptr_eq(&kept.0, &package.0), "shared, not copied");
        let gapped = parse_list("0-99,101-8191").unwrap();
        assert_eq!(package.intersection(&gapped).len(), 8191);
        let beyond = parse_list("0-4095").unwrap();
        assert_eq!(package.intersection(&beyond), beyond);
        assert!(CpuSet::default().intersection(&online).is_empty());
        assert_eq!(package, package.clone());
        assert_eq!(package, CpuSet::from_cpus(0..8192), "equal by content too");
    }

    #[test]
    fn reading_a_set_back_checks_it() {
        let set: CpuSet = serde_json::from_str("[3,1,3]").unwrap();
        assert_eq!(set.cpus(), &[1, 3]);
        assert!(serde_json::from_str::<CpuSet>("[16384]").is_err());
    }

    #[test]
    fn excerpts_are_one_short_line() {
        assert_eq!(excerpt("a\nb"), "a\\nb");
        assert!(excerpt(&"x".repeat(1000)).len() < 70);
    }
}
