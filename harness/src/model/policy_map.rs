//! The reference extractor's policy for a profile: the strictest that round-trips it.

use crate::model::profile::{
    AbsoluteRule, EscapingRule, HardlinkRule, ModeRule, Profile, SpecialRule,
};
use snapconf_extract as rx;

/// The strictest reference policy that still round-trips `profile` when the producer
/// conforms. Under `hardlinks = "copy"` a conforming capture writes every name as a
/// regular member, so LNK members are refused (`hardlink-not-allowed`): that is how the
/// reference exposes H1 (a producer that writes LNK members anyway).
/// `original_root` is the capture root, used by `rebase-inside-root`.
pub fn reference_policy(profile: &Profile, original_root: Option<&[u8]>) -> rx::Policy {
    rx::Policy {
        hardlinks: match profile.hardlinks {
            HardlinkRule::Copy | HardlinkRule::RefuseAtCapture => rx::Hardlinks::Reject,
            HardlinkRule::RefuseExcludedAlias => rx::Hardlinks::Copy,
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
        // A generated or audited workspace may be empty: restoring it is what is meant.
        allow_empty: true,
    }
}

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
}
