//! Errors loading a backend description.

use std::path::PathBuf;

/// A backend description that could not be used. Every variant names the file; parse and
/// key errors also name the key.
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    /// The file could not be read: missing, not a regular file, too large (the error names
    /// the file).
    #[error("cannot use backend: {0}")]
    Read(#[from] crate::input::InputError),
    /// The file is not valid TOML, has an unknown key, lacks a required key or has a value
    /// of the wrong type; `message` is the TOML parser's, which names the key and line.
    #[error("backend `{path}` is not valid: {message}")]
    Parse {
        /// The backend description file, as the user named it.
        path: PathBuf,
        /// The TOML parser's message (names the key and the line).
        message: String,
    },
    /// A key holds a value the parser accepted but the contract does not.
    #[error("backend `{path}`: key `{key}`: {message}")]
    Key {
        /// The backend description file, as the user named it.
        path: PathBuf,
        /// The key (e.g. `name`, `capture`).
        key: String,
        /// What the contract wants instead, in words.
        message: String,
    },
}
