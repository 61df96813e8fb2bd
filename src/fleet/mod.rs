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
//!   `msg` about a host that did not run it (`unreachable`, `failed`, the
//!   `rc` of a module that never started, or `changed` alone when its
//!   `task_timeout` ended it). The host is the file's name,
//!   as Ansible names it; without a document the reason is Ansible's
//!   message or the exit code, with the last line of `stderr` (else of
//!   `stdout`). Any other object without `kind` is a damaged document;
//! * **text lines**, as pdsh and clush print them. `HOST: REST` gives REST
//!   to HOST (both engines prefix every output line of a host that way); a
//!   bare line `{…}` (what `--json-line` writes) is a document of the host
//!   named inside it, else of the file. The engines' own lines about a host
//!   (`pdsh@head: HOST: ssh exited with exit code 255`, `clush: HOST:
//!   command timeout`) are kept as that host's engine message, all of
//!   them in order (a timeout, then the killed ssh's exit). Anything
//!   else is ignored: the human view may be mixed in with `2>&1`. Engines
//!   prefix every line, so in an input with a bare document line (`gate
//!   --json-line - 2>&1`, Ansible's output) a `word: text` line is that
//!   human view ("verdict: no-smt"), not a host's line, unless its text is
//!   a document (`cat pdsh.out gate.jsonl`). A line that holds a document
//!   (a `{`) behind a prefix that is no host name (empty, over 253
//!   characters, a control character, markup) is no host's and is not
//!   ignored: it is counted and named by its line as unreadable.
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
//!
//! The module's parts:
//!
//! * [`hostlist`]: the hostlist syntax of pdsh and ClusterShell
//!   (`node[1-3,07],login1`), expanded for `--hosts` and folded back;
//! * `engines`: pdsh and clush output, line by line;
//! * `ansible`: Ansible's `--tree` files;
//! * [`escape_controls`], [`one_line`] and [`natural`]: what the hosts sent,
//!   made safe to show and sorted as people count.

mod ansible;
mod engines;
pub mod hostlist;
#[cfg(test)]
mod tests;
mod text;

pub use crate::escape::escape_controls;
use crate::escape::escape_path;
pub use text::{REASON_CHARS, natural, one_line};

use crate::input::NotAFile;
use crate::saved::load::{SavedDocument, from_bytes};
use crate::saved::{DocumentKind, read_named};
use anyhow::{Error, Result, anyhow};
use serde::Serialize;
use std::collections::HashMap;
use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// Largest fleet input read, per FILE (or standard input): 512 MiB. One
/// saved document is capped at [`crate::saved::JSON_INPUT_CAP`], but a
/// fleet input holds one per host: a thousand hosts' gates with every raw
/// sample are tens of MB, their `observe` or `pairs` documents a few
/// hundred. The input is held whole while it is read, so the cap stays
/// well below a head node's memory; a bigger fleet is split over several
/// FILEs.
pub const FLEET_INPUT_CAP: u64 = 512 * 1024 * 1024;

/// What a fleet input is, in the errors about one that is not.
const FLEET_INPUT: &str = "a fleet input file";

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

/// What every input held: the hosts, and the lines that carry a document
/// but belong to no host.
#[derive(Clone, Debug, PartialEq)]
pub struct Gathered<T> {
    pub hosts: Vec<FleetHost<T>>,
    /// Lines with a document (a `{`) behind a prefix that is not a host
    /// name (empty, too long, a control character, markup): counted and
    /// named, never dropped.
    pub unread: Vec<Origin>,
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
) -> Result<Gathered<T>> {
    let named = files
        .iter()
        .map(|path| Named::look_up(path))
        .collect::<Result<Vec<Named>>>()?;
    let mut gathering = Gathering::default();
    for (path, named) in files.iter().zip(named) {
        match named {
            Named::Folder => gathering.folder(path, &mut keep)?,
            Named::Input => {
                let bytes = read_named(path, FLEET_INPUT_CAP, FLEET_INPUT).map_err(|e| {
                    // A FIFO or device: the error says how to read it all the same.
                    if e.is::<NotAFile>() {
                        return anyhow!("report --fleet: {}", escape_controls(&format!("{e:#}")));
                    }
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
    let unread = std::mem::take(&mut gathering.unread);
    Ok(Gathered {
        hosts: gathering.finish(),
        unread,
    })
}

/// What a path named on the command line is.
enum Named {
    /// Each of its files is read.
    Folder,
    /// Read as one input: a regular file, or `-` (whatever is piped there).
    /// Anything else (a FIFO, a device) is refused when it is read.
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
        escape_path(path)
    }
}

/// What has come from one host so far.
struct Sent<T> {
    documents: Vec<Received<T>>,
    /// Candidate lines that did not parse: the count, and the last error.
    unreadable: usize,
    parse_error: Option<Broken>,
    /// The engine's messages about the host, in order, joined by "; ";
    /// where the first was printed.
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
    /// Lines with a document that no host can own ([`Gathered::unread`]).
    unread: Vec<Origin>,
}

impl<T> Default for Gathering<T> {
    fn default() -> Gathering<T> {
        Gathering {
            order: Vec::new(),
            hosts: HashMap::new(),
            unread: Vec::new(),
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
        match read_named(path, FLEET_INPUT_CAP, FLEET_INPUT) {
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
        if self.ansible(file, bytes, keep) {
            return;
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
                let head = document.head();
                let host = head.known_host().unwrap_or(file).to_string();
                let kind = head.kind;
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
                let head = document.head();
                let owner = host.or(head.known_host()).unwrap_or(file).to_string();
                let kind = head.kind;
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
