//! How the walk names an entry in its errors: by its whole path from the top.

use std::ffi::{CStr, CString};
use std::io;

use super::walk::Walk;

impl Walk<'_> {
    /// The path of the current level (and `child` in it) for messages, from the top.
    pub(super) fn shown_path(&self, child: Option<&CStr>) -> String {
        let mut p = String::from_utf8_lossy(self.shown).into_owned();
        let skip = usize::from(self.parent.is_some());
        for l in self.stack.iter().skip(skip) {
            if !l.name.as_bytes().is_empty() {
                p.push('/');
                p.push_str(&String::from_utf8_lossy(l.name.as_bytes()));
            }
        }
        if let Some(c) = child {
            p.push('/');
            p.push_str(&String::from_utf8_lossy(c.to_bytes()));
        }
        p
    }

    /// `e` with the path of the current level (or `child` in it) prefixed, kind kept.
    pub(super) fn error(&self, child: Option<&CStr>, e: io::Error) -> io::Error {
        io::Error::new(e.kind(), format!("`{}`: {e}", self.shown_path(child)))
    }

    /// As [`Walk::error`] for an entry named by bytes (the top itself when the stack is
    /// empty).
    pub(super) fn error_named(&self, name: &[u8], e: io::Error) -> io::Error {
        io::Error::new(e.kind(), format!("`{}`: {e}", self.shown_named(name)))
    }

    pub(super) fn mount_point(&self, name: &[u8]) -> io::Error {
        io::Error::other(format!(
            "`{}` is a mount point inside the tree; not removed",
            self.shown_named(name)
        ))
    }

    /// [`Walk::shown_path`] of the entry `name` of the current level (the top itself when
    /// the stack is empty).
    pub(super) fn shown_named(&self, name: &[u8]) -> String {
        match CString::new(name) {
            Ok(c) if !self.stack.is_empty() => self.shown_path(Some(&c)),
            _ => self.shown_path(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remove::level::Level;
    use rustix::fs::CWD;

    /// Errors name the entry by its path from the top, not only its last component.
    #[test]
    fn errors_name_the_whole_path() {
        let t = tempfile::tempdir().expect("tempdir");
        let root = t.path().join("root");
        std::fs::create_dir_all(root.join("a/b")).expect("mkdir");
        let walk = Walk {
            parent: None,
            shown: b"top",
            check_mounts: false,
            stack: vec![],
            restore: None,
        };
        let mut walk = walk;
        for name in ["", "a", "b"] {
            let fd = crate::dirs::open_dir(CWD, &root).expect("open");
            walk.stack
                .push(Level::new(fd, CString::new(name).expect("name"), vec![]));
        }
        let e = walk.mount_point(b"m");
        assert!(
            e.to_string().contains("`top/a/b/m` is a mount point"),
            "{e}"
        );
    }
}
