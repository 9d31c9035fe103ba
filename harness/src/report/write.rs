//! Writing a report directory: the one place every mode (`run`, `audit`, `fuzz`,
//! `lifecycle`, `report merge`) turns its [`RunReport`] into `report.json`, `summary.md`,
//! `index.html` and `junit.xml`.

use super::{index_html, junit_xml, summary_markdown, Baseline, ReportFile, RunReport};
use crate::error::{HarnessError, IoContext};
use std::path::Path;

/// Apply `baseline` (if any) to `run`, then write `report.json` (with the causes),
/// `junit.xml`, `index.html` and `summary.md` into `dir` (created if missing). The file
/// written; its [`ReportFile::exit_code`] is the command's.
///
/// # Errors
/// A file cannot be written, or the JUnit report cannot be rendered (nothing is written
/// for it then, never an empty `junit.xml`).
pub fn write_report(
    run: RunReport,
    dir: &Path,
    baseline: Option<&Baseline>,
) -> Result<ReportFile, HarnessError> {
    let mut run = run;
    if let Some(b) = baseline {
        b.apply(&mut run);
    }
    let file = ReportFile::new(run);
    std::fs::create_dir_all(dir).ctx(|| format!("cannot create `{}`", dir.display()))?;
    let write = |name: &str, text: &str| {
        std::fs::write(dir.join(name), text)
            .ctx(|| format!("cannot write `{}`", dir.join(name).display()))
    };
    let json = serde_json::to_string_pretty(&file)
        .map_err(|e| HarnessError::Other(format!("cannot serialise the report: {e}")))?;
    write("report.json", &(json + "\n"))?;
    let junit = junit_xml(&file.run)
        .map_err(|e| HarnessError::Other(format!("cannot render `junit.xml`: {e}")))?;
    write("junit.xml", &junit)?;
    write("index.html", &index_html(&file, dir))?;
    write("summary.md", &summary_markdown(&file, dir))?;
    Ok(file)
}
