//! [`Feature`]: the taxonomy of workspace properties that producers or extractors mishandle.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A property of a workspace that some producers or extractors mishandle. Used for
/// `refusable` entries, refusal counts in reports, and generator coverage.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Feature {
    /// An inode with two or more names (a hardlink entry).
    SharedInode,
    /// An inode with an excluded name and a kept name (H2).
    ExcludedAlias,
    /// A symlink whose target is absolute (including `{root}`/`{out}` placeholders).
    AbsoluteSymlink,
    /// A relative symlink whose target, read lexically from the link's directory, climbs
    /// above the root (`../../etc`).
    EscapingSymlink,
    /// A symlink that resolves (inside the spec) to nothing, or through a non-directory.
    DanglingSymlink,
    /// A symlink whose resolution loops (more than
    /// [`MAX_HOPS`](crate::model::links::MAX_HOPS) hops) or names a directory that contains
    /// the link (`self -> .`, `up -> ..`), so a producer that follows it recurses.
    SymlinkLoop,
    /// A named pipe.
    Fifo,
    /// A Unix domain socket.
    Socket,
    /// A character device node.
    CharDevice,
    /// A listed directory with no entries under it.
    EmptyDir,
    /// A directory without owner write permission (`0555`, `0000`; H7).
    ReadOnlyDir,
    /// Setuid/setgid/sticky bits, no permission bits at all (`0000`), or an executable file.
    SpecialMode,
    /// A path, or a symlink/hardlink target, longer than 100 bytes (ustar's `name` and
    /// `linkname` fields), or a component of 100 bytes or more.
    LongName,
    /// A path that is not valid UTF-8.
    NonUtf8Name,
    /// A path with a control byte (newline, tab, DEL, ...).
    ControlCharName,
    /// A hardlink whose inode is a symlink (H8).
    HardlinkToSymlink,
}

impl Feature {
    /// Every feature, in declaration order.
    pub const ALL: [Feature; 16] = [
        Feature::SharedInode,
        Feature::ExcludedAlias,
        Feature::AbsoluteSymlink,
        Feature::EscapingSymlink,
        Feature::DanglingSymlink,
        Feature::SymlinkLoop,
        Feature::Fifo,
        Feature::Socket,
        Feature::CharDevice,
        Feature::EmptyDir,
        Feature::ReadOnlyDir,
        Feature::SpecialMode,
        Feature::LongName,
        Feature::NonUtf8Name,
        Feature::ControlCharName,
        Feature::HardlinkToSymlink,
    ];

    /// The kebab-case name, as in JSON and reports (`shared-inode`).
    pub fn name(self) -> &'static str {
        match self {
            Feature::SharedInode => "shared-inode",
            Feature::ExcludedAlias => "excluded-alias",
            Feature::AbsoluteSymlink => "absolute-symlink",
            Feature::EscapingSymlink => "escaping-symlink",
            Feature::DanglingSymlink => "dangling-symlink",
            Feature::SymlinkLoop => "symlink-loop",
            Feature::Fifo => "fifo",
            Feature::Socket => "socket",
            Feature::CharDevice => "char-device",
            Feature::EmptyDir => "empty-dir",
            Feature::ReadOnlyDir => "read-only-dir",
            Feature::SpecialMode => "special-mode",
            Feature::LongName => "long-name",
            Feature::NonUtf8Name => "non-utf8-name",
            Feature::ControlCharName => "control-char-name",
            Feature::HardlinkToSymlink => "hardlink-to-symlink",
        }
    }
}

impl fmt::Display for Feature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// Feature names are the same in JSON and `Display`, and `ALL` lists each once.
    #[test]
    fn feature_names_match_serde() {
        let all: BTreeSet<Feature> = Feature::ALL.into_iter().collect();
        assert_eq!(all.len(), Feature::ALL.len());
        for f in Feature::ALL {
            let json = serde_json::to_string(&f).expect("serialise");
            assert_eq!(json, format!("\"{f}\""));
            let back: Feature = serde_json::from_str(&json).expect("deserialise");
            assert_eq!(back, f);
        }
    }
}
