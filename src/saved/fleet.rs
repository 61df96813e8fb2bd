//! Reading a fleet's results for `report --fleet`: saved documents and the
//! output of the fleet engines that ran the tool on many hosts, gathered
//! per host.
//!
//! Each input (a file, `-` for standard input, or a folder: each regular
//! file in it, in natural order, one per host as Ansible's `--tree` writes
//! them) is one of:
//!
//! * **one saved document**, pretty as `--json` writes it (its first line
//!   is `{` alone): the result of the host named in its `host` field, or of
//!   the file itself (named by its path) for a gate saved before gates
//!   recorded their host;
//! * **one Ansible result**, the file that `ansible --tree FOLDER` writes
//!   for each host: a JSON object with no `kind`, holding the command's
//!   `stdout` (the host's lines: documents and anything else), or Ansible's
//!   `msg` about a host that did not run it (`unreachable`, `failed`, or
//!   the `rc` of a module that never started). The host is the file's name,
//!   as Ansible names it; without a document the reason is Ansible's
//!   message or the exit code, with the last line of `stderr` (else of
//!   `stdout`). Any other object without `kind` is a damaged document;
//! * **text lines**, as pdsh and clush print them. `HOST: REST` gives REST
//!   to HOST (both engines prefix every output line of a host that way); a
//!   bare line `{…}` (what `--json-line` writes) is a document of the host
//!   named inside it, else of the file. The engines' own lines about a host
//!   (`pdsh@head: HOST: ssh exited with exit code 255`, `clush: HOST:
//!   command timeout`) are kept as that host's engine message. Anything
//!   else is ignored: the human view may be mixed in with `2>&1`. Engines
//!   prefix every line, so in an input with a bare document line (`gate
//!   --json-line - 2>&1`, Ansible's output) a `word: text` line is that
//!   human view ("verdict: no-smt"), not a host's line, unless its text is
//!   a document (`cat pdsh.out gate.jsonl`).
//!
//! Of a host's lines, those starting with `{` are candidate documents; the
//! rest is remembered only to say why a host without a document is broken.
//! A host that sends several documents of one kind (a gate run twice) keeps
//! the **last** one, the newest as the engine printed it, and counts the
//! others as replaced; documents of different kinds (a gate and a pairs
//! search) are all kept. The same host in several inputs is one host.
//!
//! What the user named is the user's to fix: a path on the command line
//! that does not exist or cannot be read, and a named folder that cannot
//! be listed or is empty, is a one-line error before anything is written
//! (a typo or a permission, never a host). Every path is looked up before
//! any is read, so a typo costs no reading. Beyond that nothing fails:
//! a file inside a folder that cannot be read or is not a regular file, and
//! an input that reads fine but holds no result line (an empty file, the
//! human view alone), is a broken host named by its path, since a file of
//! a folder stands for one host, and `report --fleet tree/*` says what
//! `report --fleet tree` says. A host without a parseable document is
//! broken with a one-line reason.
//!
//! What the hosts sent is shown as it came, but never raw: host names and
//! paths have their control characters escaped (`\u{1b}`, `\n`), and a
//! reason is one line of at most [`REASON_CHARS`] characters, so a hostile
//! or garbled line cannot redraw the terminal or flood the report.
//! Deciding what a broken or missing host means for the command is the
//! report's business.

use super::documents::DocumentKind;
use super::hostlist::is_host_name;
use super::input::read_capped;
use super::load::{SavedDocument, from_bytes};
use anyhow::{Error, Result, anyhow};
use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::HashMap;
use std::fmt::{self, Write};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// Largest fleet input read, per FILE (or standard input): 512 MiB. One
/// saved document is capped at [`super::JSON_INPUT_CAP`], but a fleet input
/// holds one per host: a thousand hosts' gates with every raw sample are
/// tens of MB, their `observe` or `pairs` documents a few hundred. The
/// input is held whole while it is read, so the cap stays well below a
/// head node's memory; a bigger fleet is split over several FILEs.
pub const FLEET_INPUT_CAP: u64 = 512 * 1024 * 1024;

/// Longest reason shown for a broken host, in characters: a line or two of
/// a terminal, enough for an engine's message and the host's last line.
pub const REASON_CHARS: usize = 200;

/// Where a document or a line came from: the input (its path, or "standard
/// input") and the line (1-based), absent for a whole-file document.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Origin {
    pub file: String,
    pub line: Option<usize>,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}", self.file),
            None => f.write_str(&self.file),
        }
    }
}

/// One document a host sent, after `keep` made what the caller needs of it.
#[derive(Clone, Debug, PartialEq)]
pub struct Received<T> {
    pub source: Origin,
    pub kind: DocumentKind,
    pub document: T,
    /// Earlier documents of the same kind from the same host, replaced by
    /// this one.
    pub replaced: usize,
}

/// Why a host (or an input) has no document, and where that was seen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Broken {
    pub source: Origin,
    /// One line: the parse error, the engine's message, or the last line;
    /// in a [`FleetHost`], made safe to show by [`one_line`].
    pub reason: String,
}

/// Everything one host sent, over every input.
#[derive(Clone, Debug, PartialEq)]
pub struct FleetHost<T> {
    /// The host's name as the engine labelled it, as the document names it,
    /// or the input's path; its control characters escaped.
    pub host: String,
    /// The last document of each kind, in the order the kinds first came.
    pub documents: Vec<Received<T>>,
    /// Set exactly when `documents` is empty.
    pub broken: Option<Broken>,
    /// Candidate lines (starting with `{`) that did not parse, on a host
    /// that has a document nonetheless.
    pub unreadable: usize,
}

/// Reads every input (`-` is standard input, a folder each regular file in
/// it) and gathers it per host, in the order hosts first appear. `keep`
/// turns each parsed document into what the caller holds on to, so a
/// thousand hosts' raw samples are not.
///
/// A named path that does not exist, cannot be read or listed, or is an
/// empty folder is a one-line error naming it; every path is looked up
/// before any is read, so a typo in the last one costs no reading.
pub fn read<T>(
    files: &[PathBuf],
    mut keep: impl FnMut(&Origin, SavedDocument) -> T,
) -> Result<Vec<FleetHost<T>>> {
    let named = files
        .iter()
        .map(|path| Named::look_up(path))
        .collect::<Result<Vec<Named>>>()?;
    let mut gathering = Gathering::default();
    for (path, named) in files.iter().zip(named) {
        match named {
            Named::Folder => gathering.folder(path, &mut keep)?,
            Named::Input => {
                let bytes = read_capped(path, FLEET_INPUT_CAP).map_err(|e| {
                    unreadable(
                        &format!("{e:#}"),
                        "check the path and its permissions; split an input over the cap \
                         across several FILEs",
                    )
                })?;
                gathering.input(&input_name(path), &bytes, &mut keep);
            }
        }
    }
    Ok(gathering.finish())
}

/// What a path named on the command line is.
enum Named {
    /// Each of its files is read.
    Folder,
    /// Read as one input: a file, a FIFO (`<(pdsh …)`), or `-`.
    Input,
}

impl Named {
    /// What `path` is, looked up without opening it (a FIFO would block);
    /// a path that is not there, or a file over [`FLEET_INPUT_CAP`], is an
    /// error naming it.
    fn look_up(path: &Path) -> Result<Named> {
        if path.as_os_str() == "-" {
            return Ok(Named::Input);
        }
        let shown = input_name(path);
        match fs::metadata(path) {
            Ok(meta) if meta.is_file() && meta.len() > FLEET_INPUT_CAP => Err(unreadable(
                &format!(
                    "{shown}: {} bytes, more than the {} MiB read of one input",
                    meta.len(),
                    FLEET_INPUT_CAP >> 20
                ),
                "split it over several FILEs",
            )),
            Ok(meta) if meta.is_dir() => Ok(Named::Folder),
            Ok(_) => Ok(Named::Input),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Err(unreadable(
                &format!("{shown}: no such file or folder"),
                "check the path; FILE is pdsh or clush output, a saved --json file or an \
                 `ansible --tree` folder",
            )),
            Err(e) => Err(unreadable(
                &format!("{shown}: cannot look it up: {e}"),
                "check the path and the permissions of its folders",
            )),
        }
    }
}

/// The one-line error about a named input: what is wrong with it, and the
/// fix.
fn unreadable(what: &str, fix: &str) -> Error {
    anyhow!("report --fleet: {}; {fix}", escape_controls(what))
}

/// How `-` is named in reasons and sources.
const STANDARD_INPUT: &str = "standard input";

/// How an input is named in reasons and sources: its path, or
/// [`STANDARD_INPUT`] for `-`.
fn input_name(path: &Path) -> String {
    if path.as_os_str() == "-" {
        STANDARD_INPUT.to_string()
    } else {
        escape_controls(&path.display().to_string()).into_owned()
    }
}

/// `text` with what a terminal would act on escaped as Rust writes it:
/// control characters (`\n`, `\u{1b}`) and the bidirectional overrides
/// that can make a line read otherwise than it is (`\u{202e}`). Borrowed
/// when there is nothing to escape, as for every real host name.
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    if !text.chars().any(needs_escape) {
        return Cow::Borrowed(text);
    }
    let mut shown = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        push_shown(&mut shown, c);
    }
    Cow::Owned(shown)
}

/// `text` as one line safe to show: [`escape_controls`], then cut to at
/// most [`REASON_CHARS`] characters, ending with "…" when cut (never
/// inside a character, nor inside an escape).
pub fn one_line(text: &str) -> String {
    let mut shown = String::new();
    let (mut chars, mut fits) = (0, 0);
    for c in text.chars() {
        let before = shown.len();
        push_shown(&mut shown, c);
        chars += shown[before..].chars().count();
        if chars < REASON_CHARS {
            fits = shown.len();
        } else if chars > REASON_CHARS {
            shown.truncate(fits);
            shown.push('…');
            break;
        }
    }
    shown
}

fn needs_escape(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

fn push_shown(shown: &mut String, c: char) {
    if !needs_escape(c) {
        shown.push(c);
    } else if c.is_control() {
        let _ = write!(shown, "{}", c.escape_debug());
    } else {
        let _ = write!(shown, "{}", c.escape_unicode());
    }
}

/// Host names, and the file names of a folder, as people sort them: the
/// numbers in them by value, so that node2 comes before node10.
pub fn natural(a: &str, b: &str) -> Ordering {
    /// The leading run of digits or of other characters, and the rest.
    fn split(s: &str) -> (bool, &str, &str) {
        let digits = s.starts_with(|c: char| c.is_ascii_digit());
        let end = s
            .find(|c: char| c.is_ascii_digit() != digits)
            .unwrap_or(s.len());
        (digits, &s[..end], &s[end..])
    }
    let (mut a, mut b) = (a, b);
    loop {
        match (a.is_empty(), b.is_empty()) {
            (true, true) => return Ordering::Equal,
            (true, false) => return Ordering::Less,
            (false, true) => return Ordering::Greater,
            _ => {}
        }
        let ((a_digits, a_run, a_rest), (b_digits, b_run, b_rest)) = (split(a), split(b));
        let order = if a_digits && b_digits {
            let (a_value, b_value) = (a_run.trim_start_matches('0'), b_run.trim_start_matches('0'));
            a_value
                .len()
                .cmp(&b_value.len())
                .then_with(|| a_value.cmp(b_value))
                .then_with(|| a_run.len().cmp(&b_run.len()))
        } else {
            a_run.cmp(b_run)
        };
        if order != Ordering::Equal {
            return order;
        }
        (a, b) = (a_rest, b_rest);
    }
}

/// What has come from one host so far.
struct Sent<T> {
    documents: Vec<Received<T>>,
    /// Candidate lines that did not parse: the count, and the last error.
    unreadable: usize,
    parse_error: Option<Broken>,
    /// The engine's last message about the host.
    engine: Option<Broken>,
    /// The host's last line that was neither a document nor a candidate.
    last_line: Option<Broken>,
    /// An input that could not be read, or held no result line.
    source_error: Option<Broken>,
}

impl<T> Default for Sent<T> {
    fn default() -> Sent<T> {
        Sent {
            documents: Vec::new(),
            unreadable: 0,
            parse_error: None,
            engine: None,
            last_line: None,
            source_error: None,
        }
    }
}

impl<T> Sent<T> {
    fn document(&mut self, source: Origin, kind: DocumentKind, document: T) {
        let mut received = Received {
            source,
            kind,
            document,
            replaced: 0,
        };
        match self.documents.iter_mut().find(|d| d.kind == kind) {
            Some(earlier) => {
                received.replaced = earlier.replaced + 1;
                *earlier = received;
            }
            None => self.documents.push(received),
        }
    }

    /// The host as the report sees it: its documents, or the most telling
    /// reason it has none (a document that did not parse says more than
    /// the engine's exit status, which says more than a stray line), made
    /// one line safe to show.
    fn into_host(self, host: String) -> FleetHost<T> {
        let broken = if self.documents.is_empty() {
            let broken = self
                .source_error
                .or(self.parse_error)
                .or_else(|| {
                    self.engine.map(|engine| match &self.last_line {
                        Some(last) => Broken {
                            reason: format!("{}; last line: {}", engine.reason, last.reason),
                            ..engine
                        },
                        None => engine,
                    })
                })
                .or_else(|| {
                    self.last_line.map(|last| Broken {
                        reason: format!("no result line; last line: {}", last.reason),
                        ..last
                    })
                })
                // Every host was made by a line; this is for the types.
                .unwrap_or_else(|| Broken {
                    source: Origin {
                        file: host.clone(),
                        line: None,
                    },
                    reason: "no result line".into(),
                });
            Some(Broken {
                reason: one_line(&broken.reason),
                ..broken
            })
        } else {
            None
        };
        FleetHost {
            host,
            unreadable: if broken.is_some() { 0 } else { self.unreadable },
            documents: self.documents,
            broken,
        }
    }
}

/// Hosts as they come, by name.
struct Gathering<T> {
    order: Vec<String>,
    hosts: HashMap<String, Sent<T>>,
}

impl<T> Default for Gathering<T> {
    fn default() -> Gathering<T> {
        Gathering {
            order: Vec::new(),
            hosts: HashMap::new(),
        }
    }
}

impl<T> Gathering<T> {
    /// What has come from the host `name` (its control characters
    /// escaped, as a document's `host` field or a file name may hold any).
    fn host(&mut self, name: &str) -> &mut Sent<T> {
        let name = escape_controls(name);
        if !self.hosts.contains_key(name.as_ref()) {
            self.order.push(name.to_string());
        }
        self.hosts.entry(name.into_owned()).or_default()
    }

    /// Reads one file of a folder; one that cannot be read is a broken
    /// host named by its path.
    fn file(&mut self, path: &Path, keep: &mut impl FnMut(&Origin, SavedDocument) -> T) {
        let file = input_name(path);
        match read_capped(path, FLEET_INPUT_CAP) {
            Ok(bytes) => self.input(&file, &bytes, keep),
            Err(e) => self.broken_source(&file, whole_file(&file, format!("{e:#}"))),
        }
    }

    /// Reads each regular file of a named `folder` (an Ansible `--tree`
    /// folder, or rpdcp's results), in natural order. A folder that cannot
    /// be listed, or is empty, is an error: it was named, and is no host.
    /// What is in it but not read is named, not skipped: a folder inside
    /// (not descended into), a FIFO or a device (which could block or never
    /// end), each a broken host named by its path.
    fn folder(
        &mut self,
        folder: &Path,
        keep: &mut impl FnMut(&Origin, SavedDocument) -> T,
    ) -> Result<()> {
        let shown = input_name(folder);
        let mut paths = fs::read_dir(folder)
            .and_then(|entries| {
                entries
                    .map(|entry| entry.map(|e| e.path()))
                    .collect::<io::Result<Vec<PathBuf>>>()
            })
            .map_err(|e| {
                unreadable(
                    &format!("{shown}: cannot list the folder: {e}"),
                    "check its permissions",
                )
            })?;
        if paths.is_empty() {
            return Err(unreadable(
                &format!("{shown}: an empty folder"),
                "name the folder `ansible --tree` wrote, or the files of the hosts' results",
            ));
        }
        let name = |path: &Path| {
            path.file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned()
        };
        paths.sort_by(|a, b| natural(&name(a), &name(b)));
        for path in paths {
            let skipped = match fs::metadata(&path) {
                Ok(meta) if meta.is_dir() => Some(format!(
                    "a folder inside {shown}, not read (a folder is read one level deep); \
                     name it to read its files"
                )),
                Ok(meta) if !meta.is_file() => Some(format!(
                    "not a regular file (a FIFO, socket or device), not read from {shown}"
                )),
                // A file, or what cannot be opened: reading it says why.
                _ => None,
            };
            match skipped {
                Some(reason) => {
                    let file = input_name(&path);
                    self.broken_source(&file, whole_file(&file, reason));
                }
                None => self.file(&path, keep),
            }
        }
        Ok(())
    }

    /// An input without a result: a host named by its path (so its reason
    /// does not say the path again).
    fn broken_source(&mut self, file: &str, mut broken: Broken) {
        if let Some(reason) = broken.reason.strip_prefix(&format!("{file}: ")) {
            broken.reason = reason.to_string();
        }
        self.host(file).source_error = Some(broken);
    }

    fn input(
        &mut self,
        file: &str,
        bytes: &[u8],
        keep: &mut impl FnMut(&Origin, SavedDocument) -> T,
    ) {
        if let Some(result) = AnsibleResult::of(bytes) {
            return self.ansible(file, result, keep);
        }
        let text = String::from_utf8_lossy(bytes);
        let first = text.lines().map(str::trim).find(|l| !l.is_empty());
        if first == Some("{") {
            self.whole_document(file, bytes, keep);
        } else {
            self.lines(file, &text, keep);
        }
    }

    /// An input that is one pretty document.
    fn whole_document(
        &mut self,
        file: &str,
        bytes: &[u8],
        keep: &mut impl FnMut(&Origin, SavedDocument) -> T,
    ) {
        let source = Origin {
            file: file.to_string(),
            line: None,
        };
        match from_bytes(bytes, Path::new(file)) {
            Ok(document) => {
                let host = document.host().unwrap_or(file).to_string();
                let kind = document.kind();
                let kept = keep(&source, document);
                self.host(&host).document(source, kind, kept);
            }
            Err(e) => self.broken_source(
                file,
                Broken {
                    source,
                    reason: e.to_string(),
                },
            ),
        }
    }

    /// An Ansible `--tree` file: the host is the file's name (standard
    /// input is a host of that name), its documents the `{` lines of
    /// `stdout`, Ansible's message and the last other line the reason it
    /// has none.
    fn ansible(
        &mut self,
        file: &str,
        result: AnsibleResult,
        keep: &mut impl FnMut(&Origin, SavedDocument) -> T,
    ) {
        let host = Path::new(file)
            .file_name()
            .map_or(file.to_string(), |name| name.to_string_lossy().into_owned());
        let source = Origin {
            file: file.to_string(),
            line: None,
        };
        let stdout = result.stdout.as_deref().unwrap_or("");
        let stderr = result.stderr.as_deref().or(result.module_stderr.as_deref());
        let last = |text: &str| {
            text.lines()
                .map(str::trim)
                .rfind(|l| !l.is_empty())
                .map(String::from)
        };
        let mut last_line = None;
        for line in stdout.lines().map(str::trim_end) {
            if line.starts_with('{') {
                self.candidate(Some(&host), file, source.clone(), line, keep);
            } else if !line.trim().is_empty() {
                last_line = Some(line.trim().to_string());
            }
        }
        // The command's stderr says more than its human view on stdout.
        last_line = stderr.and_then(last).or(last_line);
        let sent = self.host(&host);
        sent.engine = Some(Broken {
            source: source.clone(),
            reason: format!("ansible: {}", result.message()),
        });
        if let Some(reason) = last_line {
            sent.last_line = Some(Broken { source, reason });
        }
    }

    /// An input of lines: engine output, `--json-line` documents, or both.
    fn lines(
        &mut self,
        file: &str,
        text: &str,
        keep: &mut impl FnMut(&Origin, SavedDocument) -> T,
    ) {
        // Engines prefix every line: one bare document means the input is
        // not engine output, and "verdict: …" is the human view, not a host.
        let bare = text.lines().any(|line| line.starts_with('{'));
        let mut found = false;
        let mut last_stray: Option<Broken> = None;
        for (index, raw) in text.lines().enumerate() {
            let line = raw.trim_end();
            if line.trim().is_empty() {
                continue;
            }
            let source = Origin {
                file: file.to_string(),
                line: Some(index + 1),
            };
            found |= match classify(line, bare) {
                Line::Engine { host, message } => {
                    self.host(host).engine = Some(Broken {
                        source,
                        reason: message,
                    });
                    true
                }
                Line::Bare(json) => {
                    self.candidate(None, file, source, json, keep);
                    true
                }
                Line::Host { host, rest } if rest.trim_start().starts_with('{') => {
                    self.candidate(Some(host), file, source, rest.trim_start(), keep);
                    true
                }
                // An empty line: the host is there, with nothing to say
                // unless it says nothing else.
                Line::Host { host, rest } if rest.trim().is_empty() => {
                    self.host(host).last_line.get_or_insert(Broken {
                        source,
                        reason: "(an empty line)".into(),
                    });
                    true
                }
                Line::Host { host, rest } => {
                    self.host(host).last_line = Some(Broken {
                        source,
                        reason: rest.trim().to_string(),
                    });
                    true
                }
                Line::Stray => {
                    last_stray = Some(Broken {
                        source,
                        reason: line.trim().to_string(),
                    });
                    false
                }
            };
        }
        // Standard input is the engine's pipe, not a host: when it holds no
        // result (every host down, pdsh's complaints on its stderr), the
        // hosts of --hosts are missing, and the report says so.
        if !found && file != STANDARD_INPUT {
            let broken = match last_stray {
                Some(last) => Broken {
                    reason: format!("no result line; last line: {}", last.reason),
                    ..last
                },
                None => Broken {
                    source: Origin {
                        file: file.to_string(),
                        line: None,
                    },
                    reason: format!("{file}: empty"),
                },
            };
            self.broken_source(file, broken);
        }
    }

    /// A line that starts with `{`: a document of `host` (the engine's
    /// label), or of the host it names, or of the input `file`.
    fn candidate(
        &mut self,
        host: Option<&str>,
        file: &str,
        source: Origin,
        json: &str,
        keep: &mut impl FnMut(&Origin, SavedDocument) -> T,
    ) {
        let shown = source.to_string();
        match from_bytes(json.as_bytes(), Path::new(&shown)) {
            Ok(document) => {
                let owner = host.or(document.host()).unwrap_or(file).to_string();
                let kind = document.kind();
                let kept = keep(&source, document);
                self.host(&owner).document(source, kind, kept);
            }
            Err(e) => {
                let reason = if json.trim() == "{" {
                    format!(
                        "{shown}: a --json document split over lines; run the command with \
                         --json-line - so that each host prints its result on one line"
                    )
                } else {
                    e.to_string()
                };
                let sent = self.host(host.unwrap_or(file));
                sent.unreadable += 1;
                sent.parse_error = Some(Broken { source, reason });
            }
        }
    }

    fn finish(mut self) -> Vec<FleetHost<T>> {
        self.order
            .into_iter()
            .map(|name| {
                let sent = self.hosts.remove(&name).unwrap_or_default();
                sent.into_host(name)
            })
            .collect()
    }
}

/// A broken source's reason, seen in the whole of `file`.
fn whole_file(file: &str, reason: String) -> Broken {
    Broken {
        source: Origin {
            file: file.to_string(),
            line: None,
        },
        reason,
    }
}

/// What `report --fleet` reads of an Ansible result (the object a `--tree`
/// file holds, one per host; the other fields, `cmd`, `start`,
/// `stdout_lines` and the like, are skipped unread).
#[derive(Deserialize)]
struct AnsibleResult {
    /// Present in every placement-study document, never in Ansible's.
    kind: Option<IgnoredAny>,
    stdout: Option<String>,
    stderr: Option<String>,
    /// What a module that failed to start printed (Ansible's Python not
    /// found, say), in place of the command's stderr.
    module_stderr: Option<String>,
    msg: Option<Value>,
    rc: Option<Value>,
    unreachable: Option<IgnoredAny>,
    failed: Option<IgnoredAny>,
}

impl AnsibleResult {
    /// `bytes` as an Ansible result, when they are one JSON object of that
    /// shape: no `kind`, and either the command's `stdout` or Ansible's
    /// `msg` with `unreachable`, `failed` or an `rc`. Anything else (a
    /// placement-study document, even a damaged one without its `kind`, or
    /// lines of documents) is left to be read as it always was.
    fn of(bytes: &[u8]) -> Option<AnsibleResult> {
        if bytes.trim_ascii_start().first() != Some(&b'{') {
            return None;
        }
        let result: AnsibleResult = serde_json::from_slice(bytes).ok()?;
        let failed = result.msg.is_some()
            && (result.unreachable.is_some() || result.failed.is_some() || result.rc.is_some());
        (result.kind.is_none() && (result.stdout.is_some() || failed)).then_some(result)
    }

    /// Ansible's word on the host, one line: its message (for a command that
    /// exited non-zero only "non-zero return code", which the exit code says
    /// better) and the exit code.
    fn message(&self) -> String {
        let text = |value: &Value| match value {
            Value::String(text) => text.trim().to_string(),
            other => other.to_string(),
        };
        let msg = self
            .msg
            .as_ref()
            .map(text)
            .filter(|msg| !msg.is_empty() && msg != "non-zero return code")
            .map(|msg| msg.replace('\n', " "));
        let rc = self.rc.as_ref().map(|rc| format!("exit code {}", text(rc)));
        match (msg, rc) {
            (Some(msg), Some(rc)) => format!("{msg} ({rc})"),
            (Some(one), None) | (None, Some(one)) => one,
            (None, None) => "no result line".into(),
        }
    }
}

/// What one line of engine output is.
#[derive(Debug, PartialEq)]
enum Line<'a> {
    /// `pdsh@head: HOST: MESSAGE` or `clush: HOST: MESSAGE`: the engine
    /// about HOST (kept whole, engine name included).
    Engine { host: &'a str, message: String },
    /// `HOST: REST`.
    Host { host: &'a str, rest: &'a str },
    /// `{…}` with no prefix: a `--json-line` document.
    Bare(&'a str),
    /// Anything else.
    Stray,
}

/// What `line` is; in an input of `bare` documents, `HOST: REST` is a
/// host's line only when REST is a document (`cat pdsh.out gate.jsonl`):
/// "verdict: no-smt" there is the human view.
fn classify(line: &str, bare: bool) -> Line<'_> {
    if line.starts_with('{') {
        return Line::Bare(line);
    }
    if let Some((engine, rest)) = line.split_once(": ")
        && (engine.starts_with("pdsh@") || engine == "clush")
        && let Some((host, message)) = rest.split_once(": ")
        && is_host_name(host)
    {
        return Line::Engine {
            host,
            message: format!("{engine}: {}", message.trim()),
        };
    }
    match line.split_once(": ") {
        Some((host, rest)) if is_host_name(host) && (!bare || rest.starts_with('{')) => {
            Line::Host { host, rest }
        }
        _ if bare => Line::Stray,
        // A host that printed an empty line: pdsh writes "HOST: ".
        _ => match line.strip_suffix(':') {
            Some(host) if is_host_name(host) => Line::Host { host, rest: "" },
            _ => Line::Stray,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Gathers `text` as one input named "in", each document kept as its kind.
    fn gather(text: &str) -> Vec<FleetHost<DocumentKind>> {
        let mut gathering = Gathering::default();
        gathering.input(
            "in",
            text.as_bytes(),
            &mut |_: &Origin, d: SavedDocument| d.kind(),
        );
        gathering.finish()
    }

    fn gate_line(host: &str) -> String {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/fleet/vm-gate.json");
        let mut gate: serde_json::Value =
            serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        gate["host"] = host.into();
        gate.to_string()
    }

    #[test]
    fn hosts_gather_their_documents_and_the_reason_they_have_none() {
        let gate = gate_line("inside");
        let text = format!(
            "a: {gate}\na: human view\nb: {gate}\nb: {gate}\nb: {{\"kind\nc: Permission denied\n\
             pdsh@head: c: ssh exited with exit code 255\nd:\nd: {{\ne: last words\n"
        );
        let hosts = gather(&text);
        let names: Vec<&str> = hosts.iter().map(|h| h.host.as_str()).collect();
        assert_eq!(names, ["a", "b", "c", "d", "e"]);
        // The engine's label names the host, not the document's field.
        assert_eq!(hosts[0].documents.len(), 1);
        assert_eq!(hosts[0].documents[0].source.line, Some(1));
        assert_eq!(hosts[1].documents[0].replaced, 1);
        assert_eq!(hosts[1].documents[0].source.line, Some(4));
        assert_eq!(hosts[1].unreadable, 1);
        let reason = |i: usize| hosts[i].broken.as_ref().unwrap().reason.clone();
        assert_eq!(
            reason(2),
            "pdsh@head: ssh exited with exit code 255; last line: Permission denied"
        );
        assert!(reason(3).contains("split over lines"), "{}", reason(3));
        assert_eq!(reason(4), "no result line; last line: last words");
        assert_eq!(
            hosts[4].broken.as_ref().unwrap().source.to_string(),
            "in:10"
        );
    }

    #[test]
    fn bare_documents_belong_to_the_host_they_name() {
        let text = format!(
            "{}\nverdict: no-smt (exit 4)\n{}\n{{broken\n",
            gate_line("n1"),
            gate_line("n2")
        );
        let hosts = gather(&text);
        let names: Vec<&str> = hosts.iter().map(|h| h.host.as_str()).collect();
        // The human view's "verdict:" is no host; the bad line is the input's.
        assert_eq!(names, ["n1", "n2", "in"]);
        // Engine output and bare lines together (`cat pdsh.out gate.jsonl`):
        // each engine line's document is still its host's.
        let mixed = gather(&format!("n3: {}\n{}\n", gate_line("n3"), gate_line("n4")));
        let names: Vec<&str> = mixed.iter().map(|h| h.host.as_str()).collect();
        assert_eq!(names, ["n3", "n4"]);
        assert!(mixed.iter().all(|h| h.broken.is_none()));
        assert!(
            hosts[2]
                .broken
                .as_ref()
                .unwrap()
                .reason
                .starts_with("in:4: ")
        );
        let nothing = gather("just a human view\n");
        assert_eq!(nothing[0].host, "in");
        assert_eq!(
            nothing[0].broken.as_ref().unwrap().reason,
            "no result line; last line: just a human view"
        );
    }

    /// An Ansible `--tree` object of a command that printed `stdout` and
    /// `stderr` and exited `rc`, as Ansible 2.19 writes it.
    fn tree_file(stdout: &str, stderr: &str, rc: i32) -> String {
        let msg = if rc == 0 { "" } else { "non-zero return code" };
        serde_json::json!({
            "changed": true, "cmd": ["placement-study", "gate", "--json-line", "-"],
            "msg": msg, "rc": rc, "stdout": stdout, "stderr": stderr,
            "stdout_lines": stdout.lines().collect::<Vec<_>>(),
        })
        .to_string()
    }

    /// Gathers each (file, text) as one input.
    fn gather_files(files: &[(&str, String)]) -> Vec<FleetHost<DocumentKind>> {
        let mut gathering = Gathering::default();
        for (file, text) in files {
            gathering.input(
                file,
                text.as_bytes(),
                &mut |_: &Origin, d: SavedDocument| d.kind(),
            );
        }
        gathering.finish()
    }

    #[test]
    fn ansible_tree_files_are_the_hosts_they_are_named_after() {
        let gate = gate_line("inside");
        let hosts = gather_files(&[
            // Twice the gate with a stray line between: the last one counts.
            (
                "tree/n1",
                tree_file(&format!("{gate}\nverdict: no-smt\n{gate}"), "view", 4),
            ),
            ("tree/n2", tree_file("", "first\nlast words\n\n", 1)),
            // The human view only, without --json-line.
            ("tree/n3", tree_file("human view\nits last line", "", 4)),
            (
                "tree/n4",
                serde_json::json!({
                    "changed": false, "unreachable": true,
                    "msg": "Task failed: Failed to connect to the host via ssh",
                })
                .to_string(),
            ),
            // A module that never started: no stdout, Ansible's own stderr.
            (
                "tree/n5",
                serde_json::json!({
                    "changed": false, "rc": 127, "module_stdout": "",
                    "module_stderr": "/bin/sh: 1: python3: not found\n",
                    "msg": "The module interpreter 'python3' was not found.",
                })
                .to_string(),
            ),
            ("tree/n6", tree_file("{\"kind\": \"gate\", \"cut", "", 1)),
            // Pretty, as Ansible writes it with -vvv.
            (
                "tree/n7",
                serde_json::to_string_pretty(&serde_json::json!({"rc": 0, "stdout": gate}))
                    .unwrap(),
            ),
        ]);
        let names: Vec<&str> = hosts.iter().map(|h| h.host.as_str()).collect();
        // The file names the host, not the document's own `host` field.
        assert_eq!(names, ["n1", "n2", "n3", "n4", "n5", "n6", "n7"]);
        assert_eq!(hosts[0].documents[0].replaced, 1);
        assert_eq!(hosts[0].documents[0].source.to_string(), "tree/n1");
        assert_eq!(hosts[6].documents[0].kind, DocumentKind::Gate);
        let reason = |i: usize| hosts[i].broken.as_ref().unwrap().reason.clone();
        assert_eq!(reason(1), "ansible: exit code 1; last line: last words");
        assert_eq!(reason(2), "ansible: exit code 4; last line: its last line");
        assert_eq!(
            reason(3),
            "ansible: Task failed: Failed to connect to the host via ssh"
        );
        assert_eq!(
            reason(4),
            "ansible: The module interpreter 'python3' was not found. (exit code 127); \
             last line: /bin/sh: 1: python3: not found"
        );
        assert!(
            reason(5).starts_with("tree/n6: not a placement-study JSON file"),
            "{}",
            reason(5)
        );
    }

    #[test]
    fn a_damaged_document_is_not_taken_for_an_ansible_file() {
        let mut gate: serde_json::Value = serde_json::from_str(&gate_line("n1")).unwrap();
        let kindless = {
            gate.as_object_mut().unwrap().remove("kind");
            gate.to_string()
        };
        for (text, shape) in [
            (kindless.as_str(), false),
            // Ansible's fields, but a `kind`: a document, however odd.
            (r#"{"kind": "gate", "stdout": ""}"#, false),
            // A message alone is no Ansible result.
            (r#"{"msg": "hello"}"#, false),
            (r#"{"msg": "down", "failed": true}"#, true),
            (r#"{"stdout": ""}"#, true),
            // Two objects, as `cat tree/*` would make: not one result.
            (r#"{"stdout": ""}{"stdout": ""}"#, false),
            ("node1: {\"stdout\": \"\"}", false),
        ] {
            assert_eq!(
                AnsibleResult::of(text.as_bytes()).is_some(),
                shape,
                "{text}"
            );
        }
        let hosts = gather_files(&[("saved/n1.json", kindless)]);
        assert_eq!(hosts[0].host, "saved/n1.json");
        let reason = &hosts[0].broken.as_ref().unwrap().reason;
        assert!(reason.contains("no \"kind\" field"), "{reason}");
    }

    #[test]
    fn a_folder_is_its_regular_files_in_natural_order() {
        let dir = tempfile::tempdir().unwrap();
        for host in ["n10", "n2", "n1"] {
            let stdout = gate_line("inside");
            std::fs::write(dir.path().join(host), tree_file(&stdout, "", 4)).unwrap();
        }
        std::fs::create_dir(dir.path().join("n3")).unwrap();
        // Read, it would wait for a writer forever.
        let fifo = dir.path().join("n4");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        std::fs::write(dir.path().join("n5"), "").unwrap();
        std::fs::write(dir.path().join("n6"), "not a result\n").unwrap();
        let hosts = read(&[dir.path().to_path_buf()], |_, d| d.kind()).unwrap();
        let names: Vec<&str> = hosts.iter().map(|h| h.host.as_str()).collect();
        let shown = |name: &str| dir.path().join(name).display().to_string();
        let (folder, fifo, empty, garbage) = (shown("n3"), shown("n4"), shown("n5"), shown("n6"));
        assert_eq!(names, ["n1", "n2", &folder, &fifo, &empty, &garbage, "n10"]);
        let reason = |i: usize| hosts[i].broken.as_ref().unwrap().reason.clone();
        assert!(reason(2).starts_with("a folder inside "), "{}", reason(2));
        assert!(reason(3).starts_with("not a regular file"), "{}", reason(3));
        assert_eq!(reason(4), "empty");
        assert_eq!(reason(5), "no result line; last line: not a result");
    }

    #[test]
    fn what_was_named_but_cannot_be_read_is_an_error_not_a_host() {
        let dir = tempfile::tempdir().unwrap();
        let empty_folder = dir.path().join("tree");
        std::fs::create_dir(&empty_folder).unwrap();
        let gate = dir.path().join("gate.jsonl");
        std::fs::write(&gate, gate_line("n1")).unwrap();
        let missing = dir.path().join("no\u{1b}such.out");
        // A socket cannot be opened, whoever runs the test.
        let socket = dir.path().join("socket");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        // Sparse: no disk is filled.
        let huge = dir.path().join("huge.out");
        std::fs::File::create(&huge)
            .unwrap()
            .set_len(FLEET_INPUT_CAP + 1)
            .unwrap();
        for (named, says) in [
            (
                &missing,
                "no\\u{1b}such.out: no such file or folder; check the path",
            ),
            (&empty_folder, "tree: an empty folder; name the folder"),
            (&socket, "socket: cannot open"),
            (
                &huge,
                "more than the 512 MiB read of one input; split it over",
            ),
        ] {
            // Named after a readable input, the bad one still fails it all.
            let error = read(&[gate.clone(), named.clone()], |_, d| d.kind())
                .unwrap_err()
                .to_string();
            assert!(error.starts_with("report --fleet: "), "{error}");
            assert!(error.contains(says), "{says:?} not in {error}");
            assert!(!error.chars().any(char::is_control), "{error}");
        }
        // Read fine, no result line: as in a folder, a host named by its path.
        let human = dir.path().join("view.txt");
        std::fs::write(&human, "the human view alone\n").unwrap();
        let hosts = read(std::slice::from_ref(&human), |_, d| d.kind()).unwrap();
        assert_eq!(hosts.len(), 1);
        assert_eq!(hosts[0].host, human.display().to_string());
    }

    #[test]
    fn reasons_and_names_are_one_line_safe_to_show() {
        assert_eq!(
            one_line("plain 'quoted' \"text\""),
            "plain 'quoted' \"text\""
        );
        assert_eq!(
            one_line("a\u{1b}[2Jb\rc\td\0e\u{202e}f\u{85}"),
            "a\\u{1b}[2Jb\\rc\\td\\0e\\u{202e}f\\u{85}"
        );
        assert_eq!(escape_controls("node1"), Cow::Borrowed("node1"));
        let long = one_line(&"é".repeat(500));
        assert_eq!(long.chars().count(), REASON_CHARS);
        assert!(long.ends_with("é…"), "{long}");
        // Around the cap, with multi-byte characters and escapes that do
        // not fit whole: never more than the cap, never a cut escape.
        for pad in 190..=205 {
            for tail in ["\u{1b}", "€", "\n", "b"] {
                let text = format!("{}{}", "x".repeat(pad), tail.repeat(4));
                let shown = one_line(&text);
                assert!(shown.chars().count() <= REASON_CHARS, "{pad} {tail:?}");
                let kept = shown.trim_end_matches('…').trim_start_matches('x');
                assert!(
                    kept.is_empty() || kept.len() % escape_controls(tail).len() == 0,
                    "{pad} {tail:?}: {shown}"
                );
            }
        }

        let mut gate: serde_json::Value = serde_json::from_str(&gate_line("x")).unwrap();
        gate["host"] = "evil\u{1b}]0;owned\u{7}".into();
        assert_eq!(
            gather(&gate.to_string())[0].host,
            "evil\\u{1b}]0;owned\\u{7}"
        );
        let text = format!(
            "n2: {}\u{1b}[31mred\nn3: {{\"kind\": \"g\\u001bate\", \"schema_version\": 1}}\n",
            "long ".repeat(100)
        );
        let hosts = gather(&text);
        for host in &hosts {
            let reason = &host.broken.as_ref().unwrap().reason;
            assert!(reason.chars().count() <= REASON_CHARS, "{reason}");
            assert!(!reason.chars().any(char::is_control), "{reason}");
        }
        assert!(hosts[0].broken.as_ref().unwrap().reason.ends_with('…'));
        assert!(
            hosts[1]
                .broken
                .as_ref()
                .unwrap()
                .reason
                .contains("g\\u{1b}ate"),
            "{:?}",
            hosts[1].broken
        );
    }

    #[test]
    fn hosts_sort_by_their_numbers() {
        let mut hosts = vec!["node10", "node2", "login1", "node02", "node1", "node1b"];
        hosts.sort_by(|a, b| natural(a, b));
        assert_eq!(
            hosts,
            ["login1", "node1", "node1b", "node2", "node02", "node10"]
        );
    }

    #[test]
    fn engine_lines_are_told_apart() {
        assert_eq!(
            classify("pdsh@head: node2: ssh exited with exit code 255", false),
            Line::Engine {
                host: "node2",
                message: "pdsh@head: ssh exited with exit code 255".into()
            }
        );
        assert_eq!(
            classify("clush: node3: command timeout", false),
            Line::Engine {
                host: "node3",
                message: "clush: command timeout".into()
            }
        );
        assert_eq!(
            classify("node1: {\"kind\": 1}", false),
            Line::Host {
                host: "node1",
                rest: "{\"kind\": 1}"
            }
        );
        assert_eq!(
            classify("{\"kind\":\"gate\"}", false),
            Line::Bare("{\"kind\":\"gate\"}")
        );
        assert_eq!(
            classify("node1:", false),
            Line::Host {
                host: "node1",
                rest: ""
            }
        );
        assert_eq!(
            classify("sending signal 15 to node3 [sh] pid 23266", false),
            Line::Stray
        );
        assert_eq!(classify("  CPUID hypervisor bit: set", false), Line::Stray);
        assert_eq!(classify("verdict: no-smt (exit 4)", true), Line::Stray);
        assert!(matches!(
            classify("clush: node3: command timeout", true),
            Line::Engine { .. }
        ));
    }
}
