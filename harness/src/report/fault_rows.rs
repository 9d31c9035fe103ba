//! The fault rows of a run (`--faults`): one per extractor × fault, with counts.

use super::RunReport;
use crate::model::fault::{FaultKind, FaultResult, FaultTally};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write;

/// Counts of one extractor under one fault, over every case and producer of the run.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct FaultRow {
    /// The extractor.
    pub extractor: String,
    /// The fault, by name (`truncate`, `corrupt`, `efbig`, `enospc`, `kill`).
    pub fault: String,
    /// Faulted hydrations run (`failed-intact + failed-damaged + accepted`).
    pub runs: u64,
    /// Failed, and the root was the prior workspace (after a kill: prior or new tree).
    pub failed_intact: u64,
    /// Failed and changed the prior workspace: `atomic-hydration` findings.
    pub failed_damaged: u64,
    /// The extractor accepted the faulted input (a cut at a member boundary, a hydration
    /// that finished before the kill): not a finding.
    pub accepted: u64,
    /// Cases the fault could not be applied to here.
    pub skipped: u64,
    /// Why the first skip happened, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skip_reason: Option<String>,
}

/// Fold per-case tallies into rows keyed by (extractor, fault).
#[derive(Clone, Debug, Default)]
pub struct FaultRows(BTreeMap<(String, FaultKind), FaultRow>);

impl FaultRows {
    /// Count one tally.
    pub fn add(&mut self, t: &FaultTally) {
        let row = self
            .0
            .entry((t.extractor.clone(), t.kind))
            .or_insert_with(|| FaultRow {
                extractor: t.extractor.clone(),
                fault: t.kind.id().to_string(),
                ..FaultRow::default()
            });
        match &t.result {
            FaultResult::FailedIntact => row.failed_intact += 1,
            FaultResult::FailedDamaged => row.failed_damaged += 1,
            FaultResult::Accepted => row.accepted += 1,
            FaultResult::Skipped(why) => {
                row.skipped += 1;
                if row.skip_reason.is_none() {
                    row.skip_reason = Some(why.clone());
                }
            }
        }
        if !matches!(t.result, FaultResult::Skipped(_)) {
            row.runs += 1;
        }
    }

    /// The rows, sorted by extractor, then fault in `FaultKind::ALL` order.
    pub fn into_rows(self) -> Vec<FaultRow> {
        self.0.into_values().collect()
    }
}

/// The Markdown section for the fault rows; empty when the run injected no faults.
pub fn faults_markdown(report: &RunReport) -> String {
    let mut s = String::new();
    if report.faults.is_empty() {
        return s;
    }
    let _ = writeln!(s, "\n## Faults (atomic hydration)\n");
    let _ = writeln!(
        s,
        "| extractor | fault | runs | failed-intact | failed-damaged | accepted | skipped |\n|---|---|---:|---:|---:|---:|---:|"
    );
    for r in &report.faults {
        let damaged = if r.failed_damaged > 0 {
            format!("**{}**", r.failed_damaged)
        } else {
            "0".to_string()
        };
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {damaged} | {} | {} |",
            r.extractor, r.fault, r.runs, r.failed_intact, r.accepted, r.skipped
        );
    }
    s
}

/// The HTML table for the fault rows (`index.html`); empty when the run injected no faults.
pub fn faults_html(report: &RunReport) -> String {
    let mut s = String::new();
    if report.faults.is_empty() {
        return s;
    }
    s.push_str("<h2>Faults (atomic hydration)</h2>\n<table id=\"faults\"><tr><th>extractor</th><th>fault</th><th>runs</th><th>failed-intact</th><th>failed-damaged</th><th>accepted</th><th>skipped</th></tr>\n");
    for r in &report.faults {
        let bad = if r.failed_damaged > 0 { "bad" } else { "ok" };
        let _ = writeln!(
            s,
            "<tr><td class=\"pair\">{}</td><td class=\"pair\">{}</td><td>{}</td><td>{}</td><td class=\"{bad}\">{}</td><td>{}</td><td title=\"{}\">{}</td></tr>",
            super::html::h(&r.extractor),
            super::html::h(&r.fault),
            r.runs,
            r.failed_intact,
            r.failed_damaged,
            r.accepted,
            super::html::h(r.skip_reason.as_deref().unwrap_or("")),
            r.skipped
        );
    }
    s.push_str("</table>\n");
    s
}
