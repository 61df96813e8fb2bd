//! The output of pdsh and clush: every line of a host prefixed `HOST: `,
//! the engines' own lines about a host (`pdsh@head: HOST: …`, `clush:
//! HOST: …`) told apart from it, and `--json-line` documents bare.

use super::hostlist::is_host_name;
use super::{Broken, Gathering, Origin, STANDARD_INPUT};
use crate::saved::SavedDocument;

impl<T> Gathering<T> {
    /// An input of lines: engine output, `--json-line` documents, or both.
    pub(super) fn lines(
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
                    // Every message, in order: pdsh says "command timeout"
                    // and then the exit status of the ssh it killed.
                    let engine = &mut self.host(host).engine;
                    *engine = Some(match engine.take() {
                        Some(earlier) => Broken {
                            reason: format!("{}; {message}", earlier.reason),
                            ..earlier
                        },
                        None => Broken {
                            source,
                            reason: message,
                        },
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
                    // A document no host can own: counted, never dropped.
                    if line.contains('{') {
                        self.unread.push(source.clone());
                    }
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
}

/// What one line of engine output is.
#[derive(Debug, PartialEq)]
pub(super) enum Line<'a> {
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
pub(super) fn classify(line: &str, bare: bool) -> Line<'_> {
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
