//! Sets of logical CPU numbers, and the two text forms the kernel writes them
//! in: lists (`0-3,8-11`) and hex masks (`000000ff,ffffffff`).

use serde::{Deserialize, Serialize};
use std::fmt;

/// A sorted, de-duplicated set of logical CPU numbers.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CpuSet(Vec<u32>);

impl CpuSet {
    /// Builds a set from any CPU numbers (sorted and de-duplicated here).
    pub fn from_cpus(cpus: impl IntoIterator<Item = u32>) -> Self {
        let mut v: Vec<u32> = cpus.into_iter().collect();
        v.sort_unstable();
        v.dedup();
        CpuSet(v)
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
    pub fn intersection(&self, other: &CpuSet) -> CpuSet {
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

/// Strips what real sysfs files carry around the value: whitespace, `\n`,
/// NUL bytes (some kernels write `\n\0`).
pub fn trim_sysfs(text: &str) -> &str {
    text.trim_matches(|c: char| c.is_whitespace() || c == '\0')
}

/// Parses the list form (`0-3,8-11`, `5`, empty).
pub fn parse_list(text: &str) -> Result<CpuSet, String> {
    let text = trim_sysfs(text);
    let mut cpus = Vec::new();
    if text.is_empty() {
        return Ok(CpuSet::default());
    }
    for part in text.split(',') {
        let part = part.trim();
        let bad = || format!("'{part}' in CPU list '{text}' is not N or N-M");
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (
                a.trim().parse::<u32>().map_err(|_| bad())?,
                b.trim().parse::<u32>().map_err(|_| bad())?,
            ),
            None => {
                let n = part.parse::<u32>().map_err(|_| bad())?;
                (n, n)
            }
        };
        if hi < lo {
            return Err(format!(
                "range '{part}' in CPU list '{text}' runs backwards"
            ));
        }
        if hi - lo > 1 << 20 {
            return Err(format!(
                "range '{part}' in CPU list '{text}' is implausibly large"
            ));
        }
        cpus.extend(lo..=hi);
    }
    Ok(CpuSet::from_cpus(cpus))
}

/// Parses the hex mask form: comma-separated 32-bit words, most significant
/// first (`000000ff,ffffffff`), any number of words.
pub fn parse_mask(text: &str) -> Result<CpuSet, String> {
    let text = trim_sysfs(text);
    if text.is_empty() {
        return Ok(CpuSet::default());
    }
    let words: Vec<&str> = text.split(',').collect();
    let mut cpus = Vec::new();
    for (i, word) in words.iter().rev().enumerate() {
        let word = word.trim().trim_start_matches("0x");
        if word.is_empty() || word.len() > 8 {
            return Err(format!(
                "'{word}' in CPU mask '{text}' is not a 32-bit hex word"
            ));
        }
        let bits = u32::from_str_radix(word, 16)
            .map_err(|_| format!("'{word}' in CPU mask '{text}' is not hex"))?;
        for bit in 0..32 {
            if bits & (1 << bit) != 0 {
                cpus.push(i as u32 * 32 + bit);
            }
        }
    }
    Ok(CpuSet::from_cpus(cpus))
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
    }
}
