//! hwloc-gather-cpuid's dump format, read and written.
//!
//! A dump is a folder with one file per logical CPU, `puN`, holding one line
//! per recorded CPUID query:
//!
//! ```text
//! # mask e[abcd]x => e[abcd]x
//! 1 0 0 0 0 => 16 756e6547 6c65746e 49656e69
//! 5 4 0 1 0 => 7c004122 1c0003f 3f 0
//! ```
//!
//! `MASK EAX EBX ECX EDX => EAX EBX ECX EDX`, hex without `0x`. The mask says
//! which inputs a query must match: bit 0 EAX (the leaf), bit 1 EBX, bit 2 ECX
//! (the subleaf), bit 3 EDX. The first matching line answers; a query that no
//! line matches reads as zeros, as in hwloc.

use crate::cpuset::{excerpt, numbered_cpu};
use crate::input::{ReadLimit, read_bounded};
use crate::probe::recording::CPUID_DIR;
use crate::probe::sysfs::SysfsRoot;
use anyhow::{Context, Result, anyhow, bail};
use raw_cpuid::{CpuIdReader, CpuIdResult};
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

/// Mask bit: the leaf (EAX input) must match.
const MATCH_LEAF: u32 = 0x1;
/// Mask bit: the subleaf (ECX input) must match.
const MATCH_SUBLEAF: u32 = 0x4;

/// Written atop every `puN` file, as hwloc-gather-cpuid does.
const HEADER: &str = "# mask e[abcd]x => e[abcd]x";

/// One recorded query and its answer.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Entry {
    mask: u32,
    /// EAX, EBX, ECX, EDX given to the instruction.
    input: [u32; 4],
    output: CpuIdResult,
}

impl Entry {
    fn answers(&self, leaf: u32, subleaf: u32) -> bool {
        let wanted = [leaf, 0, subleaf, 0];
        (0..4).all(|reg| self.mask & (1 << reg) == 0 || self.input[reg] == wanted[reg])
    }
}

/// Everything recorded from one logical CPU's CPUID: a `puN` file in memory.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CpuidRecord {
    entries: Vec<Entry>,
}

impl CpuidRecord {
    /// Records the answer to `leaf` (and `subleaf`, for leaves that take one;
    /// `None` records an answer for any subleaf).
    pub fn push(&mut self, leaf: u32, subleaf: Option<u32>, output: CpuIdResult) {
        let (mask, ecx) = match subleaf {
            Some(subleaf) => (MATCH_LEAF | MATCH_SUBLEAF, subleaf),
            None => (MATCH_LEAF, 0),
        };
        self.entries.push(Entry {
            mask,
            input: [leaf, 0, ecx, 0],
            output,
        });
    }

    /// The recorded answer to a query, if any line matches it.
    pub fn lookup(&self, leaf: u32, subleaf: u32) -> Option<CpuIdResult> {
        self.entries
            .iter()
            .find(|entry| entry.answers(leaf, subleaf))
            .map(|entry| entry.output)
    }

    /// Parses one `puN` file's text; `path` only names it in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Self> {
        let mut entries = Vec::new();
        for (index, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let entry = parse_line(line).with_context(|| {
                format!(
                    "{}:{}: expected `MASK EAX EBX ECX EDX => EAX EBX ECX EDX` in hex, found `{}`",
                    path.display(),
                    index + 1,
                    excerpt(line)
                )
            })?;
            entries.push(entry);
        }
        let record = CpuidRecord { entries };
        for leaf in [0, 1] {
            if record.lookup(leaf, 0).is_none() {
                bail!(
                    "{}: no line for CPUID leaf {leaf:#x} (expected `1 {leaf:x} 0 0 0 => ...`; a dump needs leaves 0x0 and 0x1)",
                    path.display()
                );
            }
        }
        Ok(record)
    }

    /// The `puN` file text, header included.
    pub fn render(&self) -> String {
        let mut text = format!("{HEADER}\n");
        for Entry {
            mask,
            input: [in_a, in_b, in_c, in_d],
            output: out,
        } in &self.entries
        {
            // Writing to a String cannot fail.
            let _ = writeln!(
                text,
                "{mask:x} {in_a:x} {in_b:x} {in_c:x} {in_d:x} => {:x} {:x} {:x} {:x}",
                out.eax, out.ebx, out.ecx, out.edx
            );
        }
        text
    }
}

/// Reads one `MASK EAX EBX ECX EDX => EAX EBX ECX EDX` line; `None` if it is
/// anything else.
fn parse_line(line: &str) -> Option<Entry> {
    let (input, output) = line.split_once("=>")?;
    let input = parse_hex_words::<5>(input)?;
    let output = parse_hex_words::<4>(output)?;
    Some(Entry {
        mask: input[0],
        input: [input[1], input[2], input[3], input[4]],
        output: CpuIdResult {
            eax: output[0],
            ebx: output[1],
            ecx: output[2],
            edx: output[3],
        },
    })
}

/// Exactly `N` whitespace-separated 32-bit hex words.
fn parse_hex_words<const N: usize>(text: &str) -> Option<[u32; N]> {
    let mut words = [0u32; N];
    let mut fields = text.split_whitespace();
    for word in &mut words {
        *word = u32::from_str_radix(fields.next()?, 16).ok()?;
    }
    fields.next().is_none().then_some(words)
}

/// Answers CPUID queries from a record, the way the instruction would have
/// answered on the CPU it was recorded on.
#[derive(Clone, Copy)]
pub struct RecordReader<'a>(pub &'a CpuidRecord);

impl CpuIdReader for RecordReader<'_> {
    fn cpuid2(&self, eax: u32, ecx: u32) -> CpuIdResult {
        self.0.lookup(eax, ecx).unwrap_or(CpuIdResult {
            eax: 0,
            ebx: 0,
            ecx: 0,
            edx: 0,
        })
    }
}

/// A `puN` file: a full recording is about 10 KB (some 300 lines of 40
/// bytes), so 1 MiB is generous.
pub const PU_FILE_LIMIT: ReadLimit = ReadLimit {
    max_bytes: 1 << 20,
    expected: "a hwloc-gather-cpuid puN file",
};

/// One `puN` file of a dump, read but not yet parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DumpFile {
    /// N, the logical CPU it was recorded on.
    pub cpu: u32,
    /// Where it was read from; only names it in errors.
    pub path: PathBuf,
    /// Its text (bytes that are not UTF-8 read as U+FFFD, hence garbled).
    pub text: String,
}

/// Reads every `puN` file of a dump folder, ascending by N. There are at
/// most [`MAX_CPUS`](crate::cpuset::MAX_CPUS) (N must be below it), each at
/// most [`PU_FILE_LIMIT`].
pub fn read_dump_dir(dir: &Path) -> Result<Vec<DumpFile>> {
    let listing = fs::read_dir(dir)
        .with_context(|| format!("cannot read CPUID dump folder {}", dir.display()))?;
    let mut files = Vec::new();
    for item in listing {
        let item =
            item.with_context(|| format!("cannot list CPUID dump folder {}", dir.display()))?;
        let name = item.file_name();
        let Some(name) = name.to_str() else {
            continue;
        };
        let cpu = numbered_cpu(name, "pu")
            .map_err(|why| anyhow!("CPUID dump folder {}: {why}", dir.display()))?;
        if let Some(cpu) = cpu {
            files.push((cpu, item.path()));
        }
    }
    if files.is_empty() {
        bail!(
            "{}: no puN files (expected a hwloc-gather-cpuid dump: one file per logical CPU)",
            dir.display()
        );
    }
    files.sort_unstable();
    files
        .into_iter()
        .map(|(cpu, path)| {
            let bytes = read_bounded(&path, PU_FILE_LIMIT, |_| false)?.with_context(|| {
                format!(
                    "cannot read CPUID dump file {}: it vanished while reading the folder",
                    path.display()
                )
            })?;
            let text = String::from_utf8(bytes)
                .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
            Ok(DumpFile { cpu, path, text })
        })
        .collect()
}

/// Reads every `puN` file of the dump a snapshot document holds (its
/// `cpuid/` records), ascending by N, as [`read_dump_dir`] reads a folder's;
/// errors name the document and the file in it.
pub fn recorded_dump(root: &SysfsRoot) -> Result<Vec<DumpFile>> {
    let mut files = Vec::new();
    for name in root.list_dir(CPUID_DIR)?.iter() {
        let cpu = numbered_cpu(name, "pu")
            .map_err(|why| anyhow!("CPUID dump {}: {why}", root.name(CPUID_DIR)))?;
        let Some(cpu) = cpu else {
            continue;
        };
        let relative = format!("{CPUID_DIR}/{name}");
        let path = PathBuf::from(root.name(&relative));
        let text = root
            .read_text_bounded(&relative, PU_FILE_LIMIT, |_| false)?
            .with_context(|| format!("{}: listed, but not recorded", path.display()))?;
        files.push(DumpFile { cpu, path, text });
    }
    if files.is_empty() {
        bail!(
            "{}: no puN files (expected a CPUID dump: one file per logical CPU)",
            root.name(CPUID_DIR)
        );
    }
    files.sort_unstable_by_key(|file| file.cpu);
    Ok(files)
}

/// Writes records as a dump folder that [`read_dump_dir`] and hwloc read back.
pub fn write_dump_dir(dir: &Path, records: &[(u32, CpuidRecord)]) -> Result<()> {
    fs::create_dir_all(dir)
        .with_context(|| format!("cannot create CPUID dump folder {}", dir.display()))?;
    // hwloc checks this file before it trusts a dump folder.
    let info = dir.join("hwloc-cpuid-info");
    fs::write(&info, "Architecture: x86\n")
        .with_context(|| format!("cannot write {}", info.display()))?;
    for (cpu, record) in records {
        let path = dir.join(format!("pu{cpu}"));
        fs::write(&path, record.render())
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(eax: u32, ebx: u32, ecx: u32, edx: u32) -> CpuIdResult {
        CpuIdResult { eax, ebx, ecx, edx }
    }

    #[test]
    fn mask_decides_whether_the_subleaf_matters() {
        let text = "# header\n1 0 0 0 0 => d 1 2 3\n1 1 0 0 0 => 4 5 6 7\n5 4 0 1 0 => a b c d\n";
        let record = CpuidRecord::parse(text, Path::new("pu0")).unwrap();
        assert_eq!(record.lookup(1, 9), Some(result(4, 5, 6, 7)));
        assert_eq!(record.lookup(4, 1), Some(result(0xa, 0xb, 0xc, 0xd)));
        assert_eq!(record.lookup(4, 0), None);
        let zeros = RecordReader(&record).cpuid2(4, 0);
        assert!(zeros.all_zero());
    }

    #[test]
    fn render_then_parse_is_identity() {
        let mut record = CpuidRecord::default();
        record.push(0, None, result(0x1f, 0x756e6547, 0x6c65746e, 0x49656e69));
        record.push(1, None, result(0x906a3, 0x800, 0xfffa3203, 0x178bfbff));
        record.push(0xb, Some(1), result(7, 0x10, 0x201, 0x2e));
        let text = record.render();
        assert!(text.contains("5 b 0 1 0 => 7 10 201 2e"));
        assert_eq!(CpuidRecord::parse(&text, Path::new("pu3")).unwrap(), record);
    }

    #[test]
    fn bad_lines_name_the_file_and_line() {
        let text = "1 0 0 0 0 => d 1 2 3\n1 1 0 0 0 => 4 5 6\n";
        let error = CpuidRecord::parse(text, Path::new("dump/pu2")).unwrap_err();
        assert!(
            format!("{error:#}").starts_with("dump/pu2:2: expected"),
            "{error:#}"
        );
        let error = CpuidRecord::parse("1 0 0 0 0 => d 1 2 zz\n", Path::new("pu0")).unwrap_err();
        assert!(format!("{error:#}").contains("pu0:1"), "{error:#}");
    }

    #[test]
    fn leaves_zero_and_one_are_required() {
        let error = CpuidRecord::parse("1 0 0 0 0 => d 1 2 3\n", Path::new("pu7")).unwrap_err();
        assert!(error.to_string().contains("leaf 0x1"), "{error:#}");
        let error = CpuidRecord::parse("", Path::new("pu7")).unwrap_err();
        assert!(error.to_string().contains("leaf 0x0"), "{error:#}");
    }
}
