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

/// `policy` as the `snapconf hydrate` (and `check-archive`) flags that give it, every
/// policy flag spelled out (`--hardlinks reject --absolute-symlinks keep …`), then
/// `--allow-empty`, `--original-root` and the decompression limits when `policy` has them:
/// what a reproducer prints so that `hydrate` reaches the matrix's verdict. A root that is
/// not UTF-8 is written lossily.
pub fn hydrate_flags(policy: &rx::Policy) -> Vec<String> {
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
    let default = rx::Limits::default();
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
