//! Ansible's `--tree` files: one JSON object per host, named after it,
//! holding the command's output or Ansible's word on why there is none.

use super::{Broken, Gathering, Origin};
use crate::saved::SavedDocument;
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;
use std::path::Path;

impl<T> Gathering<T> {
    /// `bytes` read as an Ansible `--tree` file, when they are one
    /// ([`AnsibleResult::of`]); false, reading nothing, when not. The host
    /// is the file's name (standard input is a host of that name), its
    /// documents the `{` lines of `stdout`, Ansible's message and the last
    /// other line the reason it has none.
    pub(super) fn ansible(
        &mut self,
        file: &str,
        bytes: &[u8],
        keep: &mut impl FnMut(&Origin, SavedDocument) -> T,
    ) -> bool {
        let Some(result) = AnsibleResult::of(bytes) else {
            return false;
        };
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
        true
    }
}

/// What `report --fleet` reads of an Ansible result (the object a `--tree`
/// file holds, one per host; the other fields, `cmd`, `start`,
/// `stdout_lines` and the like, are skipped unread).
#[derive(Deserialize)]
pub(super) struct AnsibleResult {
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
    /// Alone with `msg` in the result of a task its `task_timeout` ended
    /// (ansible-core 2.14: "The command action failed to execute in the
    /// expected time frame (5) and was terminated").
    changed: Option<IgnoredAny>,
}

impl AnsibleResult {
    /// `bytes` as an Ansible result, when they are one JSON object of that
    /// shape: no `kind`, and either the command's `stdout` or Ansible's
    /// `msg` with `unreachable`, `failed`, `changed` or an `rc`. Anything else (a
    /// placement-study document, even a damaged one without its `kind`, or
    /// lines of documents) is left to be read as it always was.
    pub(super) fn of(bytes: &[u8]) -> Option<AnsibleResult> {
        if bytes.trim_ascii_start().first() != Some(&b'{') {
            return None;
        }
        let result: AnsibleResult = serde_json::from_slice(bytes).ok()?;
        let failed = result.msg.is_some()
            && (result.unreachable.is_some()
                || result.failed.is_some()
                || result.changed.is_some()
                || result.rc.is_some());
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
