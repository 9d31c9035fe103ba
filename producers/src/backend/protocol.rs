//! The worker protocol: one JSON request per line on the worker's stdin, one JSON answer per
//! line on its stdout.
//!
//! ```text
//! → {"op":"capture","root":"/j/src","archive":"/j/archive.tar","exclude":["a/b",{"hex":"ff"}],"scratch":"/j/scratch-1"}
//! ← {"ok":true}
//! → {"op":"hydrate","root":"/j/h-3","archive":"/j/archive.tar","exclude":[],"scratch":"/j/scratch-4"}
//! ← {"ok":false,"error":"member `../x` leaves the root"}
//! ```
//! A path is a JSON string when its bytes are UTF-8, else `{"hex":"…"}` (lower-case hex of
//! the raw bytes), so any name round-trips. Exclusions are root-relative, without a leading
//! or trailing `/`. `scratch` is a private, empty directory on the root's filesystem that the
//! backend may use for this request (staging a restore, say); snapconf removes it. An
//! answer may carry `"coverage"`, the code of the extraction library the request ran, when
//! the worker was asked for it ([`crate::coverage`]; `snapconf fuzz --coverage`), and
//! `"stalled":true` with `"ok":false` when the operation can never finish (a hang, told at
//! once; the worker goes on). Any other
//! field in an answer is ignored; a worker should ignore request fields it does not know.

use serde::{Deserialize, Serialize};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// A path or exclusion on the wire: text when UTF-8, else hex bytes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum PathField {
    /// The bytes are UTF-8.
    Text(String),
    /// The bytes are not UTF-8: `{"hex":"…"}`.
    Hex {
        /// Lower-case hex of the raw bytes.
        hex: String,
    },
}

impl PathField {
    /// The field for raw `bytes`.
    pub fn from_bytes(bytes: &[u8]) -> Self {
        match std::str::from_utf8(bytes) {
            Ok(s) => PathField::Text(s.to_owned()),
            Err(_) => PathField::Hex {
                hex: bytes.iter().map(|b| format!("{b:02x}")).collect(),
            },
        }
    }

    /// The field for `path`.
    pub fn from_path(path: &Path) -> Self {
        Self::from_bytes(path.as_os_str().as_bytes())
    }
}

/// One request line.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Request {
    /// `capture` or `hydrate`.
    pub op: &'static str,
    /// The workspace root.
    pub root: PathField,
    /// The archive to write (capture) or read (hydrate).
    pub archive: PathField,
    /// Root-relative exclusions (capture; empty for hydrate).
    pub exclude: Vec<PathField>,
    /// A private scratch directory for this request.
    pub scratch: PathField,
}

/// One answer line.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct Response {
    /// `true`: the request succeeded; `false`: the backend refused it.
    pub ok: bool,
    /// Why it refused (kept as evidence).
    #[serde(default)]
    pub error: Option<String>,
    /// The coverage ids of the request, 8 hex digits each ([`crate::coverage`]); only
    /// when asked for.
    #[serde(default)]
    pub coverage: Option<String>,
    /// `true` (with `ok: false`): the operation can no longer finish, and the worker
    /// stopped waiting for it and goes on (the Node.js library answers this when the
    /// operation's promise is left with nothing in the event loop to wait on). Read as a
    /// hang, without waiting for the timeout or killing the worker.
    #[serde(default)]
    pub stalled: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_utf8_paths_go_as_hex() {
        let r = Request {
            op: "capture",
            root: PathField::from_path(Path::new("/j/src")),
            archive: PathField::from_path(Path::new("/j/a.tar")),
            exclude: vec![
                PathField::from_bytes(b"a/b"),
                PathField::from_bytes(b"\xff/x"),
            ],
            scratch: PathField::from_path(Path::new("/j/s")),
        };
        let line = serde_json::to_string(&r).unwrap_or_default();
        assert_eq!(
            line,
            r#"{"op":"capture","root":"/j/src","archive":"/j/a.tar","exclude":["a/b",{"hex":"ff2f78"}],"scratch":"/j/s"}"#
        );
    }

    #[test]
    fn answers_parse_and_extra_fields_are_ignored() {
        let a: Response = serde_json::from_str(r#"{"ok":false,"error":"no","t":1}"#)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            a,
            Response {
                ok: false,
                error: Some("no".into()),
                coverage: None,
                stalled: false,
            }
        );
        assert!(serde_json::from_str::<Response>("hello").is_err());
        assert!(serde_json::from_str::<Response>(r#"{"error":"x"}"#).is_err());
    }
}
