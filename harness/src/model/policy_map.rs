//! The reference extractor's policy for a profile: the strictest that round-trips it.

use crate::model::profile::{
    AbsoluteRule, EscapingRule, HardlinkRule, ModeRule, Profile, SpecialRule,
};
use snapconf_extract as rx;

/// The reference policy that hydrates what `profile` promises, refusing no more: the
/// policy `snapconf hydrate` and `check-archive` stand for (for the default profile it is
/// `rx::Policy::default()`, their flags' defaults; a test holds the two together). Each
/// profile key maps to one policy field:
///
/// | profile key | value → policy |
/// | --- | --- |
/// | `hardlinks` | `copy`, `refuse-at-capture`, `refuse-excluded-alias` → `Copy`; `preserve` → `Link` |
/// | `absolute-symlinks` | `keep` → `Keep`, `rebase-inside-root` → `Rebase`, `drop` → `Drop`, `refuse-at-capture` → `Reject` |
/// | `escaping-symlinks` | `keep` → `Keep`, `refuse-at-capture` → `Reject` |
/// | `special-files` | `drop` → `Drop`, `refuse-at-capture` → `Reject` |
/// | `modes` | `exact` → `Exact`; `exec-bit`, `data-filter`, `ignore` → `DataFilter` (keeps the owner's execute bit) |
///
/// Duplicates are refused (a capture never names a path twice), limits are the defaults,
/// and an empty archive is refused. `original_root` is the capture root, used by
/// `rebase-inside-root`.
pub fn hydration_policy(profile: &Profile, original_root: Option<&[u8]>) -> rx::Policy {
    rx::Policy {
        hardlinks: match profile.hardlinks {
            HardlinkRule::Copy
            | HardlinkRule::RefuseAtCapture
            | HardlinkRule::RefuseExcludedAlias => rx::Hardlinks::Copy,
            HardlinkRule::Preserve => rx::Hardlinks::Link,
        },
        absolute_symlinks: match profile.absolute_symlinks {
            AbsoluteRule::Keep => rx::AbsoluteSymlinks::Keep,
            AbsoluteRule::RebaseInsideRoot => rx::AbsoluteSymlinks::Rebase,
            AbsoluteRule::Drop => rx::AbsoluteSymlinks::Drop,
            AbsoluteRule::RefuseAtCapture => rx::AbsoluteSymlinks::Reject,
        },
        escaping_symlinks: match profile.escaping_symlinks {
            EscapingRule::Keep => rx::EscapingSymlinks::Keep,
            EscapingRule::RefuseAtCapture => rx::EscapingSymlinks::Reject,
        },
        special_files: match profile.special_files {
            SpecialRule::Drop => rx::SpecialFiles::Drop,
            SpecialRule::RefuseAtCapture => rx::SpecialFiles::Reject,
        },
        duplicates: rx::Duplicates::Reject,
        modes: match profile.modes {
            ModeRule::Exact => rx::Modes::Exact,
            ModeRule::ExecBit | ModeRule::DataFilter | ModeRule::Ignore => rx::Modes::DataFilter,
        },
        limits: rx::Limits::default(),
        original_root: original_root.map(<[u8]>::to_vec),
        allow_empty: false,
    }
}

/// The strictest reference policy that still round-trips `profile` when the producer
/// conforms: the checker the matrix runs, [`hydration_policy`] but for two fields. Under
/// `hardlinks = "copy"` a conforming capture writes every name as a regular member, so LNK
/// members are refused (`hardlink-not-allowed`): that is how the reference exposes H1 (a
/// producer that writes LNK members anyway); `refuse-excluded-alias` copies them. A
/// generated or audited workspace may be empty, so an empty archive is accepted.
pub fn reference_policy(profile: &Profile, original_root: Option<&[u8]>) -> rx::Policy {
    rx::Policy {
        hardlinks: match profile.hardlinks {
            HardlinkRule::Copy | HardlinkRule::RefuseAtCapture => rx::Hardlinks::Reject,
            HardlinkRule::RefuseExcludedAlias => rx::Hardlinks::Copy,
            HardlinkRule::Preserve => rx::Hardlinks::Link,
        },
        allow_empty: true,
        ..hydration_policy(profile, original_root)
    }
}

/// `policy` as `snapconf hydrate` flags: [`snapconf_producers::adapters::reference::hydrate_flags`]
/// (kept with the reference adapter, whose listing names its policy by them).
pub use snapconf_producers::adapters::reference::hydrate_flags;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_profile_maps_to_strict_reference() {
        let p = reference_policy(&Profile::default_profile(), None);
        assert_eq!(p.hardlinks, rx::Hardlinks::Reject);
        assert_eq!(p.absolute_symlinks, rx::AbsoluteSymlinks::Keep);
        assert_eq!(p.special_files, rx::SpecialFiles::Drop);
        assert_eq!(p.modes, rx::Modes::DataFilter);
    }

    /// The one set of defaults: `Policy::default()` (what `snapconf hydrate` and
    /// `check-archive` default to) is the hydration policy of the default profile.
    #[test]
    fn the_default_policy_hydrates_the_default_profile() {
        assert_eq!(
            hydration_policy(&Profile::default_profile(), None),
            rx::Policy::default()
        );
    }
}
