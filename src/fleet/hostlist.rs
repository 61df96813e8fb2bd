//! Hostlists as pdsh and ClusterShell write them (`node[1-3,07],login1`):
//! [`parse_host_list`] expands `report --fleet --hosts`, and
//! [`fold_host_list`] writes the missing hosts back in that syntax.
//!
//! A host name is what pdsh or clush could have labelled a host with
//! ([`is_host_name`]): ASCII letters, digits, `-`, `.` and `_`. A list with
//! anything else in its names is a one-line error, never a host that no
//! engine line could ever match.

use anyhow::{Result, anyhow, bail};
use std::collections::{HashMap, HashSet};

/// Most hosts a hostlist may expand to: far more than a cluster has, and
/// few enough that a typo such as `node[1-99999999]` fails at once instead
/// of filling memory.
pub const MAX_HOSTS: usize = 100_000;

/// The longest host name, as DNS allows (and [`is_host_name`] takes).
const MAX_NAME_LEN: usize = 253;

/// A name pdsh or clush could have labelled a host with: a DNS name, an
/// IPv4 address, or a short name with `_`. No spaces, so a sentence with a
/// colon in it ("Note: …" aside) is not taken for a host.
pub fn is_host_name(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= MAX_NAME_LEN
        && text.bytes().all(is_host_name_byte)
        && text.as_bytes()[0].is_ascii_alphanumeric()
}

fn is_host_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-._".contains(&b)
}

/// Expands a hostlist as pdsh and ClusterShell write it: names separated by
/// commas, each with any number of bracketed ranges, `node[1-3,07]` being
/// node1, node2, node3 and node07 (a bound written with leading zeros pads
/// every number of its range to its width: `[08-10]` is 08, 09, 10), and a
/// step after a slash (`[1-9/4]` is 1, 5, 9). Several brackets in one name
/// multiply: `r[1-2]n[1-2]` is four hosts. Duplicates are dropped, the
/// order kept. At most [`MAX_HOSTS`] hosts, each a name [`is_host_name`]
/// takes the characters of.
///
/// Errors are one line, `--hosts "TEXT": what is wrong; the fix`, with
/// `TEXT` escaped as Rust writes a string (a control character is `\u{1b}`).
pub fn parse_host_list(text: &str) -> Result<Vec<String>> {
    expand(text).map_err(|e| anyhow!("--hosts {text:?}: {e}"))
}

/// [`parse_host_list`], its errors without the `--hosts "TEXT": ` they get.
fn expand(text: &str) -> Result<Vec<String>> {
    let mut hosts = Vec::new();
    let mut seen = HashSet::new();
    for item in split_outside_brackets(text)? {
        let item = item.trim();
        if item.is_empty() {
            continue;
        }
        let groups = name_groups(item)?;
        let count = groups
            .iter()
            .try_fold(1usize, |n, g| n.checked_mul(g.len()))
            .filter(|&n| n <= MAX_HOSTS - hosts.len().min(MAX_HOSTS));
        if count.is_none() {
            bail!(too_many());
        }
        // Every number of a bracket has one width but the unpadded ones,
        // so the longest of each group makes the longest name.
        let longest: usize = groups
            .iter()
            .map(|g| g.iter().map(String::len).max().unwrap_or(0))
            .sum();
        if longest > MAX_NAME_LEN {
            bail!("{longest}-character names, longer than a host name can be ({MAX_NAME_LEN})");
        }
        let mut expanded = vec![String::new()];
        for group in &groups {
            expanded = expanded
                .iter()
                .flat_map(|prefix| group.iter().map(move |part| format!("{prefix}{part}")))
                .collect();
        }
        for host in expanded {
            // The characters are checked part by part; what is left is
            // where a name may not start (`-n1`, `.n1`).
            if !is_host_name(&host) {
                bail!(
                    "{host:?} starts with {:?}; a host name starts with an ASCII letter or \
                     digit, as in node[1-3,07],login1",
                    host.chars().next().unwrap_or(' ')
                );
            }
            if seen.insert(host.clone()) {
                hosts.push(host);
            }
        }
    }
    if hosts.is_empty() {
        bail!("names no host; write hosts as node[1-3,07],login1");
    }
    Ok(hosts)
}

/// Writes `hosts` back as a hostlist, the inverse of [`parse_host_list`]:
/// names that differ only in their last number are folded into a bracket
/// (`node1`, `node2`, `node3`, `node7` → `node[1-3,7]`), zero padding kept.
/// Names keep the order of their first appearance; numbers are sorted. Any
/// strings at all are folded without a panic, whatever their characters.
pub fn fold_host_list(hosts: &[String]) -> String {
    // Names as (prefix, suffix) around their last number, with the numbers'
    // digits; a name without a number is a group of its own. Trimming
    // whole characters keeps every cut on a character boundary.
    let mut groups: Vec<(&str, &str, Vec<&str>)> = Vec::new();
    let mut index: HashMap<(&str, &str, bool), usize> = HashMap::new();
    for host in hosts {
        let end = host.trim_end_matches(|c: char| !c.is_ascii_digit()).len();
        let start = host[..end]
            .trim_end_matches(|c: char| c.is_ascii_digit())
            .len();
        let (prefix, digits, suffix) = if end == 0 {
            (host.as_str(), "", "")
        } else {
            (&host[..start], &host[start..end], &host[end..])
        };
        let at = *index
            .entry((prefix, suffix, digits.is_empty()))
            .or_insert_with(|| {
                groups.push((prefix, suffix, Vec::new()));
                groups.len() - 1
            });
        groups[at].2.push(digits);
    }
    groups
        .into_iter()
        .map(|(prefix, suffix, mut digits)| {
            digits.sort_by_key(|d| (d.len(), *d));
            digits.dedup();
            match digits.as_slice() {
                [one] => format!("{prefix}{one}{suffix}"),
                _ => format!("{prefix}[{}]{suffix}", fold_numbers(&digits)),
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// Sorted digit strings as ranges: `1,2,3,7` → `1-3,7`; a range keeps one
/// width (`08,09,10` → `08-10`; `9,10` → `9-10`).
fn fold_numbers(digits: &[&str]) -> String {
    let padded = |d: &str| d.len() > 1 && d.starts_with('0');
    let mut ranges: Vec<(&str, &str)> = Vec::new();
    for &d in digits {
        if let Some((low, high)) = ranges.last_mut() {
            let next = high.parse::<u64>().ok().and_then(|n| n.checked_add(1));
            let width = if padded(low) { low.len() } else { 0 };
            if next.is_some_and(|n| format!("{n:0width$}") == d) {
                *high = d;
                continue;
            }
        }
        ranges.push((d, d));
    }
    ranges
        .iter()
        .map(|(low, high)| {
            if low == high {
                low.to_string()
            } else {
                format!("{low}-{high}")
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

fn too_many() -> String {
    format!("expands to more than {MAX_HOSTS} hosts; is a range mistyped?")
}

/// The list's names: split at the commas outside brackets.
fn split_outside_brackets(text: &str) -> Result<Vec<&str>> {
    let mut items = Vec::new();
    let mut start = 0;
    let mut open: Option<usize> = None;
    for (at, c) in text.char_indices() {
        match c {
            '[' if open.is_some() => bail!(syntax(text, at, "a \"[\" inside brackets")),
            '[' => open = Some(at),
            ']' if open.is_none() => bail!(syntax(text, at, "a \"]\" that closes nothing")),
            ']' => open = None,
            ',' if open.is_none() => {
                items.push(&text[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    if let Some(at) = open {
        bail!(syntax(text, at, "a \"[\" that is never closed"));
    }
    items.push(&text[start..]);
    Ok(items)
}

/// `what` at byte `at` of `text`, told as the character it is (the first
/// is 1).
fn syntax(text: &str, at: usize, what: &str) -> String {
    format!(
        "{what} at character {}; write hosts as node[1-3,07],login1",
        text[..at].chars().count() + 1
    )
}

/// One name of the list as its parts: each literal text a group of one,
/// each bracket the group of its numbers. The brackets multiply, so their
/// product is checked as each is expanded: `n[1-9999][1-9999]…` fails at
/// its second bracket instead of filling memory.
fn name_groups(item: &str) -> Result<Vec<Vec<String>>> {
    let mut groups = Vec::new();
    let mut names = 1usize;
    let mut rest = item;
    while let Some(open) = rest.find('[') {
        let close = open + rest[open..].find(']').unwrap_or(rest.len() - open);
        check_name_part(&rest[..open])?;
        if open > 0 {
            groups.push(vec![rest[..open].to_string()]);
        }
        let numbers = expand_ranges(&rest[open + 1..close])?;
        names = names
            .checked_mul(numbers.len())
            .filter(|&n| n <= MAX_HOSTS)
            .ok_or_else(|| anyhow!(too_many()))?;
        groups.push(numbers);
        rest = rest.get(close + 1..).unwrap_or("");
    }
    check_name_part(rest)?;
    if !rest.is_empty() {
        groups.push(vec![rest.to_string()]);
    }
    Ok(groups)
}

/// The literal text of a name holds only what a host name may.
fn check_name_part(part: &str) -> Result<()> {
    match part
        .chars()
        .find(|&c| !c.is_ascii() || !is_host_name_byte(c as u8))
    {
        None => Ok(()),
        Some(space) if space.is_whitespace() => {
            bail!("{space:?} in a host name; separate hosts with commas, as in node[1-3,07],login1")
        }
        Some(bad) => bail!(
            "{bad:?} in a host name; host names are ASCII letters, digits, '-', '.' and '_', \
             as in node[1-3,07],login1"
        ),
    }
}

/// The numbers of one bracket: `1-3,07,10-20/5`.
fn expand_ranges(ranges: &str) -> Result<Vec<String>> {
    let mut numbers = Vec::new();
    for range in ranges.split(',') {
        let range = range.trim();
        let (span, step) = match range.split_once('/') {
            Some((span, step)) => (span, number(step)?),
            None => (range, 1),
        };
        let (low_text, high_text) = span.split_once('-').unwrap_or((span, span));
        let (low_text, high_text) = (low_text.trim(), high_text.trim());
        let (low, high) = (number(low_text)?, number(high_text)?);
        if low > high {
            bail!("the range {span} runs backwards; write it low-high");
        }
        if step == 0 {
            bail!("the step of {range} is 0; a step is 1 or more");
        }
        if (high - low) / step >= MAX_HOSTS as u64 {
            bail!(too_many());
        }
        let width = if low_text.len() > 1 && low_text.starts_with('0') {
            low_text.len()
        } else {
            0
        };
        if width > MAX_NAME_LEN {
            bail!(
                "{low_text} pads its numbers to {width} digits, longer than a host name can be \
                 ({MAX_NAME_LEN}); is a bound padded with too many zeros?"
            );
        }
        numbers.extend(
            (low..=high)
                .step_by(step as usize)
                .map(|n| format!("{n:0width$}")),
        );
        if numbers.len() > MAX_HOSTS {
            bail!(too_many());
        }
    }
    Ok(numbers)
}

fn number(digits: &str) -> Result<u64> {
    let digits = digits.trim();
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        bail!("{digits:?} in brackets is not a number; ranges are written as [1-3,07]");
    }
    digits
        .parse()
        .map_err(|_| anyhow!("{digits} is too large a number"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts(text: &str) -> Vec<String> {
        parse_host_list(text).unwrap()
    }

    #[test]
    fn hostlists_expand_as_pdsh_and_clush_do() {
        assert_eq!(
            hosts("node[1-3,07],login1"),
            ["node1", "node2", "node3", "node07", "login1"]
        );
        assert_eq!(hosts("n[08-10]"), ["n08", "n09", "n10"]);
        assert_eq!(hosts("n[ 08 - 10 ]"), ["n08", "n09", "n10"]);
        assert_eq!(hosts("n[1-9/4]"), ["n1", "n5", "n9"]);
        assert_eq!(hosts("r[1-2]n[1-2]"), ["r1n1", "r1n2", "r2n1", "r2n2"]);
        assert_eq!(hosts("[1-2].example"), ["1.example", "2.example"]);
        assert_eq!(hosts(" a, b ,a,"), ["a", "b"]);
        assert_eq!(hosts("gpu_1.rack-2"), ["gpu_1.rack-2"]);
        assert_eq!(hosts("node[1-3]").len(), 3);
    }

    #[test]
    fn hostlists_fold_back() {
        let fold = |text: &str| fold_host_list(&hosts(text));
        assert_eq!(fold("node[1-3,7],login1"), "node[1-3,7],login1");
        assert_eq!(fold("n[08-10]"), "n[08-10]");
        assert_eq!(fold("n[9-11]"), "n[9-11]");
        assert_eq!(fold("n[7,1-2],gw,n5"), "n[1-2,5,7],gw");
        assert_eq!(fold("r1n[1-2],r2n1"), "r1n[1-2],r2n1");
        assert_eq!(fold("a,b"), "a,b");
        for text in [
            "node[1-3,07],login1,x[001-003]y",
            "r[1-2]n[1-3]",
            "n[1-9/4],m",
        ] {
            assert_folds_back(text);
        }
    }

    /// Folding the hosts of `text` and expanding that again gives them back.
    fn assert_folds_back(text: &str) {
        let folded = fold_host_list(&hosts(text));
        let mut again = hosts(&folded);
        let mut first = hosts(text);
        again.sort();
        first.sort();
        assert_eq!(again, first, "{text} → {folded}");
    }

    #[test]
    fn bad_hostlists_are_one_line_errors() {
        for (text, says) in [
            ("node[1-", "never closed"),
            ("node1-3]", "closes nothing"),
            ("node[[1]]", "inside brackets"),
            ("node[3-1]", "runs backwards"),
            ("node[a-b]", "not a number"),
            ("node[]", "not a number"),
            ("node[1-3/0]", "step"),
            ("node1 node2", "separate hosts with commas"),
            ("node[1-200000]", "more than 100000 hosts"),
            ("a[1-1000]b[1-1000]", "more than 100000 hosts"),
            // A few hundred bytes that would multiply to gigabytes: refused
            // at the second bracket.
            (&"[0-99999]".repeat(40), "more than 100000 hosts"),
            (
                ".n1",
                "starts with '.'; a host name starts with an ASCII letter",
            ),
            ("n1,-[1-2]", "\"-1\" starts with '-'"),
            (",", "names no host"),
            ("ä[1-2]", "'ä' in a host name; host names are ASCII letters"),
            ("node\u{1b}1", "'\\u{1b}' in a host name"),
            ("a\nb", "'\\n' in a host name"),
            ("a\tb", "'\\t' in a host name; separate hosts with commas"),
            ("n[１-2]", "\"１\" in brackets is not a number"),
            ("n[1-2\u{7f}]", "\"2\\u{7f}\" in brackets is not a number"),
            ("n:1", "':' in a host name"),
            (
                &format!("n[{}1-2]", "0".repeat(300)),
                "longer than a host name",
            ),
            (
                &format!("{}[1-2]", "n".repeat(300)),
                "longer than a host name",
            ),
        ] {
            let error = parse_host_list(text).unwrap_err().to_string();
            assert!(error.contains(says), "{text:?}: {error}");
            assert!(error.starts_with("--hosts \""), "{text:?}: {error}");
            assert!(!error.chars().any(char::is_control), "{text:?}: {error}");
        }
    }

    /// Every string of up to four characters from an alphabet of what
    /// hostlists are made of, and of what they must refuse (non-ASCII
    /// letters and digits, controls, a bidi override): each parses or is a
    /// one-line error, what parses folds back, and folding any of them,
    /// parsed or not, never panics.
    #[test]
    fn no_string_makes_the_hostlist_code_panic() {
        const ALPHABET: [char; 16] = [
            'n', '1', '0', '[', ']', ',', '-', '/', ' ', '.', 'ä', '１', '\u{1b}', '\n',
            '\u{202e}', '€',
        ];
        let mut texts = vec![String::new()];
        let mut all: Vec<String> = Vec::new();
        for _ in 0..4 {
            texts = texts
                .iter()
                .flat_map(|t| ALPHABET.iter().map(move |c| format!("{t}{c}")))
                .collect();
            all.extend(texts.iter().cloned());
        }
        let mut parsed = 0;
        for text in &all {
            match parse_host_list(text) {
                Ok(_) => {
                    parsed += 1;
                    assert_folds_back(text);
                }
                Err(error) => {
                    let error = error.to_string();
                    assert!(!error.chars().any(char::is_control), "{text:?}: {error}");
                }
            }
        }
        assert!(parsed > 1000, "only {parsed} of {} parsed", all.len());
        for names in all.chunks(7) {
            let _ = fold_host_list(names);
        }
        let odd = ["ä1", "é", "1ä", "𝟘9", "n€7", "7€", "", "0", "\u{1b}1"].map(String::from);
        assert_eq!(fold_host_list(&odd), "ä1,é,1ä,𝟘9,n€7,7€,,0,\u{1b}1");
    }

    #[test]
    fn host_names_are_what_engines_label_hosts_with() {
        for name in ["node1", "10.0.0.7", "gpu_1", "a-b.example"] {
            assert!(is_host_name(name), "{name}");
        }
        for text in ["", "-x", "a b", "ä", "a:b", &"a".repeat(254)] {
            assert!(!is_host_name(text), "{text}");
        }
    }
}
