//! `reference`: snapconf's own safe extractor (`snapconf-extract`), in process.
//!
//! It validates the whole archive before the first write and swaps the staged tree in
//! atomically, so it does not clear the root first (unlike the external extractors).

use crate::adapter::{open_archive, Availability, Extractor, HydrateRequest, Outcome, ToolError};
use snapconf_extract::{HydrateError, Policy};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The version string reported by the reference extractor. `snapconf-extract` exports no
/// version constant, and both crates take `version.workspace`, so our own package version is
/// the extractor's too (a unit test checks the extract manifest still says so).
pub const REFERENCE_VERSION: &str = concat!("snapconf-extract ", env!("CARGO_PKG_VERSION"));

/// The `reference` extractor: `snapconf_extract::hydrate_file(archive, root, &policy)` (the
/// archive is read in place, no spool copy).
///
/// Outcomes: `Ok` → [`Outcome::Success`]; a typed refusal → [`Outcome::Refused`] whose message
/// starts with the stable reason code (`hardlink-not-allowed: member `venv/mod.py` …`); an
/// I/O error inside the extractor → [`Outcome::Refused`] starting with `io:` (the extractor
/// promises the root is unchanged on any error, so for the checks it is a refusal); a panic
/// → [`Outcome::Refused`] starting with `panic:` (a crash of the code under test is data,
/// and must not take the harness down). Failing to open the archive is a [`ToolError::Io`].
///
/// In process, so `timeout` is not enforced.
#[derive(Clone, Debug)]
pub struct ReferenceExtractor {
    policy: Policy,
}

impl ReferenceExtractor {
    /// A reference extractor applying `policy` to every hydration.
    pub fn new(policy: Policy) -> Self {
        ReferenceExtractor { policy }
    }

    /// The policy this extractor applies.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }
}

/// What the reference promises about links under `policy`: no absolute symlink unless
/// absolute symlinks are kept (or rebased with escaping ones kept), no escaping relative
/// symlink when escaping symlinks are refused (see [`snapconf_extract::AbsoluteSymlinks`]
/// and [`snapconf_extract::EscapingSymlinks`]), and never a hardlink to an inode outside
/// the root.
pub fn link_promises(policy: &snapconf_extract::Policy) -> crate::LinkPromises {
    use snapconf_extract::{AbsoluteSymlinks as A, EscapingSymlinks as E};
    let refuse_escaping = policy.escaping_symlinks == E::Reject;
    crate::LinkPromises {
        no_absolute_symlinks: match policy.absolute_symlinks {
            A::Reject | A::Drop => true,
            A::Rebase => refuse_escaping,
            A::Keep => false,
        },
        no_escaping_symlinks: refuse_escaping,
        // Under every policy a hardlink member names an earlier member of the archive,
        // inside the root, or is refused.
        no_outside_hardlinks: true,
    }
}

impl Extractor for ReferenceExtractor {
    fn name(&self) -> &str {
        "reference"
    }

    fn availability(&self) -> Availability {
        Availability::Available {
            version: REFERENCE_VERSION.to_owned(),
        }
    }

    fn link_promises(&self) -> crate::LinkPromises {
        link_promises(&self.policy)
    }

    fn hydrate(&self, req: &HydrateRequest<'_>) -> Result<Outcome, ToolError> {
        let archive = open_archive(req.archive)?;
        let result = catch_unwind(AssertUnwindSafe(|| {
            snapconf_extract::hydrate_file(&archive, req.root, &self.policy)
        }));
        Ok(match result {
            Ok(Ok(_report)) => Outcome::Success,
            Ok(Err(e)) => Outcome::Refused {
                message: refusal_message(&e),
            },
            Err(panic) => {
                let what = panic
                    .downcast_ref::<&str>()
                    .map(|s| (*s).to_owned())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "non-string payload".to_owned());
                Outcome::Refused {
                    message: format!("panic: the reference extractor panicked: {what}"),
                }
            }
        })
    }

    fn limitations(&self) -> Option<&str> {
        Some("in process: the timeout and fault limits are not enforced (fault injection runs `snapconf hydrate` in a child instead)")
    }

    fn in_process(&self) -> bool {
        true
    }

    /// `snapconf_extract::recover(root)`: finish or roll back what a killed hydration left
    /// beside the root. An error is a refused recovery (data), not a [`ToolError`].
    fn recover(&self, req: &HydrateRequest<'_>) -> Result<Option<Outcome>, ToolError> {
        Ok(Some(match snapconf_extract::recover(req.root) {
            Ok(_) => Outcome::Success,
            Err(e) => Outcome::Refused {
                message: refusal_message(&e),
            },
        }))
    }
}

/// `REASON: member `NAME` (detail)` for refusals, `io: CONTEXT: ERROR` for I/O errors.
pub fn refusal_message(e: &HydrateError) -> String {
    match e {
        HydrateError::Refused {
            reason,
            member,
            detail,
        } => {
            let mut msg = if member.is_empty() {
                reason.to_string()
            } else {
                format!("{reason}: member `{}`", String::from_utf8_lossy(member))
            };
            if !detail.is_empty() {
                msg.push_str(&format!(" ({detail})"));
            }
            msg
        }
        HydrateError::Io { .. } => format!("io: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::refusal_message;
    use snapconf_extract::{HydrateError, Reason};

    #[test]
    fn the_extract_crate_shares_the_workspace_version() {
        let manifest = include_str!("../../../extract/Cargo.toml");
        assert!(
            manifest.contains("version.workspace = true"),
            "snapconf-extract no longer uses the workspace version; fix REFERENCE_VERSION"
        );
    }

    #[test]
    fn refusals_lead_with_the_reason_code() {
        let e = HydrateError::Refused {
            reason: Reason::HardlinkNotAllowed,
            member: b"venv/mod.py".to_vec(),
            detail: "LNK to `cache/mod.py`".to_owned(),
        };
        assert_eq!(
            refusal_message(&e),
            "hardlink-not-allowed: member `venv/mod.py` (LNK to `cache/mod.py`)"
        );
        let e = HydrateError::Io {
            context: "staging".to_owned(),
            source: std::io::Error::other("disk full"),
        };
        assert_eq!(refusal_message(&e), "io: staging: disk full");
    }
}
