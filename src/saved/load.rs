//! Reading saved results back: bounded, checked for kind and version, and
//! every failure a one-line error naming the file and the fix.

use super::documents::{
    DocumentKind, Evidence, GateResult, HybridResult, ObserveResult, PairsResult,
    RESULT_SCHEMA_VERSION, RunResult,
};
use super::input::{JSON_INPUT_CAP, read_capped};
use anyhow::{Result, anyhow, bail};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use std::path::Path;

/// A saved result, whichever command wrote it.
#[derive(Clone, Debug, PartialEq)]
pub enum SavedDocument {
    Gate(Box<GateResult>),
    Run(Box<RunResult>),
    Pairs(Box<PairsResult>),
    Hybrid(Box<HybridResult>),
    Observe(Box<ObserveResult>),
}

impl SavedDocument {
    /// Which command wrote it.
    pub fn kind(&self) -> DocumentKind {
        match self {
            SavedDocument::Gate(_) => DocumentKind::Gate,
            SavedDocument::Run(_) => DocumentKind::Run,
            SavedDocument::Pairs(_) => DocumentKind::Pairs,
            SavedDocument::Hybrid(_) => DocumentKind::Hybrid,
            SavedDocument::Observe(_) => DocumentKind::Observe,
        }
    }

    /// The host it ran on, as the document records it (a gate saved before
    /// gates recorded their host names none).
    pub fn host(&self) -> Option<&str> {
        match self {
            SavedDocument::Gate(gate) => gate.host.as_deref(),
            SavedDocument::Run(run) => Some(&run.host),
            SavedDocument::Pairs(pairs) => Some(&pairs.host),
            SavedDocument::Hybrid(hybrid) => Some(&hybrid.host),
            SavedDocument::Observe(observe) => Some(&observe.host),
        }
    }

    /// What the machine said about itself, shown beside every verdict.
    pub fn evidence(&self) -> &Evidence {
        match self {
            SavedDocument::Gate(gate) => &gate.evidence,
            SavedDocument::Run(run) => &run.evidence,
            SavedDocument::Pairs(pairs) => &pairs.evidence,
            SavedDocument::Hybrid(hybrid) => &hybrid.evidence,
            SavedDocument::Observe(observe) => &observe.evidence,
        }
    }
}

/// The two fields every saved document starts with.
#[derive(Deserialize)]
struct Header {
    kind: Option<String>,
    schema_version: Option<u32>,
}

/// Reads a `gate --json`, `run --json`, `pairs --json`, `hybrid --json` or `observe --json` file ("-" for standard input),
/// at most [`JSON_INPUT_CAP`] bytes of it.
pub fn load(path: &Path) -> Result<SavedDocument> {
    from_bytes(&read_capped(path, JSON_INPUT_CAP)?, path)
}

/// Parses a saved document already read from `path` (which only names it
/// in errors): the header first, so a file of another kind or version gets
/// that error rather than a parse error deep inside.
pub fn from_bytes(bytes: &[u8], path: &Path) -> Result<SavedDocument> {
    let shown = path.display();
    let header: Header = serde_json::from_slice(bytes).map_err(|e| {
        anyhow!("{shown}: not a placement-study JSON file ({e}); was it truncated?")
    })?;
    let kind = match header.kind.as_deref() {
        Some("gate") => DocumentKind::Gate,
        Some("run") => DocumentKind::Run,
        Some("pairs") => DocumentKind::Pairs,
        Some("hybrid") => DocumentKind::Hybrid,
        Some("observe") => DocumentKind::Observe,
        Some(other) => bail!(
            "{shown}: a '{other}' document; `report` reads files written by `gate --json`, `run --json`, `pairs --json`, `hybrid --json` or `observe --json`"
        ),
        None => bail!(
            "{shown}: no \"kind\" field: not a file written by placement-study `gate --json`, `run --json`, `pairs --json`, `hybrid --json` or `observe --json`"
        ),
    };
    match header.schema_version {
        Some(RESULT_SCHEMA_VERSION) => {}
        Some(version) => bail!(
            "{shown}: schema version {version}, this placement-study reads version \
             {RESULT_SCHEMA_VERSION}; re-render it with the placement-study version that wrote it"
        ),
        None => bail!("{shown}: no \"schema_version\" field: not a complete {kind} file"),
    }
    Ok(match kind {
        DocumentKind::Gate => SavedDocument::Gate(Box::new(parse(bytes, path, kind)?)),
        DocumentKind::Run => SavedDocument::Run(Box::new(parse(bytes, path, kind)?)),
        DocumentKind::Pairs => SavedDocument::Pairs(Box::new(parse(bytes, path, kind)?)),
        DocumentKind::Hybrid => SavedDocument::Hybrid(Box::new(parse(bytes, path, kind)?)),
        DocumentKind::Observe => SavedDocument::Observe(Box::new(parse(bytes, path, kind)?)),
    })
}

fn parse<T: DeserializeOwned>(bytes: &[u8], path: &Path, kind: DocumentKind) -> Result<T> {
    serde_json::from_slice(bytes)
        .map_err(|e| anyhow!("{}: damaged {kind} file: {e}", path.display()))
}
