//! (Interim stub: the saved-I/O helper's branch replaces this file.)

use anyhow::{Context, Result};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Where a result goes.
pub enum OutputTarget {
    Stdout,
    Stream { path: PathBuf },
    File { shown: PathBuf, real: PathBuf },
}

impl OutputTarget {
    pub fn parse(arg: &Path) -> Result<OutputTarget> {
        if arg.as_os_str() == "-" {
            return Ok(OutputTarget::Stdout);
        }
        Ok(OutputTarget::File {
            shown: arg.to_path_buf(),
            real: arg.to_path_buf(),
        })
    }

    pub fn is_stdout(&self) -> bool {
        matches!(self, OutputTarget::Stdout)
    }

    pub fn display(&self) -> String {
        match self {
            OutputTarget::Stdout => "standard output".into(),
            OutputTarget::Stream { path } => path.display().to_string(),
            OutputTarget::File { shown, .. } => shown.display().to_string(),
        }
    }

    pub fn write(&self, content: &[u8]) -> Result<()> {
        match self {
            OutputTarget::Stdout => {
                let mut out = std::io::stdout().lock();
                out.write_all(content)?;
                out.flush().context("stdout")
            }
            OutputTarget::Stream { path } | OutputTarget::File { real: path, .. } => {
                std::fs::write(path, content).context("write")
            }
        }
    }
}

pub fn write_stdout(text: &str) -> Result<()> {
    OutputTarget::Stdout.write(text.as_bytes())
}

pub fn check_distinct(targets: &[(&str, &OutputTarget)]) -> Result<()> {
    let stdout: Vec<&str> = targets
        .iter()
        .filter(|(_, t)| t.is_stdout())
        .map(|(n, _)| *n)
        .collect();
    if stdout.len() > 1 {
        anyhow::bail!("{} both go to standard output", stdout.join(" and "));
    }
    Ok(())
}
