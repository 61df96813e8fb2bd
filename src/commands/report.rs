//! `placement-study report FILE…`: re-render one saved run, or compare hosts.

use crate::cli::ReportArgs;
use crate::report::{self, compare};
use crate::results::RunResult;
use anyhow::Result;

pub fn run(args: &ReportArgs) -> Result<i32> {
    if let [single] = args.files.as_slice() {
        let result: RunResult = compare::load(single)?;
        if args.json {
            println!("{}", serde_json::to_string_pretty(&result)?);
        } else {
            print!("{}", report::run::render(&result));
        }
        return Ok(0);
    }
    let rows = args
        .files
        .iter()
        .map(|path| compare::load::<compare::RunHeader>(path).map(|h| compare::row(path, &h)))
        .collect::<Result<Vec<_>>>()?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        println!("{}", compare::render(&rows));
    }
    Ok(0)
}
