//! Shared test helpers: the raw tar writer that can express hostile forms (from
//! `snapconf-tarbytes`), a jail with canaries, and a tree snapshot read with `lstat` (never
//! following links).
#![allow(dead_code)]

/// The suite's one skip helper, [`skip::skip`] (`test-support/skip.rs`, shared by the three
/// test crates): prints `SKIPPED <test>: ...`, or fails with `SNAPCONF_REQUIRE_TOOLS=1`.
#[path = "../../../../test-support/skip.rs"]
pub mod skip;

/// The crash and fault tests' child process: the helper binary
/// `snapconf-extract-test-child` (`tests/child/main.rs`; see its `[[bin]]` in Cargo.toml).
pub const TEST_CHILD: &str = env!("CARGO_BIN_EXE_snapconf-extract-test-child");

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The raw tar writer (hostile forms: absolute names, `..`, NUL, unknown type flags) is the
/// suite's one, `snapconf_tarbytes::raw`; `Raw` is its member writer under this suite's name.
/// (Each test binary uses a part of it.)
#[allow(unused_imports)]
pub use snapconf_tarbytes::raw::{header, set_checksum, RawTar as Raw};

/// One node of an observed tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node {
    Dir { mode: u32 },
    File { mode: u32, data: Vec<u8>, ino: u64 },
    Symlink { target: PathBuf },
    Other { mode: u32 },
}

/// Paths (relative to `base`) to nodes, read with `lstat`; `skip` names top-level entries to
/// leave out. Inode numbers are replaced by a canonical index so two snapshots compare
/// sharing, not numbers.
pub fn snapshot(base: &Path, skip: &[&str]) -> BTreeMap<PathBuf, Node> {
    let mut out = BTreeMap::new();
    let mut inodes: BTreeMap<u64, u64> = BTreeMap::new();
    walk(base, base, skip, &mut out, &mut inodes);
    out
}

fn walk(
    base: &Path,
    dir: &Path,
    skip: &[&str],
    out: &mut BTreeMap<PathBuf, Node>,
    inodes: &mut BTreeMap<u64, u64>,
) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .expect("read_dir")
        .map(|e| e.expect("entry").path())
        .collect();
    entries.sort();
    for p in entries {
        let rel = p.strip_prefix(base).expect("prefix").to_path_buf();
        if dir == base && skip.iter().any(|s| rel == Path::new(s)) {
            continue;
        }
        let m = fs::symlink_metadata(&p).expect("lstat");
        let mode = m.permissions().mode() & 0o7777;
        let ft = m.file_type();
        let node = if ft.is_symlink() {
            Node::Symlink {
                target: fs::read_link(&p).expect("readlink"),
            }
        } else if ft.is_dir() {
            walk(base, &p, skip, out, inodes);
            Node::Dir { mode }
        } else if ft.is_file() {
            let next = inodes.len() as u64;
            let ino = *inodes.entry(m.ino()).or_insert(next);
            Node::File {
                mode,
                data: fs::read(&p).expect("read"),
                ino,
            }
        } else {
            Node::Other { mode }
        };
        out.insert(rel, node);
    }
}

/// A scratch directory holding `root/` (the workspace) and `out/` (canaries and decoys that
/// nothing may touch). Removed on drop.
pub struct Jail {
    pub dir: tempfile::TempDir,
}

impl Jail {
    pub fn new() -> Jail {
        let dir = tempfile::tempdir().expect("tempdir");
        let out = dir.path().join("out");
        fs::create_dir(&out).expect("mkdir out");
        fs::write(out.join("target"), b"decoy: must stay as it is\n").expect("write");
        fs::write(out.join("canary"), format!("canary {:?}\n", dir.path())).expect("write");
        fs::create_dir(out.join("exploit")).expect("mkdir");
        fs::write(dir.path().join("beside-root"), b"sibling canary\n").expect("write");
        Jail { dir }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn root(&self) -> PathBuf {
        self.dir.path().join("root")
    }

    pub fn out(&self) -> PathBuf {
        self.dir.path().join("out")
    }

    /// Everything in the jail except the root.
    pub fn outside(&self) -> BTreeMap<PathBuf, Node> {
        snapshot(self.path(), &["root"])
    }

    /// The workspace.
    pub fn inside(&self) -> BTreeMap<PathBuf, Node> {
        snapshot(&self.root(), &[])
    }

    /// Writes a prior workspace: `(path, content)`; parent directories are created.
    pub fn prior(&self, files: &[(&str, &str)]) {
        let root = self.root();
        fs::create_dir_all(&root).expect("mkdir root");
        for (p, c) in files {
            let p = root.join(p);
            if let Some(parent) = p.parent() {
                fs::create_dir_all(parent).expect("mkdir");
            }
            fs::write(p, c).expect("write");
        }
    }
}

/// Runs `f` and asserts that nothing outside the root changed; if `f` refused, also asserts
/// that the workspace is byte-identical to before. Returns `f`'s result.
pub fn jailed<T>(
    jail: &Jail,
    f: impl FnOnce() -> Result<T, snapconf_extract::HydrateError>,
) -> Result<T, snapconf_extract::HydrateError> {
    let outside = jail.outside();
    let inside = jail.root().exists().then(|| jail.inside());
    let r = f();
    assert_eq!(
        jail.outside(),
        outside,
        "something outside the root changed"
    );
    if r.is_err() {
        let after = jail.root().exists().then(|| jail.inside());
        assert_eq!(after, inside, "a refused hydration changed the workspace");
    }
    r
}

/// Convenience: the reason code of a result, or `None` on success / I/O error.
pub fn reason<T>(r: &Result<T, snapconf_extract::HydrateError>) -> Option<&'static str> {
    match r {
        Err(e) => e.reason().map(|r| r.as_str()),
        Ok(_) => None,
    }
}

/// `tar` compressed with gzip (RFC 1952), at the best level.
pub fn gzip(tar: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    e.write_all(tar).expect("gzip");
    e.finish().expect("gzip")
}

/// `tar` compressed with zstd (RFC 8878), level 3.
pub fn zstd(tar: &[u8]) -> Vec<u8> {
    zstd::stream::encode_all(tar, 3).expect("zstd")
}

/// `tar` compressed with xz, preset 6.
pub fn xz(tar: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = liblzma::write::XzEncoder::new(Vec::new(), 6);
    e.write_all(tar).expect("xz");
    e.finish().expect("xz")
}

/// A compressor: tar bytes in, compressed bytes out.
pub type Encoder = fn(&[u8]) -> Vec<u8>;

/// The three compressions the reference reads, with their encoders.
pub fn encoders() -> [(&'static str, Encoder); 3] {
    [("gzip", gzip), ("zstd", zstd), ("xz", xz)]
}
