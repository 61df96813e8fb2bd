//! Reading saved results back: bounded, checked for kind and version, and
//! every failure a one-line error naming the file and the fix. The
//! loaded-document enum, its `head` and the parse by kind are generated
//! from the one list of kinds ([`mod@super::kinds`]).

// Every document type: the list of kinds names them (`saved_document!`).
use super::documents::*;
use super::head::{DocumentHead, UNKNOWN_HOST};
use super::input::{JSON_INPUT_CAP, read_capped};
use super::kinds::{DocumentKind, with_kinds};
use crate::escape::{escape_controls, escape_path};
use anyhow::{Result, anyhow, bail};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::error::Category;
use serde_json::{Number, Value};
use std::fmt::Write;
use std::ops::RangeInclusive;
use std::path::Path;

/// A document of any kind: what it opens with.
pub trait Headed {
    /// Kind, host, machine and evidence.
    fn head(&self) -> &DocumentHead;
}

/// The loaded-document enum, its `head`, each document type's [`Headed`],
/// and the parse of a document of a kind, from the list of kinds.
macro_rules! saved_document {
    ($($(#[$doc:meta])* $kind:ident => $document:ty $({ defaults: $($default:ident),+ })?,)*) => {
        /// A saved result, whichever command wrote it. It serializes as
        /// the document itself.
        #[derive(Clone, Debug, PartialEq, Serialize)]
        #[serde(untagged)]
        pub enum SavedDocument {
            $($(#[$doc])* $kind(Box<$document>),)*
        }

        impl SavedDocument {
            /// Kind, host, machine and evidence: what every document opens
            /// with.
            pub fn head(&self) -> &DocumentHead {
                match self {
                    $(SavedDocument::$kind(document) => &document.head,)*
                }
            }
        }

        $(impl Headed for $document {
            fn head(&self) -> &DocumentHead {
                &self.head
            }
        })*

        /// `value`, a document of `kind` (checked for version and sense),
        /// parsed as that kind's document.
        fn parse_as(kind: DocumentKind, value: Value, path: &Path) -> Result<SavedDocument> {
            let value = upgraded(kind, value);
            match kind {
                $(DocumentKind::$kind => Ok(SavedDocument::$kind(Box::new(parse(
                    &value, path, kind,
                )?))),)*
                DocumentKind::Snapshot => {
                    let shown = escape_path(path);
                    bail!(
                        "{shown}: a snapshot, which holds no results; `report` reads files \
                         written by {READ_KINDS}, and a snapshot is read with `topology \
                         --sysfs-root {shown}`"
                    )
                }
            }
        }
    };
}
with_kinds!(saved_document);

/// The two fields every saved document starts with.
#[derive(Deserialize)]
struct Header {
    kind: Option<Value>,
    schema_version: Option<u32>,
}

/// The kinds `report` reads, for its error messages.
const READ_KINDS: &str = "`topology --json`, `gate --json`, `run --json` (with or without a \
                          COMMAND, or --sweep), `pairs --json`, `latency --json`, `hybrid --json`, \
                          `memory --json` or `observe --json`";

/// Reads a saved document ("-" for standard input), at most
/// [`JSON_INPUT_CAP`] bytes of it.
pub fn load(path: &Path) -> Result<SavedDocument> {
    from_bytes(&read_capped(path, JSON_INPUT_CAP)?, path)
}

/// Parses a saved document already read from `path` (which only names it
/// in errors): the header first, so a file of another kind or version gets
/// that error rather than a parse error deep inside; then its sense
/// (`check_sense`) and its shape (the document's type).
pub fn from_bytes(bytes: &[u8], path: &Path) -> Result<SavedDocument> {
    let shown = escape_path(path);
    let value = json(bytes, path)?;
    let header = Header::deserialize(&value)
        .map_err(|e| anyhow!("{shown}: not a placement-study JSON file ({e})"))?;
    let kind = match header.kind {
        Some(kind) => serde_json::from_value::<DocumentKind>(kind.clone()).map_err(|_| {
            let named = kind
                .as_str()
                .map_or_else(|| kind.to_string(), str::to_string);
            anyhow!(
                "{shown}: a '{}' document; `report` reads files written by {READ_KINDS}",
                escape_controls(&named)
            )
        })?,
        None => {
            // `topology --json` wrote no head before 0.2.0: its files open
            // with `schema_version`, `source` and `summary`.
            if value.get("source").is_some() && value.get("summary").is_some() {
                check_version(header.schema_version, DocumentKind::Topology, path)?;
                check_sense(&value, path, DocumentKind::Topology)?;
                return Ok(SavedDocument::Topology(Box::new(legacy_topology(
                    value, path,
                )?)));
            }
            bail!("{shown}: no \"kind\" field: not a file written by placement-study {READ_KINDS}")
        }
    };
    check_version(header.schema_version, kind, path)?;
    check_sense(&value, path, kind)?;
    parse_as(kind, value, path)
}

/// Reads the document of `snapshot FILE.json` for `--sysfs-root`: at most
/// [`JSON_INPUT_CAP`] bytes, of kind `snapshot` and this schema version,
/// complete. Parsed straight into its type, never as a JSON tree first: a
/// large machine's snapshot has hundreds of thousands of files.
pub fn load_snapshot(path: &Path) -> Result<SnapshotResult> {
    let shown = escape_path(path);
    let bytes = read_capped(path, JSON_INPUT_CAP)?;
    let text = bytes.strip_prefix(UTF8_BOM).unwrap_or(&bytes);
    let fix = "--sysfs-root reads a snapshot folder or a file written by \
               `placement-study snapshot FILE.json`";
    let header: Header = serde_json::from_slice(text).map_err(|e| json_error(&e, path))?;
    let kind = header.kind.as_ref().map(|kind| {
        serde_json::from_value::<DocumentKind>(kind.clone())
            .ok()
            .filter(|&kind| kind == DocumentKind::Snapshot)
            .ok_or_else(|| {
                kind.as_str()
                    .map_or_else(|| kind.to_string(), str::to_string)
            })
    });
    match kind {
        Some(Ok(_)) => {}
        Some(Err(named)) => bail!(
            "{shown}: a '{}' document, not a snapshot; {fix}",
            escape_controls(&named)
        ),
        None => bail!("{shown}: no \"kind\" field: not a snapshot; {fix}"),
    }
    check_version(header.schema_version, DocumentKind::Snapshot, path)?;
    let document: SnapshotResult =
        serde_json::from_slice(text).map_err(|e| anyhow!("{shown}: damaged snapshot file: {e}"))?;
    if !document.head.complete {
        bail!(
            "{shown}: an incomplete snapshot (\"complete\": false); take it again with \
             `placement-study snapshot {shown}`"
        );
    }
    Ok(document)
}

/// The JSON text of a saved document, after a UTF-8 byte-order mark (which
/// some Windows editors write) if it has one. Each way it can fail has its
/// own message: serde_json's error category tells a file that ends too
/// soon from one that is not JSON, and its message tells data after the
/// document and nesting past its recursion limit from other syntax errors.
fn json(bytes: &[u8], path: &Path) -> Result<Value> {
    let text = bytes.strip_prefix(UTF8_BOM).unwrap_or(bytes);
    serde_json::from_slice(text).map_err(|e| json_error(&e, path))
}

/// What is wrong with the saved document at `path` that serde_json could
/// not parse, as [`json`] tells it.
fn json_error(e: &serde_json::Error, path: &Path) -> anyhow::Error {
    let shown = escape_path(path);
    let message = e.to_string();
    if e.classify() == Category::Eof {
        anyhow!("{shown}: not a placement-study JSON file ({e}); was it truncated?")
    } else if message.starts_with("trailing characters") {
        anyhow!(
            "{shown}: more after the JSON document ({e}); a saved file holds one document: \
             was another appended to it?"
        )
    } else if message.starts_with("recursion limit exceeded") {
        anyhow!(
            "{shown}: nested deeper than any placement-study document ({e}); not a file \
             placement-study wrote"
        )
    } else {
        anyhow!("{shown}: not a placement-study JSON file ({e})")
    }
}

/// The byte-order mark UTF-8 text may open with.
const UTF8_BOM: &[u8] = b"\xef\xbb\xbf";

/// The longest time a document may hold, in seconds: a century. Far above
/// any real observation or study, far below the 300-digit numbers a
/// damaged or forged file could make a view print.
const LONGEST_SECONDS: f64 = 100.0 * 365.25 * 24.0 * 3600.0;

/// A time field's unit, and how many of it make a second, by the field's
/// name: `ms` and `*_ms`, `*_ns`, `seconds` and `*_seconds` (not a rate
/// such as `items_per_ms`).
fn time_unit(field: &str) -> Option<(&str, f64)> {
    if field.contains("_per_") {
        return None;
    }
    let unit = field.rsplit('_').next().unwrap_or(field);
    let per_second = match unit {
        "ms" => 1e3,
        "ns" => 1e9,
        "seconds" => 1.0,
        _ => return None,
    };
    Some((unit, per_second))
}

/// Is `field` a share of a whole (`share`, `*_share`)?
fn is_share(field: &str) -> bool {
    field == "share" || field.ends_with("_share")
}

/// The numbers a field may hold, by its name, and that rule in words: a
/// time ([`time_unit`]) from 0 to [`LONGEST_SECONDS`], a share from 0 to 1;
/// `None` for any other field. `check_sense` holds every number to it, and
/// each kind's JSON Schema says it (`saved::schema`).
pub(super) fn sensible_range(field: &str) -> Option<(RangeInclusive<f64>, String)> {
    if let Some((unit, per_second)) = time_unit(field) {
        let longest = LONGEST_SECONDS * per_second;
        return Some((
            0.0..=longest,
            format!("a time is from 0 to a century ({longest:e} {unit})"),
        ));
    }
    // The rounding of part ÷ whole may pass 1 by a few ulps.
    is_share(field).then(|| (0.0..=1.0 + 1e-9, "a share is from 0 to 1".to_string()))
}

/// Checks that `value`'s numbers make sense ([`sensible_range`]): every
/// time (by its field's name, [`time_unit`]) from 0 to
/// [`LONGEST_SECONDS`], every share from 0 to 1. (Every number is finite
/// already: JSON has no NaN nor infinity, and serde_json refuses a number
/// out of f64's range.)
///
/// Why by names, over the JSON, rather than a check per document type: the
/// documents share their field names' conventions (a unit suffix on every
/// time, `share` on every fraction of a whole) across dozens of types, so
/// one walk and two rules cover every field of every document, also those
/// added later, where a check written per type would be hundreds of lines
/// and miss whatever field it forgot.
fn check_sense(value: &Value, path: &Path, kind: DocumentKind) -> Result<()> {
    let mut at = String::new();
    match nonsense(value, None, &mut at) {
        None => Ok(()),
        Some((number, rule)) => bail!(
            "{}: damaged {kind} file: {} is {number}; {rule}",
            escape_path(path),
            escape_controls(&at)
        ),
    }
}

/// The first number below `value` (reached through the field `field`, at
/// `at`, which is left naming it) that breaks its field's rule, and the
/// rule.
fn nonsense(value: &Value, field: Option<&str>, at: &mut String) -> Option<(Number, String)> {
    match value {
        Value::Number(shown) => {
            let (range, rule) = sensible_range(field?)?;
            (!range.contains(&shown.as_f64()?)).then(|| (shown.clone(), rule))
        }
        Value::Array(items) => items.iter().enumerate().find_map(|(index, item)| {
            let length = at.len();
            let _ = write!(at, "[{index}]");
            let found = nonsense(item, field, at);
            if found.is_none() {
                at.truncate(length);
            }
            found
        }),
        Value::Object(fields) => fields.iter().find_map(|(name, item)| {
            let length = at.len();
            if !at.is_empty() {
                at.push('.');
            }
            at.push_str(name);
            let found = nonsense(item, Some(name), at);
            if found.is_none() {
                at.truncate(length);
            }
            found
        }),
        _ => None,
    }
}

fn check_version(version: Option<u32>, kind: DocumentKind, path: &Path) -> Result<()> {
    let shown = escape_path(path);
    match version {
        Some(RESULT_SCHEMA_VERSION) => Ok(()),
        Some(version) => bail!(
            "{shown}: schema version {version}, this placement-study reads version \
             {RESULT_SCHEMA_VERSION}; re-render it with the placement-study version that wrote it"
        ),
        None => bail!("{shown}: no \"schema_version\" field: not a complete {kind} file"),
    }
}

fn parse<T: DeserializeOwned>(value: &Value, path: &Path, kind: DocumentKind) -> Result<T> {
    T::deserialize(value).map_err(|e| anyhow!("{}: damaged {kind} file: {e}", escape_path(path)))
}

/// `value` as this version reads a document of `kind`: a gate saved before
/// 0.2.0, when gates recorded neither their host, nor when they started,
/// nor the machine's topology, gets the host [`UNKNOWN_HOST`] (the head's
/// other two are optional), the one place old gate files are upgraded.
fn upgraded(kind: DocumentKind, mut value: Value) -> Value {
    if let (DocumentKind::Gate, Some(fields)) = (kind, value.as_object_mut()) {
        if fields.get("host").is_none_or(Value::is_null) {
            fields.insert("host".into(), UNKNOWN_HOST.into());
        }
    }
    value
}

/// A `topology --json` file from before topology had a head: the machine
/// as it was probed, with no host, start time or tool version recorded.
fn legacy_topology(value: Value, path: &Path) -> Result<TopologyResult> {
    let machine: crate::probe::Topology = serde_json::from_value(value)
        .map_err(|e| anyhow!("{}: damaged topology file: {e}", escape_path(path)))?;
    let mut document = TopologyResult::new(machine, UNKNOWN_HOST.into(), 0);
    document.head.started_unix = None;
    document.head.tool_version = "unknown".into();
    Ok(document)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn first_nonsense(value: Value) -> Option<(String, String)> {
        let mut at = String::new();
        nonsense(&value, None, &mut at).map(|(number, _)| (at, number.to_string()))
    }

    #[test]
    fn times_and_shares_are_checked_wherever_they_are_nested() {
        let named = |at: &str, number: &str| Some((at.to_string(), number.to_string()));
        assert_eq!(
            first_nonsense(json!({"timeline": [{"class_ms": [1.0, -2.0]}]})),
            named("timeline[0].class_ms[1]", "-2.0")
        );
        assert_eq!(
            first_nonsense(json!({"threads": [{"home_share": 1.5}]})),
            named("threads[0].home_share", "1.5")
        );
        assert_eq!(
            first_nonsense(json!({"seconds": 4e9})),
            named("seconds", "4000000000.0")
        );
        // A rate is no time; −0.0 is no negative time; a change may be negative.
        assert_eq!(
            first_nonsense(json!({"items_per_ms": -1.0, "handover_ms": -0.0, "change": -0.5})),
            None
        );
    }
}
