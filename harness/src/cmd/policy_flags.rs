//! The reference extractor's policy as `snapconf hydrate` / `check-archive` flags: one
//! `clap::ValueEnum` per policy knob, mirroring the extractor's enum (which must not depend
//! on clap) variant for variant, with conversions both ways so that a variant added on
//! either side fails to compile until the other has it.

use super::args::PolicyArgs;
use snapconf_extract as rx;
use std::os::unix::ffi::OsStrExt;

/// A flag enum `$flag` whose values are the kebab-case names of `rx::$policy`'s variants.
macro_rules! policy_flag {
    ($(#[$meta:meta])* $flag:ident => $policy:ident { $($variant:ident),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
        pub enum $flag {
            $($variant),+
        }

        impl From<$flag> for rx::$policy {
            fn from(f: $flag) -> Self {
                match f {
                    $($flag::$variant => rx::$policy::$variant),+
                }
            }
        }

        impl From<rx::$policy> for $flag {
            fn from(p: rx::$policy) -> Self {
                match p {
                    $(rx::$policy::$variant => $flag::$variant),+
                }
            }
        }
    };
}

policy_flag!(
    /// `--hardlinks`: reject | copy | link.
    HardlinksFlag => Hardlinks { Reject, Copy, Link }
);
policy_flag!(
    /// `--absolute-symlinks`: reject | keep | rebase | drop.
    AbsoluteSymlinksFlag => AbsoluteSymlinks { Reject, Keep, Rebase, Drop }
);
policy_flag!(
    /// `--escaping-symlinks`: reject | keep.
    EscapingSymlinksFlag => EscapingSymlinks { Reject, Keep }
);
policy_flag!(
    /// `--special-files`: reject | drop.
    SpecialFilesFlag => SpecialFiles { Reject, Drop }
);
policy_flag!(
    /// `--duplicates`: reject | last-wins.
    DuplicatesFlag => Duplicates { Reject, LastWins }
);
policy_flag!(
    /// `--modes`: exact | data-filter.
    ModesFlag => Modes { Exact, DataFilter }
);

/// The policy the flags describe (default [`rx::Limits`] but for the two decompression
/// limits).
pub fn policy(a: &PolicyArgs) -> rx::Policy {
    rx::Policy {
        hardlinks: a.hardlinks.into(),
        absolute_symlinks: a.absolute_symlinks.into(),
        escaping_symlinks: a.escaping_symlinks.into(),
        special_files: a.special_files.into(),
        duplicates: a.duplicates.into(),
        modes: a.modes.into(),
        limits: rx::Limits {
            decompressed_bytes: a.max_decompressed_bytes,
            compression_ratio: a.max_compression_ratio,
            ..rx::Limits::default()
        },
        original_root: a
            .original_root
            .as_ref()
            .map(|p| p.as_os_str().as_bytes().to_vec()),
        allow_empty: a.allow_empty,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::ValueEnum;

    /// The flag values are the names the help text lists, and the defaults are the
    /// extractor's `Policy::default()`.
    #[test]
    fn values_and_defaults_match_the_extractor() {
        let names = |vs: &[&dyn Fn() -> Vec<String>]| -> Vec<Vec<String>> {
            vs.iter().map(|f| f()).collect()
        };
        fn of<T: ValueEnum>() -> Vec<String> {
            T::value_variants()
                .iter()
                .filter_map(|v| v.to_possible_value())
                .map(|p| p.get_name().to_string())
                .collect()
        }
        assert_eq!(
            names(&[
                &of::<HardlinksFlag>,
                &of::<AbsoluteSymlinksFlag>,
                &of::<EscapingSymlinksFlag>,
                &of::<SpecialFilesFlag>,
                &of::<DuplicatesFlag>,
                &of::<ModesFlag>,
            ]),
            [
                vec!["reject", "copy", "link"],
                vec!["reject", "keep", "rebase", "drop"],
                vec!["reject", "keep"],
                vec!["reject", "drop"],
                vec!["reject", "last-wins"],
                vec!["exact", "data-filter"],
            ]
        );
        use clap::Parser;
        #[derive(Parser)]
        struct T {
            #[command(flatten)]
            p: PolicyArgs,
        }
        let t = T::try_parse_from(["t"]).expect("defaults parse");
        assert_eq!(policy(&t.p), rx::Policy::default());
    }

    /// What a reproducer prints (`policy_map::hydrate_flags`) parses back to the policy it
    /// was made from, for the matrix's strict policy of every profile key value and for
    /// policies with a root and limits.
    #[test]
    fn hydrate_flags_parse_back_to_their_policy() {
        use clap::Parser;
        use snapconf_harness::model::policy_map::{hydrate_flags, reference_policy};
        use snapconf_harness::model::profile::{HardlinkRule, Profile};
        #[derive(Parser)]
        struct T {
            #[command(flatten)]
            p: PolicyArgs,
        }
        let mut policies = vec![rx::Policy::default()];
        for h in [
            HardlinkRule::Copy,
            HardlinkRule::RefuseAtCapture,
            HardlinkRule::RefuseExcludedAlias,
            HardlinkRule::Preserve,
        ] {
            let mut profile = Profile::default_profile();
            profile.hardlinks = h;
            policies.push(reference_policy(&profile, Some(b"/work/space")));
        }
        policies.push(rx::Policy {
            duplicates: rx::Duplicates::LastWins,
            modes: rx::Modes::Exact,
            absolute_symlinks: rx::AbsoluteSymlinks::Rebase,
            escaping_symlinks: rx::EscapingSymlinks::Reject,
            special_files: rx::SpecialFiles::Reject,
            limits: rx::Limits {
                decompressed_bytes: 7,
                compression_ratio: 3,
                ..rx::Limits::default()
            },
            ..rx::Policy::default()
        });
        for p in policies {
            let flags = hydrate_flags(&p);
            let t = T::try_parse_from(std::iter::once("t".to_string()).chain(flags.clone()))
                .unwrap_or_else(|e| panic!("{flags:?} parse: {e}"));
            assert_eq!(policy(&t.p), p, "{flags:?}");
        }
    }
}
