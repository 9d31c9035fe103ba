//! `fault.json` in a reproducer directory: the fault behind an `atomic-hydration` finding.
//! `snapconf replay` reads it and runs the case with that fault again (the plan is drawn
//! from the case, so the same cut or damaged field comes back; a kill delay and a tmpfs
//! size are re-drawn the same way, though timing itself cannot be replayed exactly).

use super::plan::FaultPlan;
use crate::error::{HarnessError, IoContext};
use std::path::Path;

/// The file name inside a reproducer directory.
pub const FAULT_JSON: &str = "fault.json";

/// Write `plan` as `dir/fault.json`.
///
/// # Errors
/// [`HarnessError::Io`] naming the file.
pub fn write_fault_json(dir: &Path, plan: &FaultPlan) -> Result<(), HarnessError> {
    let p = dir.join(FAULT_JSON);
    let text = serde_json::to_string_pretty(plan).unwrap_or_default() + "\n";
    std::fs::write(&p, text).ctx(|| format!("cannot write `{}`", p.display()))
}

/// Read `dir/fault.json`; `Ok(None)` when there is none.
///
/// # Errors
/// A message naming the file when it exists but cannot be read (not a regular file of at
/// most [`CONFIG_LIMIT`](snapconf_producers::input::CONFIG_LIMIT) bytes) or parsed.
pub fn read_fault_json(dir: &Path) -> Result<Option<FaultPlan>, String> {
    let p = dir.join(FAULT_JSON);
    match snapconf_producers::input::read_text(&p, snapconf_producers::input::CONFIG_LIMIT) {
        Ok(text) => serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| format!("`{}` is not a snapconf fault: {e}", p.display())),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(e.to_string()),
    }
}
