//! `snapconf baseline update`.

use super::args::BaselineUpdateArgs;
use super::Usage;
use anyhow::Context;
use snapconf_harness::exit;
use snapconf_harness::report::{Baseline, RunReport};

pub fn update(a: BaselineUpdateArgs) -> anyhow::Result<i32> {
    let path = a.report.join("report.json");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| Usage(format!("cannot read `{}`: {e}", path.display())))?;
    let report: RunReport = serde_json::from_str(&text).map_err(|e| {
        Usage(format!(
            "`{}` is not a snapconf report: {e}",
            path.display()
        ))
    })?;
    let old = if a.out.exists() {
        Some(Baseline::load(&a.out).map_err(Usage)?)
    } else {
        None
    };
    let b = Baseline::from_report(&report, old.as_ref());
    if let Some(parent) = a.out.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create `{}`", parent.display()))?;
    }
    std::fs::write(&a.out, serde_json::to_string_pretty(&b)? + "\n")
        .with_context(|| format!("cannot write `{}`", a.out.display()))?;
    outln!(
        "wrote `{}`: {} known finding(s)",
        a.out.display(),
        b.known.len()
    );
    Ok(exit::OK)
}
