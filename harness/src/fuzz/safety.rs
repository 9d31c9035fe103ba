//! What a mutant means: is it safe to hand to an external extractor at all, does the
//! reference refuse it as unsafe, and did an accepted extraction land something outside
//! policy.

use crate::checks::Judged;
use crate::model::policy_map::reference_policy;
use crate::model::profile::{ModeRule, Profile};
use snapconf_extract::{validate, Duplicates, EscapingSymlinks, Hardlinks, Policy, SpecialFiles};
use snapconf_tarbytes::Records;

/// Reason codes that mean "unsafe" (as opposed to malformed, unsupported or a policy
/// choice): the archive tries to write outside the root, through a link, or a special file.
pub const UNSAFE_REASONS: [&str; 6] = [
    "absolute-path",
    "parent-traversal",
    "through-symlink",
    "symlink-escape",
    "special-file",
    "dangling-hardlink",
];

/// The reference policy used to judge safety: the profile's, but refusing special files
/// and escaping symlinks, and tolerant of what is not a safety matter (hardlinks `Copy`,
/// duplicates `LastWins`).
pub fn safety_policy(profile: &Profile) -> Policy {
    Policy {
        hardlinks: Hardlinks::Copy,
        duplicates: Duplicates::LastWins,
        special_files: SpecialFiles::Reject,
        escaping_symlinks: EscapingSymlinks::Reject,
        ..reference_policy(profile, None)
    }
}

/// Judge `bytes` with the reference under [`safety_policy`].
pub fn judge_safety(bytes: &[u8], profile: &Profile) -> Judged {
    let (unsafe_reason, verdict) = match validate(bytes, &safety_policy(profile)) {
        Ok(_) => (None, "accept".to_string()),
        Err(e) => {
            let r = e.reason().map(|r| r.as_str()).unwrap_or("io");
            (
                UNSAFE_REASONS.contains(&r).then(|| r.to_string()),
                format!("refuse ({r}): {e}"),
            )
        }
    };
    let strips = profile.modes != ModeRule::Exact;
    let privileged_mode = strips
        && Records::parse(bytes)
            .records
            .iter()
            .any(|r| !r.is_extension() && r.fields().mode().is_some_and(|m| m & 0o6000 != 0));
    Judged {
        unsafe_reason,
        privileged_mode,
        verdict,
        members: crate::archive::listing::archive_tar(bytes)
            .1
            .unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use snapconf_tarbytes::raw::RawTar;

    #[test]
    fn a_special_file_is_unsafe_and_setuid_is_filtered() {
        let p = Profile::default_profile();
        let mut t = RawTar::new();
        t.push(b'3', b"null", b"", b"", 0o666);
        assert_eq!(
            judge_safety(&t.finish(), &p).unsafe_reason.as_deref(),
            Some("special-file")
        );
        let mut t = RawTar::new();
        t.file_mode("s", b"x", 0o4755);
        let j = judge_safety(&t.finish(), &p);
        assert!(j.unsafe_reason.is_none() && j.privileged_mode, "{j:?}");
    }
}
