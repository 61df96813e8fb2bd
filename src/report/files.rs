//! Writing result files: atomically (temp file + rename), so a file under
//! the requested name is always complete; "-" means standard output.

use anyhow::{Context, Result};
use std::fs;
use std::io::Write;
use std::path::Path;

/// Is this the "-" that means standard output?
pub fn is_stdout(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// Writes `content` to `path` (or stdout for "-"): into `path.tmp.PID` first,
/// then renamed over `path`.
pub fn write_atomically(path: &Path, content: &str) -> Result<()> {
    if is_stdout(path) {
        let mut out = std::io::stdout().lock();
        out.write_all(content.as_bytes())
            .context("cannot write to standard output")?;
        return out.flush().context("cannot write to standard output");
    }
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp.{}", std::process::id()));
    let tmp = Path::new(&tmp);
    fs::write(tmp, content).with_context(|| format!("{}: cannot write", tmp.display()))?;
    fs::rename(tmp, path).with_context(|| {
        let _ = fs::remove_file(tmp);
        format!(
            "{}: cannot rename the finished file into place",
            path.display()
        )
    })
}
