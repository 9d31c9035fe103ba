//! `GenConfig`: the knobs of the generators, from TOML/JSON (kebab-case keys), defaults, or
//! `SNAPCONF_GEN_<FIELD>` environment variables.

use serde::{Deserialize, Serialize};

/// Tunable weights and limits for [`case_strategy`](super::case_strategy) and friends.
///
/// Every `*_weight` is a relative integer weight among its siblings; `0` disables that
/// feature (it is then never generated, not even while shrinking). Keys are kebab-case in
/// TOML/JSON (`shared-inode-weight = 2`); missing keys take their default. Every field can
/// also be set with the environment variable `SNAPCONF_GEN_<FIELD>` (field name in upper
/// case, e.g. `SNAPCONF_GEN_MAX_ENTRIES=20`), read by [`GenConfig::from_env`] and
/// [`GenConfig::with_env`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "kebab-case", deny_unknown_fields)]
pub struct GenConfig {
    /// Maximum number of entry plans per workspace (`SNAPCONF_GEN_MAX_ENTRIES`, default 12).
    /// A plan adds one entry, or 2–7 for shared inodes, loops, long paths and read-only
    /// directories (their parents and aliases included).
    pub max_entries: usize,
    /// Maximum number of exclusions per workspace (`SNAPCONF_GEN_MAX_EXCLUSIONS`, default 3).
    pub max_exclusions: usize,
    /// Maximum number of prior-workspace plans (`SNAPCONF_GEN_MAX_PRIOR_ENTRIES`, default 6).
    pub max_prior_entries: usize,
    /// Allow exclusions whose path contains a newline (`SNAPCONF_GEN_NEWLINE_EXCLUSIONS`,
    /// default false). The adapter contract passes exclusions one per line in
    /// `{exclude_file}`, where such a path cannot be written; when false, exclusion plans
    /// that resolve to such a path are dropped (names with newlines are still generated).
    pub newline_exclusions: bool,
    /// Generate character devices (`1,3`, the numbers of `/dev/null`); creating them needs
    /// root (`SNAPCONF_GEN_ALLOW_CHAR_DEVICES`, default: true only when the effective uid is 0).
    pub allow_char_devices: bool,
    /// Draw a run's opening cases stratified, one per coverage shape and each stripped to
    /// its shapes ([`super::Strata`]), so that seeds agree on what they find
    /// (`SNAPCONF_GEN_STRATIFY`, default true); false draws every case plainly, richer
    /// cases for a run of a few cases at the cost of seeds that disagree.
    pub stratify: bool,

    /// Weight of a purely random workspace against [`realistic_weight`](Self::realistic_weight)
    /// (`SNAPCONF_GEN_RANDOM_WEIGHT`, default 7).
    pub random_weight: u32,
    /// Weight of the realistic Python-venv template (`.venv` with absolute and relative
    /// interpreter links, site-packages hardlinked to a uv-style cache, optionally with the
    /// cache or the cache file excluded), plus random entries (`SNAPCONF_GEN_REALISTIC_WEIGHT`,
    /// default 3).
    pub realistic_weight: u32,

    /// Regular file (`SNAPCONF_GEN_FILE_WEIGHT`, default 6).
    pub file_weight: u32,
    /// Directory that later plans may fill (`SNAPCONF_GEN_DIR_WEIGHT`, default 4).
    pub dir_weight: u32,
    /// Directory that stays empty (`SNAPCONF_GEN_EMPTY_DIR_WEIGHT`, default 1).
    pub empty_dir_weight: u32,
    /// Read-only directory (`0555`) created with a child file (`SNAPCONF_GEN_READONLY_DIR_WEIGHT`,
    /// default 2).
    pub readonly_dir_weight: u32,
    /// Directory with mode `0000` and a child file (`SNAPCONF_GEN_DIR_MODE_ZERO_WEIGHT`, default 1).
    pub dir_mode_zero_weight: u32,
    /// Hardlink to an earlier file or symlink, a file when there is none
    /// (`SNAPCONF_GEN_HARDLINK_WEIGHT`, default 3).
    pub hardlink_weight: u32,
    /// A file with 1–3 more names, each in its own new directory, same base name (uv/pnpm
    /// store style; `SNAPCONF_GEN_SHARED_INODE_WEIGHT`, default 2).
    pub shared_inode_weight: u32,
    /// Symlink to `foo` plus a hardlink to that symlink, H8 (`SNAPCONF_GEN_HARDLINK_TO_SYMLINK_WEIGHT`,
    /// default 1).
    pub hardlink_to_symlink_weight: u32,
    /// Relative symlink to an existing entry (`SNAPCONF_GEN_SYMLINK_RELATIVE_WEIGHT`, default 2).
    pub symlink_relative_weight: u32,
    /// Absolute symlink into the root, target `{root}/...` (`SNAPCONF_GEN_SYMLINK_ABS_INTO_ROOT_WEIGHT`,
    /// default 1).
    pub symlink_abs_into_root_weight: u32,
    /// Absolute symlink out of the root, target `{out}/...`, the jail's decoy directory
    /// (`SNAPCONF_GEN_SYMLINK_ABS_OUT_WEIGHT`, default 1).
    pub symlink_abs_out_weight: u32,
    /// Relative symlink climbing above the root, `../../x` (`SNAPCONF_GEN_SYMLINK_ESCAPING_WEIGHT`,
    /// default 1).
    pub symlink_escaping_weight: u32,
    /// Symlink to a name that does not exist (`SNAPCONF_GEN_SYMLINK_DANGLING_WEIGHT`, default 1).
    pub symlink_dangling_weight: u32,
    /// Symlink to its own directory, `self -> .` (`SNAPCONF_GEN_SYMLINK_LOOP_SELF_WEIGHT`, default 1).
    pub symlink_loop_self_weight: u32,
    /// Two symlinks naming each other, `a -> b`, `b -> a` (`SNAPCONF_GEN_SYMLINK_LOOP_PAIR_WEIGHT`,
    /// default 1).
    pub symlink_loop_pair_weight: u32,
    /// Named pipe (`SNAPCONF_GEN_FIFO_WEIGHT`, default 1).
    pub fifo_weight: u32,
    /// Unix domain socket (`SNAPCONF_GEN_SOCKET_WEIGHT`, default 1).
    pub socket_weight: u32,
    /// Character device `1,3`, only with `allow_char_devices` (`SNAPCONF_GEN_CHAR_DEVICE_WEIGHT`,
    /// default 1).
    pub char_device_weight: u32,
    /// A file whose whole path is 101, 120, 256 or 300 bytes, built from components of at
    /// most 50 bytes (`SNAPCONF_GEN_LONG_PATH_WEIGHT`, default 1).
    pub long_path_weight: u32,

    /// Plain short ASCII name (`SNAPCONF_GEN_NAME_PLAIN_WEIGHT`, default 12).
    pub name_plain_weight: u32,
    /// Component of exactly 99, 100, 155 or 255 bytes (`SNAPCONF_GEN_NAME_LONG_WEIGHT`, default 2).
    pub name_long_weight: u32,
    /// Name with the bytes `\xff\xfe` (`SNAPCONF_GEN_NAME_NON_UTF8_WEIGHT`, default 1).
    pub name_non_utf8_weight: u32,
    /// Name with a newline (`SNAPCONF_GEN_NAME_NEWLINE_WEIGHT`, default 1).
    pub name_newline_weight: u32,

    /// File mode left to the default `0644` (`SNAPCONF_GEN_MODE_DEFAULT_WEIGHT`, default 8).
    pub mode_default_weight: u32,
    /// Executable `0755` (`SNAPCONF_GEN_MODE_EXEC_WEIGHT`, default 2).
    pub mode_exec_weight: u32,
    /// No permissions, `0000` (`SNAPCONF_GEN_MODE_ZERO_WEIGHT`, default 1).
    pub mode_zero_weight: u32,
    /// Setuid `04755` (`SNAPCONF_GEN_MODE_SETUID_WEIGHT`, default 1).
    pub mode_setuid_weight: u32,
    /// Setgid `02755` (`SNAPCONF_GEN_MODE_SETGID_WEIGHT`, default 1).
    pub mode_setgid_weight: u32,

    /// Empty file content (`SNAPCONF_GEN_CONTENT_EMPTY_WEIGHT`, default 2).
    pub content_empty_weight: u32,
    /// Short text content, 1–40 bytes (`SNAPCONF_GEN_CONTENT_TEXT_WEIGHT`, default 6).
    pub content_text_weight: u32,
    /// Short binary content with NUL and `0xff`, 1–64 bytes (`SNAPCONF_GEN_CONTENT_BINARY_WEIGHT`,
    /// default 2).
    pub content_binary_weight: u32,

    /// Exclude one entry, file or directory (`SNAPCONF_GEN_EXCLUDE_ENTRY_WEIGHT`, default 2).
    pub exclude_entry_weight: u32,
    /// Exclude the parent directory of an entry (`SNAPCONF_GEN_EXCLUDE_PARENT_WEIGHT`, default 1).
    pub exclude_parent_weight: u32,
    /// Exclude the name of a shared inode that comes first in creation, sorted or reverse
    /// order, as a file exclusion (H2; `SNAPCONF_GEN_EXCLUDE_ALIAS_FIRST_WEIGHT`, default 3).
    pub exclude_alias_first_weight: u32,
    /// As above, but exclude that name's parent directory
    /// (`SNAPCONF_GEN_EXCLUDE_ALIAS_FIRST_DIR_WEIGHT`, default 1).
    pub exclude_alias_first_dir_weight: u32,

    /// Empty prior workspace (`SNAPCONF_GEN_PRIOR_EMPTY_WEIGHT`, default 2).
    pub prior_empty_weight: u32,
    /// Random entries in a non-empty prior (`SNAPCONF_GEN_PRIOR_RANDOM_WEIGHT`, default 2).
    pub prior_random_weight: u32,
    /// Hostile entries (relative to W1) in a non-empty prior, shared out by the six
    /// `prior_*_weight`s below (`SNAPCONF_GEN_HOSTILE_PRIOR_WEIGHT`, default 4).
    pub hostile_prior_weight: u32,
    /// Symlink to `{out}` or `..` where W1 has a directory, H9-style
    /// (`SNAPCONF_GEN_PRIOR_SYMLINK_AT_DIR_WEIGHT`, default 2).
    pub prior_symlink_at_dir_weight: u32,
    /// FIFO where W1 has a file (`SNAPCONF_GEN_PRIOR_FIFO_AT_FILE_WEIGHT`, default 1).
    pub prior_fifo_at_file_weight: u32,
    /// Read-only (`0555`, sometimes `0000`) directory with a child, at a W1 directory
    /// (`SNAPCONF_GEN_PRIOR_READONLY_DIR_WEIGHT`, default 1).
    pub prior_readonly_dir_weight: u32,
    /// Directory (with a child) where W1 has a file (`SNAPCONF_GEN_PRIOR_DIR_AT_FILE_WEIGHT`,
    /// default 1).
    pub prior_dir_at_file_weight: u32,
    /// File at a W1 file's path with different content, H14 (`SNAPCONF_GEN_PRIOR_STALE_FILE_WEIGHT`,
    /// default 2).
    pub prior_stale_file_weight: u32,
    /// A hardlink to the jail file `{out}/linked`, outside the root, where W1 has a file: an
    /// extractor that writes into the live root must not write through it
    /// (`SNAPCONF_GEN_PRIOR_HARDLINK_OUT_WEIGHT`, default 1; none when `hardlink_weight` is 0).
    pub prior_hardlink_out_weight: u32,
    /// A prior that is W1 itself moved on by 1–3 of a session's edits (`gen/edit.rs`:
    /// files created, changed, removed, moved, replaced by a directory or a link, ...), the
    /// workspace a resume finds when it restores over a tree that diverged from the
    /// checkpoint: stale and extra entries where they bite. One plan of a non-empty prior
    /// (`SNAPCONF_GEN_PRIOR_EDITED_WEIGHT`, default 1: about one non-empty prior in eight
    /// holds one; each unit weighs as much as 2 units of `prior_random_weight`).
    pub prior_edited_weight: u32,
}

impl Default for GenConfig {
    fn default() -> Self {
        GenConfig {
            max_entries: 12,
            max_exclusions: 3,
            max_prior_entries: 6,
            newline_exclusions: false,
            allow_char_devices: rustix::process::geteuid().is_root(),
            stratify: true,
            random_weight: 7,
            realistic_weight: 3,
            file_weight: 6,
            dir_weight: 4,
            empty_dir_weight: 1,
            readonly_dir_weight: 2,
            dir_mode_zero_weight: 1,
            hardlink_weight: 3,
            shared_inode_weight: 2,
            hardlink_to_symlink_weight: 1,
            symlink_relative_weight: 2,
            symlink_abs_into_root_weight: 1,
            symlink_abs_out_weight: 1,
            symlink_escaping_weight: 1,
            symlink_dangling_weight: 1,
            symlink_loop_self_weight: 1,
            symlink_loop_pair_weight: 1,
            fifo_weight: 1,
            socket_weight: 1,
            char_device_weight: 1,
            long_path_weight: 1,
            name_plain_weight: 12,
            name_long_weight: 2,
            name_non_utf8_weight: 1,
            name_newline_weight: 1,
            mode_default_weight: 8,
            mode_exec_weight: 2,
            mode_zero_weight: 1,
            mode_setuid_weight: 1,
            mode_setgid_weight: 1,
            content_empty_weight: 2,
            content_text_weight: 6,
            content_binary_weight: 2,
            exclude_entry_weight: 2,
            exclude_parent_weight: 1,
            exclude_alias_first_weight: 3,
            exclude_alias_first_dir_weight: 1,
            prior_empty_weight: 2,
            prior_random_weight: 2,
            hostile_prior_weight: 4,
            prior_symlink_at_dir_weight: 2,
            prior_fifo_at_file_weight: 1,
            prior_readonly_dir_weight: 1,
            prior_dir_at_file_weight: 1,
            prior_stale_file_weight: 2,
            prior_hardlink_out_weight: 1,
            prior_edited_weight: 1,
        }
    }
}

/// Prefix of the environment variables read by [`GenConfig::with_env`].
pub const ENV_PREFIX: &str = "SNAPCONF_GEN_";

/// A `SNAPCONF_GEN_*` variable or a config document that could not be read.
#[derive(Debug, thiserror::Error)]
pub enum GenConfigError {
    /// A variable's value is not a valid value of its key.
    #[error("environment variable `{var}` has value `{value}`, which is not valid for `{key}`: {reason}")]
    BadEnv {
        /// The variable, `SNAPCONF_GEN_` and the key upper-cased with `_` for `-`.
        var: String,
        /// The config key it sets (kebab-case).
        key: String,
        /// Its value as read.
        value: String,
        /// Why the value is refused (not a number, out of range, not a boolean).
        reason: String,
    },
    /// The config could not be turned into a JSON map and back (a fault of ours).
    #[error("generator config: {0}")]
    Internal(String),
}

impl GenConfig {
    /// The defaults with every `SNAPCONF_GEN_<FIELD>` variable that is set applied.
    pub fn from_env() -> Result<Self, GenConfigError> {
        Self::default().with_env()
    }

    /// `self` with every `SNAPCONF_GEN_<FIELD>` variable that is set applied on top
    /// (integers for limits and weights, `true`/`false`/`1`/`0` for flags).
    pub fn with_env(self) -> Result<Self, GenConfigError> {
        self.with_vars(|var| std::env::var(var).ok())
    }

    /// As [`with_env`](Self::with_env), reading variables through `lookup` (for tests).
    pub fn with_vars(
        self,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, GenConfigError> {
        let internal = |e: serde_json::Error| GenConfigError::Internal(e.to_string());
        let mut map = match serde_json::to_value(&self).map_err(internal)? {
            serde_json::Value::Object(map) => map,
            other => return Err(GenConfigError::Internal(format!("not a map: {other}"))),
        };
        let keys: Vec<String> = map.keys().cloned().collect();
        for key in keys {
            let var = format!("{ENV_PREFIX}{}", key.to_uppercase().replace('-', "_"));
            let Some(raw) = lookup(&var) else { continue };
            let bad = |reason: String| GenConfigError::BadEnv {
                var: var.clone(),
                key: key.clone(),
                value: raw.clone(),
                reason,
            };
            let text = raw.trim();
            let value = match map.get(&key) {
                Some(serde_json::Value::Bool(_)) => match text {
                    "1" | "true" | "yes" => serde_json::Value::Bool(true),
                    "0" | "false" | "no" => serde_json::Value::Bool(false),
                    _ => return Err(bad("expected true or false".into())),
                },
                _ => text
                    .parse::<u64>()
                    .map(serde_json::Value::from)
                    .map_err(|e| bad(e.to_string()))?,
            };
            map.insert(key.clone(), value);
            // Check this one value now, so that an out-of-range number names its variable.
            serde_json::from_value::<GenConfig>(serde_json::Value::Object(map.clone()))
                .map_err(|e| bad(e.to_string()))?;
        }
        serde_json::from_value(serde_json::Value::Object(map)).map_err(internal)
    }
}
