//! Reports of a run: `report.json`, the Markdown matrix, the progress display.

mod markdown;
mod model;
mod progress;

pub use markdown::summary_markdown;
pub use model::{FindingRecord, PairReport, RefusalCount, RunReport, SkippedAdapter};
pub use progress::Progress;
