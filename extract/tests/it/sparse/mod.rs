//! GNU sparse members (GNU tar manual, "Storing Sparse Files"; `extract/src/sparse.rs`):
//! each class's archive of `corpora/sparse/` hydrates to the tree GNU tar extracts, holes
//! kept; every malformed class is refused before anything is written (`sparse/refusals.rs`);
//! random hole maps written in each of the four encodings (`sparse/writer.rs`) hydrate to
//! the expected bytes.

mod refusals;
mod writer;

use std::fs::{self, File};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{self, skip::skip, Raw};
use proptest::prelude::*;
use snapconf_extract::{hydrate, hydrate_file, list, Policy};
use writer::{archive, has_holes, push_sparse, Sparse, FORMATS};

// ---------------------------------------------------------------------------------------
// The corpus against GNU tar.
// ---------------------------------------------------------------------------------------

fn corpus(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../corpora/sparse")
        .join(name)
}

/// Whether `tar` is GNU tar.
fn gnu_tar() -> bool {
    Command::new("tar")
        .arg("--version")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("GNU tar"))
}

/// Hydrates `corpora/sparse/<name>` with the reference (by offset and as a stream) and with
/// GNU tar, and compares the trees; each of `sparse` (paths) must be a file with holes
/// wherever GNU tar's has them.
fn against_gnu_tar(name: &str, sparse: &[&str]) {
    if !gnu_tar() {
        skip("GNU tar", "apt-get install tar");
        return;
    }
    let path = corpus(name);
    let dir = tempfile::tempdir().expect("tempdir");
    let gnu = dir.path().join("gnu");
    fs::create_dir(&gnu).expect("mkdir");
    let out = Command::new("tar")
        .arg("-xf")
        .arg(&path)
        .arg("-C")
        .arg(&gnu)
        .output()
        .expect("tar");
    assert!(out.status.success(), "GNU tar -xf {name}: {out:?}");
    let by_offset = dir.path().join("file");
    let stream = dir.path().join("stream");
    let file = File::open(&path).expect("open");
    hydrate_file(&file, &by_offset, &Policy::default()).expect("hydrate_file");
    hydrate(
        File::open(&path).expect("open"),
        &stream,
        &Policy::default(),
    )
    .expect("hydrate");
    let theirs = common::snapshot(&gnu, &[]);
    for ours in [&by_offset, &stream] {
        assert_eq!(
            common::snapshot(ours, &[]),
            theirs,
            "{name}: {}",
            ours.display()
        );
        for f in sparse {
            let (a, b) = (ours.join(f), gnu.join(f));
            let (ma, mb) = (
                fs::metadata(&a).expect("ours"),
                fs::metadata(&b).expect("tar's"),
            );
            assert_eq!(ma.size(), mb.size(), "{name}: {f}");
            assert_eq!(ma.mtime(), mb.mtime(), "{name}: {f}");
            assert!(
                has_holes(&a) || !has_holes(&b),
                "{name}: {f}: GNU tar's copy has holes, ours has none"
            );
            assert!(
                has_holes(&b),
                "{name}: {f}: no holes (is the filesystem tmpfs or ext4?)"
            );
        }
    }
    // The listing gives each sparse member its real name and size.
    let listing = list(File::open(&path).expect("open")).expect("list");
    for f in sparse {
        let m = listing
            .members
            .iter()
            .find(|m| m.name == f.as_bytes())
            .expect("listed under its real name");
        assert_eq!(m.size, fs::metadata(gnu.join(f)).expect("stat").size());
    }
}

#[test]
fn old_gnu_by_gnu_tar() {
    against_gnu_tar("gnu-oldgnu.tar", &["db.bin", "vm.img"]);
}

#[test]
fn pax_0_0_by_gnu_tar() {
    against_gnu_tar("gnu-pax0.0.tar", &["db.bin", "vm.img"]);
}

#[test]
fn pax_0_1_by_gnu_tar() {
    against_gnu_tar("gnu-pax0.1.tar", &["db.bin", "vm.img"]);
}

#[test]
fn pax_1_0_by_gnu_tar() {
    against_gnu_tar("gnu-pax1.0.tar", &["db.bin", "vm.img"]);
}

#[test]
fn old_gnu_hand_made() {
    against_gnu_tar("handmade-oldgnu.tar", &["handmade/odd.bin"]);
}

#[test]
fn pax_0_0_hand_made() {
    against_gnu_tar("handmade-pax00.tar", &["handmade/p00.bin"]);
}

/// The old GNU archive GNU tar wrote has an extension block (db.bin has more than four
/// regions), so the corpus covers it.
#[test]
fn old_gnu_corpus_has_an_extension_block() {
    let bytes = fs::read(corpus("gnu-oldgnu.tar")).expect("read");
    assert_eq!(&bytes[..6], b"db.bin");
    assert_eq!((bytes[156], bytes[482]), (b'S', 1));
}

// ---------------------------------------------------------------------------------------
// Accepted forms and random maps.
// ---------------------------------------------------------------------------------------

/// `s` in every format hydrates (as a stream and by offset, and as a hardlink copy) to
/// `s.expected()`, with `after` intact behind it.
pub(crate) fn each_accepts(s: &Sparse, policy: &Policy) {
    let want = s.expected();
    for f in FORMATS {
        let mut raw = Raw::new();
        push_sparse(&mut raw, f, "f", s);
        raw.hardlink("g", "f").file("after", b"after\n");
        let ar = raw.finish();
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("a.tar");
        fs::write(&path, &ar).expect("write");
        let file = File::open(&path).expect("open");
        let roots = [dir.path().join("stream"), dir.path().join("file")];
        hydrate(&ar[..], &roots[0], policy).unwrap_or_else(|e| panic!("{f:?} stream: {e}"));
        hydrate_file(&file, &roots[1], policy).unwrap_or_else(|e| panic!("{f:?} file: {e}"));
        for root in &roots {
            for name in ["f", "g"] {
                let got = fs::read(root.join(name)).expect("read");
                assert!(got == want, "{f:?} {}: {name} differs", root.display());
            }
            assert_eq!(fs::read(root.join("after")).expect("after"), b"after\n");
        }
    }
}

#[test]
fn edge_maps_are_accepted() {
    let p = Policy::default();
    // Wholly a hole; empty; data only; data up to the end without a final entry.
    each_accepts(&Sparse::new(100_000, &[(100_000, 0)]), &p);
    each_accepts(&Sparse::new(0, &[(0, 0)]), &p);
    each_accepts(&Sparse::new(1536, &[(0, 1536)]), &p);
    each_accepts(&Sparse::new(5000, &[(0, 512), (4990, 10)]), &p);
    // More than one old GNU extension block (4 + 21 + 21 + ...).
    let map: Vec<(u64, u64)> = (0..60).map(|i| (i * 1024, 512)).collect();
    each_accepts(&Sparse::new(59 * 1024 + 512, &map), &p);
}

/// A realsize past 8 GiB (base-256 in the old GNU header), holes all but one block.
#[test]
fn a_realsize_past_8_gib() {
    let s = Sparse::new(1 << 34, &[(0, 512), (1 << 34, 0)]);
    for f in FORMATS {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("root");
        hydrate(&archive(f, &s)[..], &root, &Policy::default()).expect("hydrate");
        let m = fs::metadata(root.join("f")).expect("stat");
        assert_eq!(m.size(), 1 << 34, "{f:?}");
        let mut head = vec![0u8; 512];
        std::io::Read::read_exact(&mut File::open(root.join("f")).expect("open"), &mut head)
            .expect("read");
        assert_eq!(head, s.data, "{f:?}");
    }
}

/// Holes stay holes: a 64 MiB file with 1 KiB of data takes a few blocks.
#[test]
fn holes_stay_holes() {
    let s = Sparse::new(64 << 20, &[(0, 512), (32 << 20, 512), (64 << 20, 0)]);
    for f in FORMATS {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("root");
        hydrate(&archive(f, &s)[..], &root, &Policy::default()).expect("hydrate");
        let m = fs::metadata(root.join("f")).expect("stat");
        assert_eq!(m.size(), 64 << 20);
        assert!(m.blocks() * 512 < 1 << 20, "{f:?}: {} blocks", m.blocks());
    }
}

/// Random hole maps GNU tar could write: every region but the last with data fills whole
/// blocks, and the map ends at the file's size (a final `realsize,0` entry when the file
/// ends in a hole).
fn sparse_files() -> impl Strategy<Value = Sparse> {
    (
        prop::collection::vec((0u64..5000, 0u64..4), 0..30),
        0u64..1500,
        0u64..5000,
        any::<u8>(),
    )
        .prop_map(|(runs, last, tail, seed)| {
            let mut map = Vec::new();
            let mut end = 0;
            for (gap, blocks) in runs {
                map.push((end + gap, blocks * 512));
                end += gap + blocks * 512;
            }
            map.push((end, last));
            end += last;
            if tail > 0 {
                end += tail;
                map.push((end, 0));
            }
            let mut s = Sparse::new(end, &map);
            for (i, b) in s.data.iter_mut().enumerate() {
                *b = (i as u8).wrapping_mul(31).wrapping_add(seed);
            }
            s
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn random_maps_hydrate_to_their_bytes(s in sparse_files()) {
        each_accepts(&s, &Policy::default());
    }
}
