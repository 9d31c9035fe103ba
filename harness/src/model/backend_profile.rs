//! A plugged-in backend's `[profile]` table, read into the harness's [`Profile`].

use crate::model::profile::{Profile, ProfileError};
use snapconf_producers::backend::BackendDescription;

/// The profile a backend declares in its `[profile]` table, or `None` without one. A missing
/// `name` key defaults to the backend's name; every other key of
/// `default-profile.toml` is required, and unknown keys are refused.
///
/// # Errors
/// [`ProfileError::Parse`] naming the file and its `[profile]` table.
pub fn backend_profile(desc: &BackendDescription) -> Result<Option<Profile>, ProfileError> {
    let Some(table) = &desc.profile else {
        return Ok(None);
    };
    let mut table = table.clone();
    table
        .entry("name")
        .or_insert_with(|| toml::Value::String(desc.name.clone()));
    let origin = format!("{} [profile]", desc.path.display());
    toml::Value::Table(table)
        .try_into::<Profile>()
        .map(Some)
        .map_err(|e| ProfileError::Parse {
            path: origin,
            message: e.to_string().trim_end().replace('\n', " | "),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::profile::{HardlinkRule, SpecialRule};
    use std::path::Path;

    fn desc(profile: &str) -> BackendDescription {
        let text =
            format!("name = \"b\"\ncapture = [\"x\"]\nhydrate = [\"y\"]\n[profile]\n{profile}");
        BackendDescription::parse(&text, Path::new("b.toml")).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn the_profile_table_becomes_a_profile_named_after_the_backend() {
        let p = backend_profile(&desc(
            "hardlinks = \"refuse-excluded-alias\"\nspecial-files = \"refuse-at-capture\"\n\
             absolute-symlinks = \"drop\"\nescaping-symlinks = \"keep\"\nmodes = \"exec-bit\"\nmtimes = \"ignore\"\n",
        ))
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|| panic!("a profile"));
        assert_eq!(p.name, "b");
        assert_eq!(p.hardlinks, HardlinkRule::RefuseExcludedAlias);
        assert_eq!(p.special_files, SpecialRule::RefuseAtCapture);
    }

    #[test]
    fn a_bad_profile_names_the_file_and_the_table() {
        let e = backend_profile(&desc("hardlinks = \"copy\"\n"))
            .expect_err("keys missing")
            .to_string();
        assert!(e.contains("b.toml [profile]"), "{e}");
        let e = backend_profile(&desc("hardlinks = \"sometimes\"\n"))
            .expect_err("bad value")
            .to_string();
        assert!(e.contains("sometimes"), "{e}");
    }
}
