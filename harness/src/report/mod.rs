//! Reports of a run: `report.json`, its causes, the Markdown summary, `index.html`, JUnit,
//! the baseline, and the progress display.

mod baseline;
mod behaviour;
mod case_view;
mod causes;
mod fault_rows;
mod fingerprint;
mod html;
mod junit;
mod markdown;
mod merge;
mod model;
mod shrink_end;
mod text;
mod write;

pub use baseline::{Baseline, BaselineEntry, CellEntry, BASELINE_SCHEMA};
pub use behaviour::{behaviour, diff_kinds, error_kind, Trigger};
pub use case_view::{case_tree, case_tree_at_most, spec_listing};
pub use causes::{causes, Cause, CauseKey, CausePair, Side};
pub use fault_rows::{faults_markdown, FaultRow, FaultRows};
pub use fingerprint::{cause_fingerprint, fingerprint, shape};
pub use html::{archive_listing, index_html};
pub use junit::{junit_xml, write_junit, JunitError};
pub use markdown::{summary_markdown, verdict};
pub use merge::{merge, MergeInput, Merged};
pub use model::{
    FindingRecord, MissingShards, Mode, PairReport, RefusalCount, ReportFile, RunReport,
    SkippedAdapter, FUZZ_PRODUCER, REPORT_SCHEMA,
};
pub use shrink_end::ShrinkEnd;
pub use text::summary_text;
pub use write::write_report;
