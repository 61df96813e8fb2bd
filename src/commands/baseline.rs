//! Named baselines, as criterion spells them: `--save-baseline NAME` keeps
//! a study's document, `--baseline NAME` judges the new study against the
//! one kept under that name (`report::baseline`), so that
//! `placement-study run --baseline main -- ./my-program` measures and
//! judges in one step.
//!
//! A baseline is one file per host, name and kind of document, under
//! `$XDG_DATA_HOME/placement-study/baselines/` (by default
//! `~/.local/share/placement-study/baselines/`): `HOST/NAME.KIND.json`,
//! written atomically (a temp file renamed over the old one, as every
//! result is), so a run that is stopped never leaves half a baseline.

use super::Outputs;
use crate::escape::{escape_controls, escape_path};
use crate::exit::{Outcome, UsageError};
use crate::report::baseline::{BaselineReport, BaselineRules, view};
use crate::report::document::Document;
use crate::saved::{DocumentKind, OutputTarget, from_bytes, load};
use anyhow::{Context, Result, bail};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// The longest baseline name, in bytes.
const MAX_NAME: usize = 100;

/// `--save-baseline NAME`, `--baseline NAME` and how to judge, checked.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NamedBaselines {
    /// The folder every host's baselines are under.
    pub folder: PathBuf,
    /// `--save-baseline NAME`.
    pub save: Option<String>,
    /// `--baseline NAME`.
    pub compare: Option<String>,
    pub rules: Option<BaselineRules>,
}

/// Checks a baseline name: a file name's part, so no '/', no leading '.',
/// nothing empty, no control character, at most 100 bytes.
pub fn check_name(option: &str, name: &str) -> Result<()> {
    let bad = if name.is_empty() {
        Some("it is empty")
    } else if name.contains('/') {
        Some("it holds a '/'")
    } else if name.starts_with('.') {
        Some("it starts with '.'")
    } else if name.chars().any(char::is_control) {
        Some("it holds a control character")
    } else if name.len() > MAX_NAME {
        Some("it is longer than 100 bytes")
    } else {
        None
    };
    match bad {
        Some(why) => bail!(
            "{option} '{}': {why}; a baseline name is one word such as main or v1.2 \
             (no '/', not starting with '.')",
            escape_controls(name)
        ),
        None => Ok(()),
    }
}

/// The folder baselines are kept in: `$XDG_DATA_HOME/placement-study/
/// baselines`, or `$HOME/.local/share/placement-study/baselines` where
/// XDG_DATA_HOME is unset or not absolute (as the XDG specification says).
pub fn baselines_folder(xdg_data_home: Option<&str>, home: Option<&str>) -> Result<PathBuf> {
    let data = match (xdg_data_home, home) {
        (Some(xdg), _) if xdg.starts_with('/') => PathBuf::from(xdg),
        (_, Some(home)) if home.starts_with('/') => Path::new(home).join(".local/share"),
        _ => bail!(
            "--baseline/--save-baseline: neither XDG_DATA_HOME nor HOME is an absolute path, so \
             there is no folder to keep baselines in; set XDG_DATA_HOME"
        ),
    };
    Ok(data.join("placement-study").join("baselines"))
}

impl NamedBaselines {
    /// Nothing asked for.
    pub fn is_empty(&self) -> bool {
        self.save.is_none() && self.compare.is_none()
    }

    /// Where the baseline `name` of `kind` documents of `host` is kept.
    fn path(&self, host: &str, name: &str, kind: DocumentKind) -> PathBuf {
        // A host name is a path's part too: no '/', no leading '.'.
        let host: String = host
            .chars()
            .map(|c| if c == '/' || c.is_control() { '_' } else { c })
            .collect();
        let host = match host.strip_prefix('.') {
            Some(rest) => format!("_{rest}"),
            None => host,
        };
        self.folder.join(host).join(format!("{name}.{kind}.json"))
    }

    /// Before measuring: the baseline `--baseline` names must exist for
    /// `host`'s `kinds` (any one of them: `run` writes one of three), so a
    /// typo never costs a measurement.
    pub fn check_before(&self, host: &str, kinds: &[DocumentKind]) -> Result<()> {
        let Some(name) = &self.compare else {
            return Ok(());
        };
        if kinds
            .iter()
            .any(|&kind| self.path(host, name, kind).is_file())
        {
            return Ok(());
        }
        let kind = kinds.first().map_or("", |k| k.into());
        // `run --baseline ARM` named the arm a COMMAND's arms are compared
        // with before baselines had names.
        let arm = ["one-per-core", "sibling-packed", "unpinned", "same-cpu"]
            .contains(&name.as_str())
            || name.starts_with("class:");
        let hint = if arm {
            format!("; the arm the others are compared with is --baseline-arm {name}")
        } else {
            String::new()
        };
        Err(UsageError(format!(
            "--baseline {}: no {kind} baseline of that name for host {} in {}; save one first \
             with --save-baseline {}{}",
            escape_controls(name),
            escape_controls(host),
            escape_path(&self.folder),
            escape_controls(name),
            escape_controls(&hint)
        ))
        .into())
    }

    /// After a study: judges `document` against `--baseline NAME` (its view
    /// written after the study's), then keeps it as `--save-baseline NAME`.
    /// An incomplete document is neither judged nor kept. Returns the
    /// command's outcome: the comparison's where it regressed (or, with
    /// `--fail-on inconclusive`, is inconclusive), else `study`, the
    /// study's own.
    /// With `quiet` (`-q`), nothing is printed but the verdict word the
    /// command printed already.
    pub fn after<D: Document + Serialize + ?Sized>(
        &self,
        document: &D,
        outputs: &Outputs,
        quiet: bool,
        study: Outcome,
    ) -> Result<Outcome> {
        if self.is_empty() {
            return Ok(study);
        }
        let head = document.head();
        if !head.complete {
            if quiet {
                return Ok(study);
            }
            outputs.write_human(
                "baseline: an incomplete study is neither judged against a baseline nor kept \
                 as one\n",
            )?;
            return Ok(study);
        }
        let json = serde_json::to_vec_pretty(document)?;
        let mut outcome = study;
        if let (Some(name), Some(rules)) = (&self.compare, &self.rules) {
            let path = self.path(&head.host, name, head.kind);
            let old = load(&path)?;
            let new = from_bytes(&json, Path::new("this run"))?;
            let old_name = format!("'{name}' (saved baseline)");
            let report =
                BaselineReport::judge(&old_name, &old, &[("this run".into(), &new)], rules)?;
            let text = view::blocks(&report, &outputs.view()).to_terminal(&outputs.view());
            if !quiet {
                outputs.write_human(&format!("\n{text}"))?;
            }
            let judged = report.outcome(rules.fail_on_inconclusive);
            if judged != Outcome::Success {
                outcome = judged;
            }
        }
        if let Some(name) = &self.save {
            let path = self.path(&head.host, name, head.kind);
            let folder = path.parent().unwrap_or(&self.folder);
            std::fs::create_dir_all(folder).with_context(|| {
                format!("--save-baseline: cannot create {}", escape_path(folder))
            })?;
            let target = OutputTarget::parse(&path)
                .with_context(|| format!("--save-baseline {}", escape_controls(name)))?;
            target.write(&[json.as_slice(), b"\n"].concat())?;
            if !quiet {
                outputs.write_human(&format!(
                    "baseline: kept as '{}' ({})\n",
                    escape_controls(name),
                    escape_path(&path)
                ))?;
            }
        }
        Ok(outcome)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_one_word() {
        for good in ["main", "v1.2", "before-kernel-6.8", "a b"] {
            assert!(check_name("--baseline", good).is_ok(), "{good}");
        }
        for (bad, why) in [
            ("", "empty"),
            ("a/b", "'/'"),
            (".hidden", "starts with '.'"),
            ("..", "starts with '.'"),
            ("x\ny", "control"),
        ] {
            let error = check_name("--save-baseline", bad).unwrap_err().to_string();
            assert!(error.contains(why), "{bad:?}: {error}");
            assert_eq!(error.lines().count(), 1, "{error}");
        }
        assert!(check_name("--baseline", &"x".repeat(101)).is_err());
    }

    #[test]
    fn the_folder_follows_xdg() {
        assert_eq!(
            baselines_folder(Some("/data"), Some("/home/u")).unwrap(),
            Path::new("/data/placement-study/baselines")
        );
        // A relative XDG_DATA_HOME is ignored, as the specification says.
        assert_eq!(
            baselines_folder(Some("rel"), Some("/home/u")).unwrap(),
            Path::new("/home/u/.local/share/placement-study/baselines")
        );
        assert!(baselines_folder(None, None).is_err());
    }

    #[test]
    fn a_host_name_cannot_leave_the_folder() {
        let named = NamedBaselines {
            folder: PathBuf::from("/b"),
            ..NamedBaselines::default()
        };
        assert_eq!(
            named.path("../etc", "main", DocumentKind::Run),
            Path::new("/b/_._etc/main.run.json")
        );
        assert_eq!(
            named.path("node1", "main", DocumentKind::Sweep),
            Path::new("/b/node1/main.sweep.json")
        );
    }
}
