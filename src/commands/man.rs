//! `placement-study man`: the manual page, as roff, on standard output, so
//! that `cargo install` (which installs no man page) leaves one at hand:
//! `placement-study man > ~/.local/share/man/man1/placement-study.1`.

use crate::exit::Outcome;
use crate::saved::write_stdout;
use anyhow::Result;

/// man/placement-study.1, built in.
pub const PAGE: &str = include_str!("../../man/placement-study.1");

pub fn run() -> Result<Outcome> {
    write_stdout(PAGE)?;
    Ok(Outcome::Success)
}
