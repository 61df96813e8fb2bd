//! Reading saved results back: bounded, checked for kind and version, and
//! every failure a one-line error naming the file and the fix. This is one
//! of the two places that match on a document's kind (the other chooses
//! its renderer, in `report::document`).

use super::documents::{
    DocumentKind, GateResult, HybridResult, ObserveResult, PairsResult, RESULT_SCHEMA_VERSION,
    RunResult, TopologyResult,
};
use super::head::{DocumentHead, UNKNOWN_HOST};
use super::input::{JSON_INPUT_CAP, read_capped};
use anyhow::{Result, anyhow, bail};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::path::Path;

/// A saved result, whichever command wrote it. It serializes as the
/// document itself.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum SavedDocument {
    Gate(Box<GateResult>),
    Run(Box<RunResult>),
    Pairs(Box<PairsResult>),
    Hybrid(Box<HybridResult>),
    Observe(Box<ObserveResult>),
    Topology(Box<TopologyResult>),
}

/// The two fields every saved document starts with.
#[derive(Deserialize)]
struct Header {
    kind: Option<Value>,
    schema_version: Option<u32>,
}

/// The kinds `report` reads, for its error messages.
const READ_KINDS: &str = "`topology --json`, `gate --json`, `run --json`, `pairs --json`, \
                          `hybrid --json` or `observe --json`";

/// Reads a saved document ("-" for standard input), at most
/// [`JSON_INPUT_CAP`] bytes of it.
pub fn load(path: &Path) -> Result<SavedDocument> {
    from_bytes(&read_capped(path, JSON_INPUT_CAP)?, path)
}

/// Parses a saved document already read from `path` (which only names it
/// in errors): the header first, so a file of another kind or version gets
/// that error rather than a parse error deep inside.
pub fn from_bytes(bytes: &[u8], path: &Path) -> Result<SavedDocument> {
    let shown = path.display();
    let not_ours = |e: serde_json::Error| {
        anyhow!("{shown}: not a placement-study JSON file ({e}); was it truncated?")
    };
    let header: Header = serde_json::from_slice(bytes).map_err(not_ours)?;
    let kind = match header.kind {
        Some(kind) => serde_json::from_value::<DocumentKind>(kind.clone()).map_err(|_| {
            let named = kind
                .as_str()
                .map_or_else(|| kind.to_string(), str::to_string);
            anyhow!("{shown}: a '{named}' document; `report` reads files written by {READ_KINDS}")
        })?,
        None => {
            // `topology --json` wrote no head before 0.2.0: its files open
            // with `schema_version`, `source` and `summary`.
            let value: Value = serde_json::from_slice(bytes).map_err(not_ours)?;
            if value.get("source").is_some() && value.get("summary").is_some() {
                check_version(header.schema_version, DocumentKind::Topology, path)?;
                return Ok(SavedDocument::Topology(Box::new(legacy_topology(
                    value, path,
                )?)));
            }
            bail!("{shown}: no \"kind\" field: not a file written by placement-study {READ_KINDS}")
        }
    };
    check_version(header.schema_version, kind, path)?;
    Ok(match kind {
        DocumentKind::Gate => SavedDocument::Gate(Box::new(gate(bytes, path)?)),
        DocumentKind::Run => SavedDocument::Run(Box::new(parse(bytes, path, kind)?)),
        DocumentKind::Pairs => SavedDocument::Pairs(Box::new(parse(bytes, path, kind)?)),
        DocumentKind::Hybrid => SavedDocument::Hybrid(Box::new(parse(bytes, path, kind)?)),
        DocumentKind::Observe => SavedDocument::Observe(Box::new(parse(bytes, path, kind)?)),
        DocumentKind::Topology => SavedDocument::Topology(Box::new(parse(bytes, path, kind)?)),
    })
}

impl SavedDocument {
    /// Kind, host, machine and evidence: what every document opens with.
    pub fn head(&self) -> &DocumentHead {
        match self {
            SavedDocument::Gate(d) => &d.head,
            SavedDocument::Run(d) => &d.head,
            SavedDocument::Pairs(d) => &d.head,
            SavedDocument::Hybrid(d) => &d.head,
            SavedDocument::Observe(d) => &d.head,
            SavedDocument::Topology(d) => &d.head,
        }
    }
}

fn check_version(version: Option<u32>, kind: DocumentKind, path: &Path) -> Result<()> {
    let shown = path.display();
    match version {
        Some(RESULT_SCHEMA_VERSION) => Ok(()),
        Some(version) => bail!(
            "{shown}: schema version {version}, this placement-study reads version \
             {RESULT_SCHEMA_VERSION}; re-render it with the placement-study version that wrote it"
        ),
        None => bail!("{shown}: no \"schema_version\" field: not a complete {kind} file"),
    }
}

fn parse<T: DeserializeOwned>(bytes: &[u8], path: &Path, kind: DocumentKind) -> Result<T> {
    serde_json::from_slice(bytes)
        .map_err(|e| anyhow!("{}: damaged {kind} file: {e}", path.display()))
}

/// A gate, also one saved before 0.2.0, when gates recorded neither their
/// host, nor when they started, nor the machine's topology: the host reads
/// as [`UNKNOWN_HOST`] (the head's other two are optional), the one place
/// old gate files are upgraded.
fn gate(bytes: &[u8], path: &Path) -> Result<GateResult> {
    let mut value: Map<String, Value> = parse(bytes, path, DocumentKind::Gate)?;
    if value.get("host").is_none_or(Value::is_null) {
        value.insert("host".into(), UNKNOWN_HOST.into());
    }
    serde_json::from_value(Value::Object(value))
        .map_err(|e| anyhow!("{}: damaged gate file: {e}", path.display()))
}

/// A `topology --json` file from before topology had a head: the machine
/// as it was probed, with no host, start time or tool version recorded.
fn legacy_topology(value: Value, path: &Path) -> Result<TopologyResult> {
    let machine: crate::probe::Topology = serde_json::from_value(value)
        .map_err(|e| anyhow!("{}: damaged topology file: {e}", path.display()))?;
    let mut document = TopologyResult::new(machine, UNKNOWN_HOST.into(), 0);
    document.head.started_unix = None;
    document.head.tool_version = "unknown".into();
    Ok(document)
}
