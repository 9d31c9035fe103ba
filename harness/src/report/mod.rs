//! Reports of a run: `report.json`, the Markdown matrix, the progress display.

mod baseline;
mod faults;
mod html;
mod junit;
mod markdown;
mod model;
mod progress;

pub use baseline::{fingerprint, Baseline, BaselineEntry};
pub use faults::{faults_markdown, FaultRow, FaultRows};
pub use html::{archive_listing, index_html};
pub use junit::{junit_xml, write_junit, JunitError};
pub use markdown::summary_markdown;
pub use model::{FindingRecord, PairReport, RefusalCount, RunReport, SkippedAdapter};
pub use progress::Progress;
