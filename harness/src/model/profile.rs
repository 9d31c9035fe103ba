//! Profiles: the semantics a backend promises, from which the expected tree is derived.
//! The default profile is embedded from `default-profile.toml`, which documents every key.

use serde::{Deserialize, Serialize};
use std::path::Path;

/// The embedded, commented default profile (also the template for user profiles).
pub const DEFAULT_PROFILE_TOML: &str = include_str!("default-profile.toml");

/// How a second name of an inode must come back.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HardlinkRule {
    /// `copy`: every name comes back as a file with the full content (inode sharing is
    /// not compared).
    Copy,
    /// `preserve`: the names come back sharing one inode.
    Preserve,
    /// `refuse-at-capture`: capture refuses a workspace with shared inodes.
    RefuseAtCapture,
    /// `refuse-excluded-alias`: capture refuses only when the inode's other name is
    /// excluded.
    RefuseExcludedAlias,
}

/// What happens to FIFOs, sockets and device nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SpecialRule {
    /// `drop`: left out of the hydrated tree.
    Drop,
    /// `refuse-at-capture`: capture refuses, naming the path.
    RefuseAtCapture,
}

/// What happens to absolute symlinks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AbsoluteRule {
    /// `keep`: the target string is restored verbatim (never followed).
    Keep,
    /// `rebase-inside-root`: a target under the captured root becomes relative.
    RebaseInsideRoot,
    /// `drop`: left out of the hydrated tree.
    Drop,
    /// `refuse-at-capture`: capture refuses.
    RefuseAtCapture,
}

/// What happens to relative symlinks that leave the root.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EscapingRule {
    /// `keep`: the target string is restored verbatim.
    Keep,
    /// `refuse-at-capture`: capture refuses.
    RefuseAtCapture,
}

/// Which permission bits are compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ModeRule {
    /// `exact`: all of `0o7777`.
    Exact,
    /// `exec-bit`: only whether the owner may execute (files); directories are not
    /// compared.
    ExecBit,
    /// `data-filter`: `0o7777` after Python's `data` filter (no setuid, setgid or sticky
    /// bit, no group or other write).
    DataFilter,
    /// `ignore`: not compared.
    Ignore,
}

/// Whether modification times are compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MtimeRule {
    /// `seconds`: compared to the second.
    Seconds,
    /// `ignore`: not compared.
    Ignore,
}

/// A backend's promised semantics (TOML; see `default-profile.toml`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Profile {
    /// The profile's name (`name`), shown in reports.
    pub name: String,
    /// A second name of an inode (`hardlinks`).
    pub hardlinks: HardlinkRule,
    /// FIFOs, sockets and device nodes (`special-files`).
    pub special_files: SpecialRule,
    /// Symlinks with an absolute target (`absolute-symlinks`).
    pub absolute_symlinks: AbsoluteRule,
    /// Relative symlinks whose target leaves the root (`escaping-symlinks`).
    pub escaping_symlinks: EscapingRule,
    /// Permission bits compared after hydration (`modes`).
    pub modes: ModeRule,
    /// Modification times (`mtimes`).
    pub mtimes: MtimeRule,
}

/// A profile that could not be read or parsed; the message names the file.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    /// The file could not be read: missing, not a regular file, or over
    /// [`CONFIG_LIMIT`](snapconf_producers::input::CONFIG_LIMIT) bytes (named in the error).
    #[error("cannot use profile: {0}")]
    Read(#[from] snapconf_producers::input::InputError),
    /// The text is not a valid profile (bad TOML, a missing or unknown key, an unknown
    /// value).
    #[error("profile `{path}` is not valid: {message}")]
    Parse {
        /// Where the text came from: the file's path, or the built-in profile's name.
        path: String,
        /// The TOML parser's message.
        message: String,
    },
    /// A name that is neither a built-in profile nor a path to a `.toml` file.
    #[error("unknown profile `{0}` (built-in: default; or give a path to a .toml file)")]
    Unknown(String),
}

impl Profile {
    /// Parse profile TOML; `origin` names the source in errors.
    pub fn from_toml(text: &str, origin: &str) -> Result<Self, ProfileError> {
        toml::from_str(text).map_err(|e| ProfileError::Parse {
            path: origin.to_string(),
            message: e.to_string(),
        })
    }

    /// The embedded default profile.
    pub fn default_profile() -> Self {
        // The embedded file is checked by a unit test; a failure here is a build defect.
        Self::from_toml(DEFAULT_PROFILE_TOML, "<embedded default>")
            .expect("embedded default profile parses")
    }

    /// `default` or a path to a TOML file.
    pub fn load(name_or_path: &str) -> Result<Self, ProfileError> {
        if name_or_path == "default" {
            return Ok(Self::default_profile());
        }
        let path = Path::new(name_or_path);
        if !name_or_path.ends_with(".toml") && !path.exists() {
            return Err(ProfileError::Unknown(name_or_path.to_string()));
        }
        let text =
            snapconf_producers::input::read_text(path, snapconf_producers::input::CONFIG_LIMIT)?;
        Self::from_toml(&text, name_or_path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_default_matches_design() {
        let p = Profile::default_profile();
        assert_eq!(p.name, "default");
        assert_eq!(p.hardlinks, HardlinkRule::Copy);
        assert_eq!(p.special_files, SpecialRule::Drop);
        assert_eq!(p.absolute_symlinks, AbsoluteRule::Keep);
        assert_eq!(p.escaping_symlinks, EscapingRule::Keep);
        assert_eq!(p.modes, ModeRule::ExecBit);
        assert_eq!(p.mtimes, MtimeRule::Ignore);
    }

    #[test]
    fn bad_profiles_name_the_file() {
        let err = Profile::from_toml("name = 1", "x.toml").expect_err("must fail");
        assert!(err.to_string().contains("`x.toml`"), "{err}");
        let err = Profile::load("/nonexistent/p.toml").expect_err("must fail");
        assert!(err.to_string().contains("/nonexistent/p.toml"), "{err}");
        assert!(matches!(
            Profile::load("nosuch"),
            Err(ProfileError::Unknown(_))
        ));
    }
}
