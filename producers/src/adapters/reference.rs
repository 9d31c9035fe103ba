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

    /// [`REFERENCE_VERSION`], and when the policy is not `snapconf hydrate`'s default, the
    /// flags that make `hydrate` apply it (the matrix's strict reference:
    /// `snapconf-extract 0.1.0, strict: hydrate --hardlinks reject --allow-empty`).
    fn availability(&self) -> Availability {
        let beyond = flags_beyond_default(&self.policy);
        Availability::Available {
            version: if beyond.is_empty() {
                REFERENCE_VERSION.to_owned()
            } else {
                format!("{REFERENCE_VERSION}, strict: hydrate {}", beyond.join(" "))
            },
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

/// `policy` as the `snapconf hydrate` (and `check-archive`) flags that give it, every
/// policy flag spelled out (`--hardlinks reject --absolute-symlinks keep …`), then
/// `--allow-empty`, `--original-root` and the decompression limits when `policy` has them:
/// what a reproducer prints so that `hydrate` reaches the matrix's verdict. A root that is
/// not UTF-8 is written lossily.
pub fn hydrate_flags(policy: &snapconf_extract::Policy) -> Vec<String> {
    /// A variant's name as clap spells a `ValueEnum` value: `DataFilter` → `data-filter`.
    fn kebab(v: impl std::fmt::Debug) -> String {
        let mut out = String::new();
        for (i, c) in format!("{v:?}").chars().enumerate() {
            if c.is_ascii_uppercase() && i > 0 {
                out.push('-');
            }
            out.push(c.to_ascii_lowercase());
        }
        out
    }
    let mut flags: Vec<String> = [
        ("--hardlinks", kebab(policy.hardlinks)),
        ("--absolute-symlinks", kebab(policy.absolute_symlinks)),
        ("--escaping-symlinks", kebab(policy.escaping_symlinks)),
        ("--special-files", kebab(policy.special_files)),
        ("--duplicates", kebab(policy.duplicates)),
        ("--modes", kebab(policy.modes)),
    ]
    .into_iter()
    .flat_map(|(flag, value)| [flag.to_string(), value])
    .collect();
    if policy.allow_empty {
        flags.push("--allow-empty".into());
    }
    if let Some(root) = &policy.original_root {
        flags.push("--original-root".into());
        flags.push(String::from_utf8_lossy(root).into_owned());
    }
    let default = snapconf_extract::Limits::default();
    if policy.limits.decompressed_bytes != default.decompressed_bytes {
        flags.push("--max-decompressed-bytes".into());
        flags.push(policy.limits.decompressed_bytes.to_string());
    }
    if policy.limits.compression_ratio != default.compression_ratio {
        flags.push("--max-compression-ratio".into());
        flags.push(policy.limits.compression_ratio.to_string());
    }
    flags
}

/// The [`hydrate_flags`] of `policy` that `snapconf hydrate`'s defaults
/// (`Policy::default()`) do not give: each flag with its value, `--allow-empty`, …
pub fn flags_beyond_default(policy: &Policy) -> Vec<String> {
    let ours = pairs(&hydrate_flags(policy));
    let default = pairs(&hydrate_flags(&Policy::default()));
    ours.into_iter().filter(|f| !default.contains(f)).collect()
}

/// `flags` with each value joined to its flag (`--hardlinks reject`); a flag without a
/// value stands alone.
fn pairs(flags: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for f in flags {
        match out.last_mut() {
            Some(last) if !f.starts_with("--") => {
                last.push(' ');
                last.push_str(f);
            }
            _ => out.push(f.clone()),
        }
    }
    out
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

    /// The matrix's strict policy names what `snapconf hydrate` needs beyond its defaults;
    /// the default policy needs nothing.
    #[test]
    fn the_strict_policy_is_named_by_its_hydrate_flags() {
        use super::{flags_beyond_default, Policy};
        assert!(flags_beyond_default(&Policy::default()).is_empty());
        let strict = Policy {
            hardlinks: snapconf_extract::Hardlinks::Reject,
            allow_empty: true,
            ..Policy::default()
        };
        assert_eq!(
            flags_beyond_default(&strict),
            ["--hardlinks reject", "--allow-empty"]
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
