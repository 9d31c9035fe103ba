//! Typed refusals with stable reason codes.

use std::fmt;

/// A stable reason code for a refusal; `as_str` is what the CLI and JSON print.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reason {
    AbsolutePath,
    ParentTraversal,
    HardlinkNotAllowed,
    DanglingHardlink,
    SymlinkEscape,
    ThroughSymlink,
    SpecialFile,
    Duplicate,
    Truncated,
    LimitExceeded,
    Malformed,
    Unsupported,
    NotADirectory,
}

impl Reason {
    /// The stable kebab-case code, e.g. `hardlink-not-allowed`.
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::AbsolutePath => "absolute-path",
            Reason::ParentTraversal => "parent-traversal",
            Reason::HardlinkNotAllowed => "hardlink-not-allowed",
            Reason::DanglingHardlink => "dangling-hardlink",
            Reason::SymlinkEscape => "symlink-escape",
            Reason::ThroughSymlink => "through-symlink",
            Reason::SpecialFile => "special-file",
            Reason::Duplicate => "duplicate",
            Reason::Truncated => "truncated",
            Reason::LimitExceeded => "limit-exceeded",
            Reason::Malformed => "malformed",
            Reason::Unsupported => "unsupported",
            Reason::NotADirectory => "not-a-directory",
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a hydration or validation did not happen. On any error `root` is unchanged.
#[derive(Debug, thiserror::Error)]
pub enum HydrateError {
    /// The archive was refused: `member` is the member name as raw bytes.
    #[error("refused member `{}`: {reason}{}", String::from_utf8_lossy(.member), if .detail.is_empty() { String::new() } else { format!(" ({})", .detail) })]
    Refused {
        reason: Reason,
        member: Vec<u8>,
        detail: String,
    },
    /// An I/O error of our own (not a property of the archive).
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
}

impl HydrateError {
    /// The reason code of a refusal, `None` for I/O errors.
    pub fn reason(&self) -> Option<Reason> {
        match self {
            HydrateError::Refused { reason, .. } => Some(*reason),
            HydrateError::Io { .. } => None,
        }
    }
}
