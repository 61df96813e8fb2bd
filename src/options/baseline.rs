//! `--save-baseline NAME`, `--baseline NAME` and `report --baseline OLD`:
//! the names, the threshold, the folder, checked once.

use super::limits::fraction;
use crate::cli;
use crate::commands::baseline::{NamedBaselines, baselines_folder, check_name};
use crate::report::baseline::BaselineRules;
use anyhow::{Result, bail};

/// `--save-baseline`, `--baseline NAME` and how to judge, checked: the
/// names, the threshold, and the folder baselines are kept in.
pub(super) fn named_baselines(args: &cli::BaselineArgs) -> Result<NamedBaselines> {
    if args.save_baseline.is_none() && args.baseline_name.is_none() {
        return Ok(NamedBaselines::default());
    }
    for (option, name) in [
        ("--save-baseline", &args.save_baseline),
        ("--baseline", &args.baseline_name),
    ] {
        if let Some(name) = name {
            check_name(option, name)?;
        }
    }
    let variable = |name: &str| std::env::var(name).ok();
    Ok(NamedBaselines {
        folder: baselines_folder(
            variable("XDG_DATA_HOME").as_deref(),
            variable("HOME").as_deref(),
        )?,
        save: args.save_baseline.clone(),
        compare: args.baseline_name.clone(),
        rules: args
            .baseline_name
            .is_some()
            .then(|| {
                baseline_rules(
                    "--baseline-threshold",
                    &args.baseline_threshold,
                    args.fail_on,
                    args.allow_different,
                )
            })
            .transpose()?,
    })
}

/// How a baseline comparison judges: `option`'s threshold (above 0, under
/// 100 %), `--fail-on` and `--allow-different`.
fn baseline_rules(
    option: &str,
    threshold: &str,
    fail_on: Option<cli::FailOnArg>,
    allow_different: bool,
) -> Result<BaselineRules> {
    let threshold = fraction(option, threshold)?;
    if !(threshold > 0.0 && threshold < 1.0) {
        bail!("{option} {threshold}: a change threshold is above 0 and under 100 % (5%, 0.05)");
    }
    Ok(BaselineRules {
        threshold,
        allow_different,
        fail_on_inconclusive: fail_on == Some(cli::FailOnArg::Inconclusive),
    })
}

/// `report --baseline OLD`: OLD and the rules, where given; one NEW for
/// `--prom` and `--svg`, which describe one comparison.
pub(super) fn report_baseline(
    args: &cli::ReportArgs,
) -> Result<Option<(std::path::PathBuf, BaselineRules)>> {
    let Some(old) = &args.baseline else {
        return Ok(None);
    };
    let rules = baseline_rules(
        "--threshold",
        &args.threshold,
        args.fail_on,
        args.allow_different,
    )?;
    Ok(Some((old.clone(), rules)))
}
