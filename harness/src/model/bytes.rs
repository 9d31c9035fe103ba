//! Names, link targets and contents as raw bytes, with a JSON form that stays readable.
//!
//! In JSON a value is a plain string when it is valid UTF-8 without control characters,
//! and `{"hex": "..."}` otherwise, so non-UTF-8 names (`\xff\xfe`) round-trip exactly.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// Arbitrary bytes: file content, a symlink target.
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RawBytes(pub Vec<u8>);

impl RawBytes {
    /// The bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }
    /// Shell- and human-readable form: UTF-8 where possible, `\xNN` escapes otherwise.
    pub fn escaped(&self) -> String {
        escape(&self.0)
    }
}

impl fmt::Debug for RawBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\"{}\"", escape(&self.0))
    }
}

impl From<&str> for RawBytes {
    fn from(s: &str) -> Self {
        RawBytes(s.as_bytes().to_vec())
    }
}

impl From<&[u8]> for RawBytes {
    fn from(s: &[u8]) -> Self {
        RawBytes(s.to_vec())
    }
}

/// Escape bytes for display: printable ASCII and UTF-8 as is, `\n`, `\\` and others as `\xNN`.
pub fn escape(bytes: &[u8]) -> String {
    let mut out = String::new();
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                c if c.is_control() => out.push_str(&format!("\\x{:02x}", c as u32)),
                c => out.push(c),
            }
        }
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}

fn is_plain(bytes: &[u8]) -> bool {
    match std::str::from_utf8(bytes) {
        Ok(s) => !s.chars().any(char::is_control),
        Err(_) => false,
    }
}

impl Serialize for RawBytes {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if is_plain(&self.0) {
            // is_plain checked UTF-8 above
            s.serialize_str(std::str::from_utf8(&self.0).unwrap_or_default())
        } else {
            #[derive(Serialize)]
            struct Hex {
                hex: String,
            }
            Hex {
                hex: hex::encode(&self.0),
            }
            .serialize(s)
        }
    }
}

impl<'de> Deserialize<'de> for RawBytes {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Form {
            Text(String),
            Hex { hex: String },
        }
        match Form::deserialize(d)? {
            Form::Text(s) => Ok(RawBytes(s.into_bytes())),
            Form::Hex { hex } => hex::decode(&hex)
                .map(RawBytes)
                .map_err(|e| serde::de::Error::custom(format!("bad hex bytes `{hex}`: {e}"))),
        }
    }
}

/// A root-relative path as bytes: `/`-separated components, no leading `/`, no empty,
/// `.` or `..` component. Construct with [`RelPath::new`], which checks this.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct RelPath(RawBytes);

impl RelPath {
    /// Check and wrap `bytes`; `Err` names what is wrong.
    pub fn new(bytes: impl Into<Vec<u8>>) -> Result<Self, String> {
        let bytes = bytes.into();
        if bytes.is_empty() {
            return Err("empty path".into());
        }
        if bytes.contains(&0) {
            return Err(format!("path `{}` contains NUL", escape(&bytes)));
        }
        for comp in bytes.split(|&b| b == b'/') {
            if comp.is_empty() || comp == b"." || comp == b".." {
                return Err(format!(
                    "path `{}` has an empty, `.` or `..` component or a leading/trailing `/`",
                    escape(&bytes)
                ));
            }
        }
        Ok(RelPath(RawBytes(bytes)))
    }

    /// The path's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0 .0
    }

    /// Components, outermost first.
    pub fn components(&self) -> impl Iterator<Item = &[u8]> {
        self.as_bytes().split(|&b| b == b'/')
    }

    /// The parent directory, `None` at top level.
    pub fn parent(&self) -> Option<RelPath> {
        let b = self.as_bytes();
        b.iter()
            .rposition(|&c| c == b'/')
            .map(|i| RelPath(RawBytes(b[..i].to_vec())))
    }

    /// The last component.
    pub fn file_name(&self) -> &[u8] {
        let b = self.as_bytes();
        match b.iter().rposition(|&c| c == b'/') {
            Some(i) => &b[i + 1..],
            None => b,
        }
    }

    /// `self/name`.
    pub fn join(&self, name: &[u8]) -> Result<RelPath, String> {
        let mut v = self.as_bytes().to_vec();
        v.push(b'/');
        v.extend_from_slice(name);
        RelPath::new(v)
    }

    /// True if `self` equals `prefix` or lies under it.
    pub fn starts_with(&self, prefix: &RelPath) -> bool {
        let (s, p) = (self.as_bytes(), prefix.as_bytes());
        s == p || (s.len() > p.len() && s.starts_with(p) && s[p.len()] == b'/')
    }

    /// Number of components.
    pub fn depth(&self) -> usize {
        self.components().count()
    }

    /// Join onto a filesystem directory (bytes are passed to the OS as is).
    pub fn to_path(&self, base: &std::path::Path) -> std::path::PathBuf {
        use std::os::unix::ffi::OsStrExt;
        base.join(std::ffi::OsStr::from_bytes(self.as_bytes()))
    }

    /// Human-readable form, `\xNN` for non-UTF-8 bytes.
    pub fn escaped(&self) -> String {
        escape(self.as_bytes())
    }
}

impl fmt::Debug for RelPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", escape(self.as_bytes()))
    }
}

impl fmt::Display for RelPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", escape(self.as_bytes()))
    }
}

impl<'de> Deserialize<'de> for RelPath {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = RawBytes::deserialize(d)?;
        RelPath::new(raw.0).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_utf8_names_round_trip_through_json() {
        let p = RelPath::new(b"dir/\xff\xfe\nname".to_vec()).expect("valid path");
        let json = serde_json::to_string(&p).expect("serialise");
        assert!(
            json.contains("hex"),
            "non-UTF-8 path must use the hex form: {json}"
        );
        let back: RelPath = serde_json::from_str(&json).expect("deserialise");
        assert_eq!(back, p);
        let plain = RelPath::new("a/b.txt").expect("valid");
        assert_eq!(
            serde_json::to_string(&plain).expect("serialise"),
            "\"a/b.txt\""
        );
    }

    #[test]
    fn rel_path_rejects_traversal_and_absolute() {
        for bad in ["", "/a", "a/", "a//b", "./a", "a/../b", "..", "a/."] {
            assert!(RelPath::new(bad).is_err(), "`{bad}` must be refused");
        }
        let p = RelPath::new("a/b/c").expect("valid");
        assert_eq!(p.parent(), Some(RelPath::new("a/b").expect("valid")));
        assert_eq!(p.file_name(), b"c");
        assert!(p.starts_with(&RelPath::new("a/b").expect("valid")));
        assert!(!RelPath::new("a/bc")
            .expect("valid")
            .starts_with(&RelPath::new("a/b").expect("valid")));
    }
}
