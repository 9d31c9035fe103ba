//! `snapconf baseline update`: merges a report's causes into the file, or with `--replace`
//! writes them alone.

use super::args::BaselineUpdateArgs;
use super::Usage;
use anyhow::Context;
use snapconf_harness::exit;
use snapconf_harness::report::{Baseline, ReportFile};

pub fn update(a: BaselineUpdateArgs) -> anyhow::Result<i32> {
    let report = ReportFile::load(&a.report.join("report.json"))
        .map_err(Usage)?
        .run;
    let old = if a.out.exists() {
        Some(Baseline::load(&a.out).map_err(Usage)?)
    } else {
        None
    };
    let before = old.as_ref().map_or(0, |o| o.known.len() + o.cells.len());
    let b = match &old {
        Some(old) if !a.replace => Baseline::merged(&report, old),
        _ => Baseline::from_report(&report, old.as_ref()),
    };
    if let Some(parent) = a.out.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create `{}`", parent.display()))?;
    }
    std::fs::write(&a.out, serde_json::to_string_pretty(&b)? + "\n")
        .with_context(|| format!("cannot write `{}`", a.out.display()))?;
    let how = match &old {
        None => "new file".to_string(),
        Some(_) if a.replace => format!("replaced {before} entr(ies)"),
        Some(_) => format!("merged into {before} entr(ies)"),
    };
    outln!(
        "wrote `{}`: {} known cause(s) ({how})",
        a.out.display(),
        b.known.len()
    );
    Ok(exit::OK)
}
