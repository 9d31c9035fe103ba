//! `hang`: every step ends on its own within the timeout, and leaves no process behind.
//!
//! Property: the tool exits (is not killed at the timeout, does not die of a signal), and
//! no process of its process group outlives the step. Evidence: [`Evidence::outcome`]
//! ([`Outcome::Hang`], unless [`Evidence::fault`] killed it) and [`Evidence::stragglers`] (killed and reaped by the driver before
//! the jail is compared, so they cannot touch a later step).

use super::{Check, CheckDef, Evidence, Violation};
use crate::error::HarnessError;
use snapconf_producers::Outcome;

/// The definition registered as [`Check::HANG`].
pub const DEF: CheckDef = CheckDef {
    id: "hang",
    explain: "a tool did not finish within the timeout, died of a signal, or left a process \
              running",
    column: 6,
    severity: 5,
    judge,
};

fn judge(ev: &Evidence<'_>) -> Result<Vec<Violation>, HarnessError> {
    let mut out = Vec::new();
    if let Some(first) = ev.stragglers.first() {
        out.push(Violation {
            check: Check::HANG,
            message: format!(
                "{} left {} process(es) running after it ended (killed): {first}",
                ev.what,
                ev.stragglers.len()
            ),
            expected: Some("no process of the tool outlives its step\n".into()),
            observed: Some(format!("killed:\n{}\n", ev.stragglers.join("\n"))),
        });
    }
    // A kill or a death injected by a fault is the fault's doing.
    if let (Outcome::Hang { message }, None) = (ev.outcome, ev.fault) {
        out.push(Violation::new(
            Check::HANG,
            format!("{}: {message}", ev.what),
        ));
    }
    Ok(out)
}
