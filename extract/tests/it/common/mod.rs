//! Shared test helpers: a raw tar writer that can express hostile forms, a jail with canaries,
//! and a tree snapshot read with `lstat` (never following links).
#![allow(dead_code)]

/// The suite's one skip helper, [`skip::skip`] (`test-support/skip.rs`, shared by the three
/// test crates): prints `SKIPPED <test>: ...`, or fails with `SNAPCONF_REQUIRE_TOOLS=1`.
#[path = "../../../../test-support/skip.rs"]
pub mod skip;

pub mod rng;

/// The crash and fault tests' child process: the helper binary
/// `snapconf-extract-test-child` (`tests/child/main.rs`; see its `[[bin]]` in Cargo.toml).
pub const TEST_CHILD: &str = env!("CARGO_BIN_EXE_snapconf-extract-test-child");

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Builds tar bytes member by member, without the `tar` crate's path sanitising, so that
/// absolute names, `..`, NUL and unknown type flags can be written.
#[derive(Default, Clone)]
pub struct Raw {
    pub bytes: Vec<u8>,
}

/// A 512-byte ustar header with the given fields and a correct checksum.
pub fn header(flag: u8, name: &[u8], link: &[u8], size: u64, mode: u32) -> [u8; 512] {
    let mut h = [0u8; 512];
    let n = name.len().min(100);
    h[..n].copy_from_slice(&name[..n]);
    put_octal(&mut h[100..108], u64::from(mode));
    put_octal(&mut h[108..116], 0);
    put_octal(&mut h[116..124], 0);
    put_octal(&mut h[124..136], size);
    put_octal(&mut h[136..148], 1_700_000_000);
    h[156] = flag;
    let l = link.len().min(100);
    h[157..157 + l].copy_from_slice(&link[..l]);
    h[257..263].copy_from_slice(b"ustar\0");
    h[263..265].copy_from_slice(b"00");
    set_checksum(&mut h);
    h
}

pub fn set_checksum(h: &mut [u8; 512]) {
    h[148..156].copy_from_slice(b"        ");
    let sum: u64 = h.iter().map(|&b| u64::from(b)).sum();
    let s = format!("{sum:06o}\0 ");
    h[148..156].copy_from_slice(s.as_bytes());
}

fn put_octal(field: &mut [u8], v: u64) {
    let w = field.len() - 1;
    let s = format!("{v:0w$o}");
    field[..w].copy_from_slice(s.as_bytes());
    field[w] = 0;
}

impl Raw {
    pub fn new() -> Self {
        Raw::default()
    }

    /// Appends a header and payload (padded).
    pub fn push(
        &mut self,
        flag: u8,
        name: &[u8],
        link: &[u8],
        data: &[u8],
        mode: u32,
    ) -> &mut Self {
        let h = header(flag, name, link, data.len() as u64, mode);
        self.bytes.extend_from_slice(&h);
        self.data(data);
        self
    }

    /// Appends raw payload bytes with padding.
    pub fn data(&mut self, data: &[u8]) -> &mut Self {
        self.bytes.extend_from_slice(data);
        let pad = (512 - data.len() % 512) % 512;
        self.bytes.extend(std::iter::repeat_n(0u8, pad));
        self
    }

    pub fn file(&mut self, name: &str, data: &[u8]) -> &mut Self {
        self.push(b'0', name.as_bytes(), b"", data, 0o644)
    }
    pub fn file_mode(&mut self, name: &str, data: &[u8], mode: u32) -> &mut Self {
        self.push(b'0', name.as_bytes(), b"", data, mode)
    }
    pub fn dir(&mut self, name: &str) -> &mut Self {
        self.push(b'5', name.as_bytes(), b"", b"", 0o755)
    }
    pub fn dir_mode(&mut self, name: &str, mode: u32) -> &mut Self {
        self.push(b'5', name.as_bytes(), b"", b"", mode)
    }
    pub fn symlink(&mut self, name: &str, target: &str) -> &mut Self {
        self.push(b'2', name.as_bytes(), target.as_bytes(), b"", 0o777)
    }
    pub fn hardlink(&mut self, name: &str, target: &str) -> &mut Self {
        self.push(b'1', name.as_bytes(), target.as_bytes(), b"", 0o644)
    }
    /// A PAX `x` header with the given records, to apply to the next member.
    pub fn pax(&mut self, records: &[(&str, &[u8])]) -> &mut Self {
        let mut body = Vec::new();
        for (k, v) in records {
            let base = k.len() + v.len() + 3; // space, `=`, newline
            let mut len = base + 1;
            while base + len.to_string().len() != len {
                len = base + len.to_string().len();
            }
            body.extend_from_slice(format!("{len} {k}=").as_bytes());
            body.extend_from_slice(v);
            body.push(b'\n');
        }
        self.push(b'x', b"PaxHeaders/x", b"", &body, 0o644)
    }
    /// A GNU long name (`L`) header for the next member.
    pub fn long_name(&mut self, name: &[u8]) -> &mut Self {
        let mut d = name.to_vec();
        d.push(0);
        self.push(b'L', b"././@LongLink", b"", &d, 0o644)
    }
    /// Appends the end-of-archive marker.
    pub fn finish(&mut self) -> Vec<u8> {
        let mut b = self.bytes.clone();
        b.extend(std::iter::repeat_n(0u8, 1024));
        b
    }
}

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
