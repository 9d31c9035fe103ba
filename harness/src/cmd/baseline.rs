//! `snapconf baseline update`.

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
    let b = Baseline::from_report(&report, old.as_ref());
    if let Some(parent) = a.out.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create `{}`", parent.display()))?;
    }
    std::fs::write(&a.out, serde_json::to_string_pretty(&b)? + "\n")
        .with_context(|| format!("cannot write `{}`", a.out.display()))?;
    outln!(
        "wrote `{}`: {} known cause(s)",
        a.out.display(),
        b.known.len()
    );
    Ok(exit::OK)
}
