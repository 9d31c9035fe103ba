//! Describe workspaces: a real directory as a `WorkspaceSpec` (`snapconf audit`, so it can
//! go through every pair with the same checks as generated cases), and a spec as the tree
//! it materialises to (for `ls -l`-style listings in reports, see
//! [`crate::model::diff::listing`]).

use crate::model::bytes::{RawBytes, RelPath};
use crate::model::spec::{Entry, EntryKind, WorkspaceSpec};
use crate::model::tree::{Node, NodeKind, Tree};
use crate::workspace::observe::{is_root, with_access};
use rustix::fs::CWD;
use std::collections::{BTreeMap, HashMap};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

/// Read `dir` (never following symlinks) into a spec: directories, files with their content,
/// second names of an inode as hardlinks, symlinks (targets under `dir` rewritten to start
/// with `{root}`), FIFOs, sockets, char devices; permission bits kept. `exclusions` are
/// root-relative paths. `Err` names the path that could not be read.
///
/// Root reads every entry whatever its mode. Any other user reads a directory or file of
/// theirs that their own bits do not let them read (`0000`, a `0300` directory) as its
/// owner can: it is made `u+rx` (a file `u+r`) for the moment of the read and given its
/// mode back, also when the read fails. Its contents and mode are never changed; its ctime is.
pub fn spec_from_dir(dir: &Path, exclusions: &[RelPath]) -> Result<WorkspaceSpec, String> {
    let meta = std::fs::symlink_metadata(dir)
        .map_err(|e| format!("cannot read `{}`: {e}", dir.display()))?;
    if !meta.is_dir() {
        return Err(format!("`{}` is not a directory", dir.display()));
    }
    let abs = dir
        .canonicalize()
        .map_err(|e| format!("cannot resolve `{}`: {e}", dir.display()))?;
    let root_bytes = abs.as_os_str().as_bytes().to_vec();
    let mut spec = WorkspaceSpec {
        entries: Vec::new(),
        exclusions: exclusions.to_vec(),
    };
    let mut inodes: HashMap<(u64, u64), RelPath> = HashMap::new();
    let mode = meta.mode() & 0o7777;
    readable(&abs, mode, 0o500, || {
        walk(&abs, None, &root_bytes, &mut spec, &mut inodes)
    })?;
    Ok(spec)
}

/// Run `read` with the owner bits `need` granted to `path` (of mode `mode`) for its
/// duration when not root ([`with_access`]).
fn readable<T>(
    path: &Path,
    mode: u32,
    need: u32,
    read: impl FnOnce() -> Result<T, String>,
) -> Result<T, String> {
    let mut failed = None;
    let done = with_access(CWD, path, mode, need, is_root(), path, || {
        read().map_err(|e| {
            failed = Some(e);
            std::io::Error::other("read failed")
        })
    });
    match (done, failed) {
        (_, Some(e)) => Err(e),
        (Ok(v), None) => Ok(v),
        (Err(e), None) => Err(format!(
            "cannot open up `{}` to read it: {e}",
            path.display()
        )),
    }
}

fn walk(
    dir: &Path,
    rel: Option<&RelPath>,
    root: &[u8],
    spec: &mut WorkspaceSpec,
    inodes: &mut HashMap<(u64, u64), RelPath>,
) -> Result<(), String> {
    let rd = std::fs::read_dir(dir).map_err(|e| format!("cannot list `{}`: {e}", dir.display()))?;
    let mut names: Vec<Vec<u8>> = Vec::new();
    for e in rd {
        let e = e.map_err(|e| format!("cannot list `{}`: {e}", dir.display()))?;
        names.push(e.file_name().as_bytes().to_vec());
    }
    names.sort();
    for name in names {
        let path = dir.join(std::ffi::OsStr::from_bytes(&name));
        let relp = match rel {
            Some(r) => r.join(&name),
            None => RelPath::new(name.clone()),
        }
        .map_err(|e| format!("unusable name under `{}`: {e}", dir.display()))?;
        let md = std::fs::symlink_metadata(&path)
            .map_err(|e| format!("cannot stat `{}`: {e}", path.display()))?;
        let ft = md.file_type();
        let mode = Some(md.mode() & 0o7777);
        let key = (md.dev(), md.ino());
        if !ft.is_dir() && md.nlink() > 1 {
            if let Some(first) = inodes.get(&key) {
                spec.entries.push(Entry {
                    path: relp,
                    kind: EntryKind::Hardlink {
                        target: first.clone(),
                    },
                    mode: None,
                });
                continue;
            }
            inodes.insert(key, relp.clone());
        }
        let kind = if ft.is_dir() {
            EntryKind::Dir
        } else if ft.is_file() {
            let content = readable(&path, md.mode() & 0o7777, 0o400, || {
                std::fs::read(&path).map_err(|e| format!("cannot read `{}`: {e}", path.display()))
            })?;
            EntryKind::File {
                content: RawBytes(content),
            }
        } else if ft.is_symlink() {
            let t = std::fs::read_link(&path)
                .map_err(|e| format!("cannot read link `{}`: {e}", path.display()))?;
            let t = t.as_os_str().as_bytes();
            let target = match t.strip_prefix(root) {
                Some(rest) if rest.is_empty() || rest.starts_with(b"/") => {
                    let mut v = b"{root}".to_vec();
                    v.extend_from_slice(rest);
                    v
                }
                _ => t.to_vec(),
            };
            EntryKind::Symlink {
                target: RawBytes(target),
            }
        } else if ft.is_fifo() {
            EntryKind::Fifo
        } else if ft.is_socket() {
            EntryKind::Socket
        } else if ft.is_char_device() {
            let rdev = md.rdev();
            EntryKind::CharDevice {
                major: rustix::fs::major(rdev),
                minor: rustix::fs::minor(rdev),
            }
        } else {
            // Block devices are not part of the spec model; leave them out.
            continue;
        };
        let is_dir = matches!(kind, EntryKind::Dir);
        spec.entries.push(Entry {
            path: relp.clone(),
            kind,
            mode,
        });
        if is_dir {
            readable(&path, md.mode() & 0o7777, 0o500, || {
                walk(&path, Some(&relp), root, spec, inodes)
            })?;
        }
    }
    Ok(())
}

/// The tree materialising `spec` creates, as written (no profile applied): every entry and
/// implicit parent with its own mode, a hardlink as its target's node with both names in
/// one shared-inode group, symlink targets verbatim (placeholders such as `{root}` kept).
/// Exclusions do not change the tree. A hardlink to nothing is left out.
pub fn spec_tree(spec: &WorkspaceSpec) -> Tree {
    let mut nodes: BTreeMap<RelPath, Node> = BTreeMap::new();
    let mut groups: BTreeMap<RelPath, Vec<RelPath>> = BTreeMap::new();
    for e in spec.with_parents() {
        let kind = match &e.kind {
            EntryKind::Dir => NodeKind::Dir,
            EntryKind::File { content } => NodeKind::File {
                size: content.as_bytes().len() as u64,
                sha256: crate::model::tree::sha256_hex(content.as_bytes()),
            },
            EntryKind::Symlink { target } => NodeKind::Symlink {
                target: target.clone(),
            },
            EntryKind::Fifo => NodeKind::Fifo,
            EntryKind::Socket => NodeKind::Socket,
            EntryKind::CharDevice { major, minor } => NodeKind::CharDevice {
                major: *major,
                minor: *minor,
            },
            EntryKind::Hardlink { target } => {
                // The inode's first name: follow hardlinks to a hardlink back to it.
                let first = groups
                    .iter()
                    .find(|(_, g)| g.contains(target))
                    .map(|(k, _)| k.clone())
                    .unwrap_or_else(|| target.clone());
                let Some(node) = nodes.get(&first).cloned() else {
                    continue;
                };
                groups
                    .entry(first.clone())
                    .or_insert_with(|| vec![first.clone()])
                    .push(e.path.clone());
                nodes.insert(e.path.clone(), node);
                continue;
            }
        };
        let mode = if matches!(kind, NodeKind::Symlink { .. }) {
            0
        } else {
            e.effective_mode()
        };
        nodes.insert(e.path.clone(), Node { kind, mode });
    }
    let mut shared_inodes: Vec<Vec<RelPath>> = groups
        .into_values()
        .map(|mut g| {
            g.sort();
            g.dedup();
            g
        })
        .collect();
    shared_inodes.sort();
    Tree {
        nodes,
        shared_inodes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::diff::listing;

    /// A spec lists `ls -l` style: parents added, names escaped, hardlinks grouped.
    #[test]
    fn a_spec_lists_as_the_tree_it_creates() {
        let spec: WorkspaceSpec = serde_json::from_value(serde_json::json!({
            "entries": [
                {"path": "d/f", "kind": "file", "content": "abc", "mode": 0o755},
                {"path": "d/h", "kind": "hardlink", "target": "d/f"},
                {"path": "new\nline", "kind": "fifo"},
                {"path": "l", "kind": "symlink", "target": "{root}/d"},
                {"path": "c", "kind": "char-device", "major": 1, "minor": 3}
            ],
            "exclusions": ["d/h"]
        }))
        .expect("spec");
        let text = listing(&spec_tree(&spec));
        assert_eq!(
            text,
            "crw-r--r--  1,3  c\n\
             drwxr-xr-x  d/\n\
             -rwxr-xr-x  3  sha256:ba7816bf  d/f\n\
             -rwxr-xr-x  3  sha256:ba7816bf  d/h\n\
             lrwxrwxrwx  l -> {root}/d\n\
             prw-r--r--  new\\nline\n\
             hardlinks: d/f = d/h\n"
        );
    }
}
