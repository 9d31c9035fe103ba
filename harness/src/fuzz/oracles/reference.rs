//! The `extract_reference` oracle: raw bytes → reference `validate` and `hydrate_file` over
//! a small prior workspace in a [`FuzzJail`].

use super::failure::OracleFailure;
use crate::checks::{violations_of, Check, Evidence, ReferenceRun};
use crate::jail::fuzz_jail::FuzzJail;
use crate::model::tree::Tree;
use crate::workspace::observe::observe;
use snapconf_extract::{
    hydrate_file, validate, AbsoluteSymlinks, Duplicates, EscapingSymlinks, Hardlinks, Limits,
    Modes, Policy, SpecialFiles,
};
use snapconf_producers::Outcome;
use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::path::Path;

/// Inputs longer than this many bytes are skipped (libFuzzer `-max_len` should match):
/// longer inputs find nothing new and slow every execution.
pub const MAX_INPUT: usize = 64 * 1024;

/// The policies the oracle rotates through; input `i` runs under
/// `oracle_policies()[len % 3]`, so the choice does not disturb the tar structure.
///
/// 0: `Policy::default()`. 1: permissive (hardlinks `Copy`, duplicates `LastWins`, modes
/// `Exact`, special files `Drop`). 2: strict (hardlinks `Link`, absolute and escaping
/// symlinks `Reject`, special files `Reject`). Limits are lowered so that limit checks are
/// reachable with small inputs.
pub fn oracle_policies() -> [Policy; 3] {
    let limits = Limits {
        members: 64,
        total_bytes: 1 << 20,
        name_len: 1024,
        pax_record: 8 << 10,
        link_depth: 32,
        decompressed_bytes: 4 << 20,
        ..Limits::default()
    };
    [
        Policy {
            limits,
            ..Policy::default()
        },
        Policy {
            hardlinks: Hardlinks::Copy,
            duplicates: Duplicates::LastWins,
            modes: Modes::Exact,
            special_files: SpecialFiles::Drop,
            limits,
            ..Policy::default()
        },
        Policy {
            hardlinks: Hardlinks::Link,
            absolute_symlinks: AbsoluteSymlinks::Reject,
            escaping_symlinks: EscapingSymlinks::Reject,
            special_files: SpecialFiles::Reject,
            limits,
            ..Policy::default()
        },
    ]
}

/// What the reference did with one input (all properties held).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExtractVerdict {
    /// Input longer than [`MAX_INPUT`]; nothing ran.
    Skipped,
    /// Accepted and hydrated, with this many listed members.
    Accepted {
        /// Members the reference's listing holds.
        members: usize,
    },
    /// Refused with this reason code; the prior workspace is intact.
    Refused {
        /// The reference's reason code (`snapconf_extract::Reason`'s name, e.g. `parent-traversal`).
        reason: &'static str,
    },
}

/// The oracle with its jail and an in-memory archive file (`memfd`), reused across
/// executions. Not `Sync`: one per thread.
#[derive(Debug)]
pub struct ExtractOracle {
    jail: FuzzJail,
    archive: File,
    prior: Tree,
}

impl ExtractOracle {
    /// Create the oracle's jail under `base` (see [`FuzzJail::new`]).
    ///
    /// # Errors
    /// [`OracleFailure::Infra`] if the jail or the `memfd` cannot be created.
    pub fn new(base: Option<&Path>) -> Result<ExtractOracle, OracleFailure> {
        let infra = |e: std::io::Error| OracleFailure::Infra(e.to_string());
        let jail = FuzzJail::new(base).map_err(infra)?;
        let fd = rustix::fs::memfd_create("snapconf-fuzz", rustix::fs::MemfdFlags::CLOEXEC)
            .map_err(|e| infra(e.into()))?;
        let prior = observe(&jail.root()).map_err(infra)?;
        Ok(ExtractOracle {
            jail,
            archive: File::from(fd),
            prior,
        })
    }

    /// The jail (for tests that look inside).
    pub fn jail(&self) -> &FuzzJail {
        &self.jail
    }

    /// Run `bytes` through the reference under the policy `oracle_policies()[len % 3]`.
    ///
    /// Properties: no panic; `validate` and `hydrate_file` agree on accept/refuse and the
    /// reason code; nothing outside the root changes; on a refusal the prior workspace is
    /// identical (kinds, contents, modes, link targets, inode sharing); on acceptance the
    /// tree matches the listing (`listing-mismatch`, [`crate::checks::expected_listing::check_listing`]). The prior is restored after an
    /// acceptance.
    ///
    /// # Errors
    /// The first violated property, or [`OracleFailure::Infra`].
    pub fn check(&mut self, bytes: &[u8]) -> Result<ExtractVerdict, OracleFailure> {
        if bytes.len() > MAX_INPUT {
            return Ok(ExtractVerdict::Skipped);
        }
        let policies = oracle_policies();
        let policy = &policies[bytes.len() % policies.len()];
        self.check_with(bytes, policy)
    }

    /// [`ExtractOracle::check`] under a given `policy` (must not use
    /// `AbsoluteSymlinks::Rebase`, whose targets the listing check does not model).
    ///
    /// # Errors
    /// As [`ExtractOracle::check`].
    pub fn check_with(
        &mut self,
        bytes: &[u8],
        policy: &Policy,
    ) -> Result<ExtractVerdict, OracleFailure> {
        let infra = |e: std::io::Error| OracleFailure::Infra(e.to_string());
        let validated = validate(bytes, policy);
        self.archive.set_len(0).map_err(infra)?;
        self.archive.seek(SeekFrom::Start(0)).map_err(infra)?;
        self.archive.write_all(bytes).map_err(infra)?;
        self.archive.seek(SeekFrom::Start(0)).map_err(infra)?;
        let root = self.jail.root();
        let hydrated = hydrate_file(&self.archive, &root, policy);
        let outside = self.jail.outside_changes().map_err(infra)?;
        let outcome = match &hydrated {
            Ok(_) => Outcome::Success,
            Err(h) => Outcome::Refused {
                message: h.to_string(),
            },
        };
        // Comparing `lstat` state is cheaper than reading the tree; the tree is read only
        // when that state changed, for the diff.
        let unchanged = match &hydrated {
            Ok(_) => None,
            Err(_) => Some(self.jail.prior_intact().map_err(infra)?),
        };
        let mut ev = Evidence::hydration("hydration", &outcome, &root);
        ev.outside = &outside;
        ev.prior = Some(&self.prior);
        ev.prior_unchanged = unchanged;
        ev.reference = Some(ReferenceRun {
            policy,
            validated: &validated,
            hydrated: &hydrated,
        });
        let violations =
            violations_of(&Check::ALL, &ev).map_err(|e| OracleFailure::Infra(e.to_string()));
        drop(ev);
        if hydrated.is_ok() {
            self.jail.reset_prior().map_err(infra)?;
        }
        // The most severe violation is the one reported.
        if let Some(v) = violations?.into_iter().min_by_key(|v| v.check.severity()) {
            return Err(OracleFailure::Violated(v));
        }
        Ok(match (&validated, &hydrated) {
            (Ok(listing), Ok(_)) => ExtractVerdict::Accepted {
                members: listing.members.len(),
            },
            (_, Err(h)) => ExtractVerdict::Refused {
                reason: h.reason().map(|r| r.as_str()).unwrap_or("io"),
            },
            // A refusal of `validate` beside an accepting `hydrate` is a violation above.
            (Err(_), Ok(_)) => ExtractVerdict::Accepted { members: 0 },
        })
    }
}
