//! The JSON Schema of each kind of saved document, generated from its type
//! (`schemars` reads the same serde attributes that write and read it, so
//! a field is `required` exactly where the reader requires it): the files
//! in `schemas/` are these, written out and checked against every fixture
//! by `tests/schemas.rs`. A kind added to the list ([`mod@super::kinds`])
//! has its schema with its line there.
//!
//! Beside what the types say, each schema says what `load` checks before
//! parsing: the document's `kind` is its own and its `schema_version` this
//! build's; every time and share is in its range (by the field's name, as
//! `load` checks them); a gate may lack its `host` (gates before 0.2.0 did
//! not record one, and `load` reads them as host "unknown"); and a
//! topology document without `kind` is the probed machine as `topology
//! --json` wrote it before it had a head.

// Every document type: the list of kinds names them (`kind_schemas!`).
use super::documents::*;
use super::head::RESULT_SCHEMA_VERSION;
use super::kinds::{DocumentKind, with_kinds};
use super::load::sensible_range;
use crate::probe::Topology;
use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde_json::{Map, Value, json};
use std::borrow::Cow;
use std::ops::RangeInclusive;

/// Each kind's document type: its root schema, and the name of its
/// definition where another document holds one (a run's gate).
macro_rules! kind_schemas {
    ($($(#[$doc:meta])* $kind:ident => $document:ty $({ defaults: $($default:ident),+ })?,)*) => {
        /// The root schema of a `kind` document, from `generator`.
        fn root_schema(kind: DocumentKind, generator: &mut SchemaGenerator) -> Schema {
            match kind {
                $(DocumentKind::$kind => generator.root_schema_for::<$document>(),)*
                DocumentKind::Snapshot => generator.root_schema_for::<SnapshotResult>(),
            }
        }

        /// The name of the definition of a `kind` document's type.
        fn type_name(kind: DocumentKind) -> Cow<'static, str> {
            match kind {
                $(DocumentKind::$kind => <$document>::schema_name(),)*
                DocumentKind::Snapshot => SnapshotResult::schema_name(),
            }
        }
    };
}
with_kinds!(kind_schemas);

/// A generator of draft 2020-12 schemas, of what a reader accepts.
fn generator() -> SchemaGenerator {
    SchemaSettings::draft2020_12().into_generator()
}

/// The root schema of the document `T` of the kind named `kind` (a
/// [`DocumentKind`]'s, or "baseline"): its `kind` is that name, every
/// `schema_version` in it is [`RESULT_SCHEMA_VERSION`], the one this build
/// reads, and every time and share is bounded as `load` bounds them.
pub fn document_schema<T: JsonSchema>(kind: &str) -> Schema {
    let mut schema = generator().root_schema_for::<T>();
    fixed_head(&mut schema, kind);
    finished(schema)
}

impl DocumentKind {
    /// The JSON Schema (draft 2020-12) of a document of this kind, as this
    /// build writes it and `report` (or `--sysfs-root`, a snapshot) reads
    /// it: `schemas/KIND.schema.json`.
    pub fn json_schema(self) -> Schema {
        let mut generator = generator();
        let mut schema = match self {
            // `topology --json` wrote no head before 0.2.0: a file without
            // `kind` is read as the probed machine.
            DocumentKind::Topology => {
                let current = generator.subschema_for::<TopologyResult>();
                let machine = generator.subschema_for::<Topology>();
                json_schema!({
                    "$schema": generator.settings().meta_schema,
                    "title": type_name(self),
                    "description": "The probed machine: `topology --json`, with its head; \
                                    without `kind`, as it was written before 0.2.0.",
                    "if": {"required": ["kind"]},
                    "then": current,
                    "else": machine,
                    "$defs": generator.take_definitions(true),
                })
            }
            kind => root_schema(kind, &mut generator),
        };
        if self != DocumentKind::Topology {
            fixed_head(&mut schema, self.into());
        }
        // A document holding another (a run its gate): that one's kind is
        // fixed too.
        if let Some(definitions) = schema.get_mut("$defs").and_then(Value::as_object_mut) {
            for &kind in <DocumentKind as strum::VariantArray>::VARIANTS {
                if let Some(nested) = definitions.get_mut(type_name(kind).as_ref()) {
                    if let Ok(nested) = <&mut Schema>::try_from(nested) {
                        fixed_head(nested, kind.into());
                    }
                }
            }
        }
        // Gates before 0.2.0 recorded no host: `load` reads them as host
        // "unknown".
        if self == DocumentKind::Gate {
            if let Some(required) = schema.get_mut("required").and_then(Value::as_array_mut) {
                required.retain(|field| field != "host");
            }
        }
        finished(schema)
    }
}

/// `schema`'s `kind` property fixed to `kind`, where it has one.
fn fixed_head(schema: &mut Schema, kind: &str) {
    if let Some(property) = properties(schema).and_then(|p| p.get_mut("kind")) {
        *property = json_schema!({
            "description": "Which command wrote the document.",
            "const": kind,
        })
        .into();
    }
}

/// `schema` finished: every `schema_version` in it fixed to
/// [`RESULT_SCHEMA_VERSION`] (`load` refuses any other), every number
/// `load` holds to a range by its field's name ([`sensible_range`]: a time,
/// a share) bounded to it, every description in prose (the doc comment it
/// is taken from without its line breaks, but for those between paragraphs
/// and before the items of a list), and the definitions nothing refers to
/// any more (the kinds a fixed `kind` no longer names) dropped.
fn finished(mut schema: Schema) -> Schema {
    let Some(fields) = schema.as_object_mut() else {
        return schema;
    };
    each_object(fields, &mut |object| {
        if let Some(Value::Object(properties)) = object.get_mut("properties") {
            for (name, property) in properties.iter_mut() {
                if name == "schema_version" {
                    *property = json!({
                        "description": "The schema version: this build writes and reads only this one.",
                        "const": RESULT_SCHEMA_VERSION,
                    });
                } else if let Some((range, _)) = sensible_range(name) {
                    bounded(property, &range);
                }
            }
        }
        if let Some(Value::String(text)) = object.get_mut("description") {
            *text = prose(text);
        }
    });
    loop {
        let mut used = Vec::new();
        each_object(&mut fields.clone(), &mut |object| {
            if let Some(Value::String(target)) = object.get("$ref") {
                used.push(target.clone());
            }
        });
        let Some(Value::Object(definitions)) = fields.get_mut("$defs") else {
            break;
        };
        let before = definitions.len();
        definitions.retain(|name, _| used.contains(&format!("#/$defs/{name}")));
        if definitions.len() == before {
            break;
        }
    }
    schema
}

/// `visit` called on `object` and on every object below it.
fn each_object(object: &mut Map<String, Value>, visit: &mut impl FnMut(&mut Map<String, Value>)) {
    visit(object);
    for field in object.values_mut() {
        match field {
            Value::Object(inner) => each_object(inner, visit),
            Value::Array(items) => {
                for item in items {
                    if let Value::Object(inner) = item {
                        each_object(inner, visit);
                    }
                }
            }
            _ => {}
        }
    }
}

/// `schema`, a field's (a number, a list of them, or either or null), with
/// its numbers bounded to `range`.
fn bounded(schema: &mut Value, range: &RangeInclusive<f64>) {
    let Value::Object(fields) = schema else {
        return;
    };
    if let Some(items) = fields.get_mut("items") {
        bounded(items, range);
    }
    let numeric = match fields.get("type") {
        Some(Value::String(name)) => name == "number" || name == "integer",
        Some(Value::Array(names)) => names
            .iter()
            .any(|name| name == "number" || name == "integer"),
        _ => false,
    };
    if numeric {
        let at_least = fields.get("minimum").and_then(Value::as_f64);
        if at_least.is_none_or(|minimum| minimum < *range.start()) {
            fields.insert("minimum".into(), (*range.start()).into());
        }
        fields.insert("maximum".into(), (*range.end()).into());
    }
}

/// A doc comment's lines joined: each paragraph one line, and each item
/// of a list (`* `, `- `) a line of its own.
fn prose(text: &str) -> String {
    let paragraphs: Vec<String> = text
        .split("\n\n")
        .map(|paragraph| {
            let mut joined = String::new();
            for line in paragraph.lines().map(str::trim) {
                if !joined.is_empty() {
                    let item = line.starts_with("* ") || line.starts_with("- ");
                    joined.push(if item { '\n' } else { ' ' });
                }
                joined.push_str(line);
            }
            joined
        })
        .collect();
    paragraphs.join("\n\n")
}

/// The `properties` of an object schema.
fn properties(schema: &mut Schema) -> Option<&mut Map<String, Value>> {
    schema.get_mut("properties").and_then(Value::as_object_mut)
}
