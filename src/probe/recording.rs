//! What probing a root read, recorded: every folder listed and every file
//! read, with its bytes, and every path looked up without either. A
//! [`SysfsRoot`](super::SysfsRoot) recording a probe collects one; one read
//! back (`snapshot FILE.json`, then `--sysfs-root FILE.json`) answers every
//! read the same probe makes, so the machine probes as it did, from one
//! file instead of a folder of hundreds of thousands.

use data_encoding::BASE64;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::BTreeMap;

/// Subfolder of a snapshot holding the CPUID dump (`puN` files).
pub const CPUID_DIR: &str = "cpuid";

/// The reads of one probe, by path relative to the root
/// (`sys/devices/system/cpu/cpu3/topology/core_id`). A path in none of the
/// maps was absent when recorded, or never read.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Recording {
    /// Folder → its names, sorted. Only folders that existed.
    pub listings: BTreeMap<String, Vec<String>>,
    /// File → its bytes, as read (bounded as the probe bounds them).
    pub files: BTreeMap<String, RecordedBytes>,
    /// Paths whose existence (or kind) was asked of the file system itself,
    /// no listing telling: each that existed, and what it was.
    pub found: BTreeMap<String, FoundKind>,
}

/// What a path looked up, neither listed nor read, was.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum FoundKind {
    Folder,
    /// A file, or anything else that is not a folder.
    Other,
}

/// A file's bytes. In JSON, a string where they are UTF-8 (sysfs and
/// procfs text, hwloc's CPUID dump); otherwise `{"base64": "…"}`, so any
/// bytes round-trip exactly.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordedBytes(pub Vec<u8>);

/// A file's bytes as read: a string where they are UTF-8, otherwise
/// `{"base64": "…"}`.
#[derive(Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
enum BytesForm<'a> {
    /// UTF-8 bytes, as they are.
    Text(std::borrow::Cow<'a, str>),
    /// Any other bytes, in base64.
    Binary {
        #[schemars(extend("contentEncoding" = "base64"))]
        base64: String,
    },
}

impl Serialize for RecordedBytes {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match std::str::from_utf8(&self.0) {
            Ok(text) => BytesForm::Text(text.into()),
            Err(_) => BytesForm::Binary {
                base64: BASE64.encode(&self.0),
            },
        }
        .serialize(serializer)
    }
}

/// Written by hand, as its Serialize is: the schema of the form it is
/// written in.
impl schemars::JsonSchema for RecordedBytes {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "RecordedBytes".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        BytesForm::json_schema(generator)
    }
}

impl<'de> Deserialize<'de> for RecordedBytes {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match BytesForm::deserialize(deserializer)? {
            BytesForm::Text(text) => Ok(RecordedBytes(text.into_owned().into_bytes())),
            BytesForm::Binary { base64 } => BASE64
                .decode(base64.as_bytes())
                .map(RecordedBytes)
                .map_err(|e| serde::de::Error::custom(format!("bad base64 ({e})"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_a_string_and_other_bytes_base64_both_round_trip() {
        for (bytes, json) in [
            (&b"0-3\n"[..], r#""0-3\n""#),
            (
                b"arm,juno\0arm,vexpress\0",
                r#""arm,juno\u0000arm,vexpress\u0000""#,
            ),
            (b"\xff\xfe\n", r#"{"base64":"//4K"}"#),
        ] {
            let recorded = RecordedBytes(bytes.to_vec());
            assert_eq!(serde_json::to_string(&recorded).unwrap(), json);
            let back: RecordedBytes = serde_json::from_str(json).unwrap();
            assert_eq!(back, recorded);
        }
        let bad = serde_json::from_str::<RecordedBytes>(r#"{"base64":"!"}"#).unwrap_err();
        assert!(bad.to_string().starts_with("bad base64"), "{bad}");
    }
}
