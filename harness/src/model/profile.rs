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
    Copy,
    Preserve,
    RefuseAtCapture,
    RefuseExcludedAlias,
}

/// What happens to FIFOs, sockets and device nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SpecialRule {
    Drop,
    RefuseAtCapture,
}

/// What happens to absolute symlinks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AbsoluteRule {
    Keep,
    RebaseInsideRoot,
    Drop,
    RefuseAtCapture,
}

/// What happens to relative symlinks that leave the root.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EscapingRule {
    Keep,
    RefuseAtCapture,
}

/// Which permission bits are compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ModeRule {
    Exact,
    ExecBit,
    DataFilter,
    Ignore,
}

/// Whether modification times are compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MtimeRule {
    Seconds,
    Ignore,
}

/// A backend's promised semantics (TOML; see `default-profile.toml`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Profile {
    pub name: String,
    pub hardlinks: HardlinkRule,
    pub special_files: SpecialRule,
    pub absolute_symlinks: AbsoluteRule,
    pub escaping_symlinks: EscapingRule,
    pub modes: ModeRule,
    pub mtimes: MtimeRule,
}

/// A profile that could not be read or parsed; the message names the file.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    /// The file could not be read: missing, not a regular file, or over
    /// [`CONFIG_LIMIT`](snapconf_producers::input::CONFIG_LIMIT) bytes (named in the error).
    #[error("cannot use profile: {0}")]
    Read(#[from] snapconf_producers::input::InputError),
    #[error("profile `{path}` is not valid: {message}")]
    Parse { path: String, message: String },
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
