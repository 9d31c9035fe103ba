//! Benchmark (not a timed test): hydrate a 20,000-file (~200 MB) and a 5,000-file (~50 MB)
//! archive with the reference extractor, GNU `tar -xf` and Python
//! `tarfile.extractall(filter="data")`, all in one run, and print wall times, ratios and the
//! reference's peak RSS. Then the same archives compressed with `gzip` (level 6) and `zstd`
//! (level 3): the reference's `hydrate_file` against `tar -xzf` and `tar --zstd -xf`. Last,
//! the sparse rows: a workspace of sparse files (VM-image-like: 16 files of 256 MiB, each with
//! 64 data regions of 64 KiB) archived by GNU tar with `--sparse`, once as old GNU
//! (`--format=gnu`, type `S` with extension blocks) and once as PAX 1.0, hydrated by the
//! reference and by GNU tar, with the bytes each result takes on disk (holes kept).
//!
//! Run: `cargo bench -p snapconf-extract --bench hydrate`. `SNAPCONF_BENCH_DIR` picks the
//! scratch directory (default: `$TMPDIR`); `SNAPCONF_BENCH_REPS` the repetitions (default 3,
//! the fastest is reported); `SNAPCONF_BENCH_ONLY=sparse` runs the sparse rows alone. Each
//! tool runs in a fresh child process extracting into a fresh
//! empty directory; removing the result is not timed.
//!
//! Peak RSS is read by the child from `/proc/self/status` (`VmHWM`) after hydrating.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use snapconf_extract::{hydrate, hydrate_file, Policy};

/// The suite's one seeded generator (a leaf crate: see `extract/Cargo.toml`).
use snapconf_tarbytes::Rng;

fn main() {
    if let Ok(mode) = std::env::var("SNAPCONF_BENCH_CHILD") {
        child(&mode);
        return;
    }
    let base = std::env::var_os("SNAPCONF_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    let reps: usize = std::env::var("SNAPCONF_BENCH_REPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    let dir = tempfile::tempdir_in(&base).expect("scratch dir");
    println!(
        "scratch: {} ({} repetitions, fastest shown)",
        base.display(),
        reps
    );
    if std::env::var("SNAPCONF_BENCH_ONLY").is_ok_and(|v| v == "sparse") {
        sparse(dir.path(), reps);
        return;
    }
    println!(
        "{:>7} {:>8} | {:>9} {:>9} {:>9} {:>9} | {:>8} {:>8} {:>8} | {:>9} {:>9}",
        "files",
        "MB",
        "ref file",
        "ref strm",
        "gnu tar",
        "python",
        "file/tar",
        "strm/tar",
        "py/file",
        "RSS file",
        "RSS strm"
    );
    let mut archives = Vec::new();
    for (files, total) in [(5_000usize, 50usize << 20), (20_000, 200 << 20)] {
        let archive = dir.path().join(format!("a{files}.tar"));
        let bytes = build(&archive, files, total);
        let mut best = [Duration::MAX; 4];
        let mut rss = [0u64; 2];
        for _ in 0..reps {
            for (i, tool) in ["file", "stream", "tar", "python"].iter().enumerate() {
                let out = dir.path().join(format!("out-{tool}"));
                let (t, hwm) = run(tool, &archive, &out);
                best[i] = best[i].min(t);
                if i < 2 {
                    rss[i] = rss[i].max(hwm);
                }
                remove(&out);
            }
        }
        let s = |d: Duration| d.as_secs_f64();
        println!(
            "{:>7} {:>8.1} | {:>8.3}s {:>8.3}s {:>8.3}s {:>8.3}s | {:>7.2}x {:>7.2}x {:>7.2}x | {:>6} KiB {:>6} KiB",
            files,
            bytes as f64 / 1e6,
            s(best[0]),
            s(best[1]),
            s(best[2]),
            s(best[3]),
            s(best[0]) / s(best[2]),
            s(best[1]) / s(best[2]),
            s(best[3]) / s(best[0]),
            rss[0],
            rss[1],
        );
        archives.push((files, archive, bytes));
    }
    compressed(dir.path(), &archives, reps);
    sparse(dir.path(), reps);
    for (_, archive, _) in archives {
        fs::remove_file(&archive).expect("rm archive");
    }
}

/// The compressed rows: each archive of `archives` (files, path, tar bytes) compressed by
/// `gzip -c` and `zstd -c`, hydrated by the reference (`hydrate_file`, which decompresses
/// into its spool) and by GNU tar (which pipes through the compressor), fastest of `reps`.
fn compressed(dir: &Path, archives: &[(usize, PathBuf, u64)], reps: usize) {
    let have = |tool: &str| {
        Command::new(tool)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    println!();
    println!(
        "{:>7} {:>8} {:>5} {:>8} | {:>9} {:>9} {:>8} | {:>9}",
        "files", "MB", "comp", "comp MB", "ref file", "gnu tar", "ref/tar", "RSS ref"
    );
    for (tool, tar_flag, child) in [("gzip", "-z", "file"), ("zstd", "--zstd", "file")] {
        if !have(tool) {
            println!("{tool}: not installed, rows skipped (apt-get install {tool})");
            continue;
        }
        for (files, archive, bytes) in archives {
            let packed = dir.join(format!("a{files}.tar.{tool}"));
            let out = Command::new(tool)
                .arg("-c")
                .arg("-q")
                .arg(archive)
                .output()
                .expect("compressor runs");
            assert!(out.status.success(), "{tool}");
            fs::write(&packed, &out.stdout).expect("write compressed");
            let mut best = [Duration::MAX; 2];
            let mut rss = 0u64;
            for _ in 0..reps {
                let o = dir.join("out-ref");
                let (t, hwm) = run(child, &packed, &o);
                best[0] = best[0].min(t);
                rss = rss.max(hwm);
                remove(&o);
                let o = dir.join("out-tar");
                fs::create_dir(&o).expect("mkdir");
                let t0 = Instant::now();
                let st = Command::new("tar")
                    .arg(tar_flag)
                    .arg("-xf")
                    .arg(&packed)
                    .arg("-C")
                    .arg(&o)
                    .status()
                    .expect("tar runs");
                best[1] = best[1].min(t0.elapsed());
                assert!(st.success(), "tar {tar_flag}");
                remove(&o);
            }
            let s = |d: Duration| d.as_secs_f64();
            println!(
                "{:>7} {:>8.1} {:>5} {:>8.1} | {:>8.3}s {:>8.3}s {:>7.2}x | {:>6} KiB",
                files,
                *bytes as f64 / 1e6,
                tool,
                out.stdout.len() as f64 / 1e6,
                s(best[0]),
                s(best[1]),
                s(best[0]) / s(best[1]),
                rss,
            );
            fs::remove_file(&packed).expect("rm compressed");
        }
    }
}

/// Sparse files of the sparse rows, their size, and their data regions (count and bytes).
const SPARSE_FILES: usize = 16;
const SPARSE_SIZE: u64 = 256 << 20;
const SPARSE_REGIONS: u64 = 64;
const SPARSE_REGION: usize = 64 << 10;

/// The sparse rows: a workspace of sparse files archived by GNU tar with `--sparse` as old
/// GNU and as PAX 1.0, hydrated by the reference (by offset and as a stream) and by GNU
/// tar, fastest of `reps`; and the bytes each result takes on disk.
fn sparse(dir: &Path, reps: usize) {
    let ws = dir.join("sparse-ws");
    fs::create_dir(&ws).expect("mkdir");
    let mut rng = Rng::new(2);
    for i in 0..SPARSE_FILES {
        let f = fs::File::create(ws.join(format!("disk{i:02}.img"))).expect("create");
        f.set_len(SPARSE_SIZE).expect("set_len");
        let step = SPARSE_SIZE / SPARSE_REGIONS;
        for r in 0..SPARSE_REGIONS {
            let data: Vec<u8> = (0..SPARSE_REGION).map(|_| rng.below(256) as u8).collect();
            std::os::unix::fs::FileExt::write_all_at(&f, &data, r * step).expect("write");
        }
    }
    let data_mb = (SPARSE_FILES * SPARSE_REGIONS as usize * SPARSE_REGION) as f64 / 1e6;
    let apparent_gb = SPARSE_FILES as f64 * SPARSE_SIZE as f64 / 1e9;
    println!();
    println!("sparse: {SPARSE_FILES} files, {apparent_gb:.1} GB apparent, {data_mb:.1} MB of data");
    println!(
        "{:>7} {:>8} | {:>9} {:>9} {:>9} | {:>8} {:>8} | {:>8} {:>8}",
        "format",
        "tar MB",
        "ref file",
        "ref strm",
        "gnu tar",
        "file/tar",
        "strm/tar",
        "disk ref",
        "disk tar"
    );
    for (label, flags) in [
        ("oldgnu", &["--format=gnu", "--sparse"][..]),
        (
            "pax1.0",
            &["--format=posix", "--sparse", "--sparse-version=1.0"][..],
        ),
    ] {
        let archive = dir.join(format!("sparse-{label}.tar"));
        let st = Command::new("tar")
            .args(flags)
            .arg("-cf")
            .arg(&archive)
            .arg("-C")
            .arg(&ws)
            .arg(".")
            .status()
            .expect("tar runs");
        assert!(st.success(), "tar -c {label}");
        let mut best = [Duration::MAX; 3];
        let mut disk = [0u64; 3];
        for _ in 0..reps {
            for (i, tool) in ["file", "stream", "tar"].iter().enumerate() {
                let out = dir.join(format!("out-sparse-{tool}"));
                let (t, _) = run(tool, &archive, &out);
                best[i] = best[i].min(t);
                disk[i] = allocated(&out);
                remove(&out);
            }
        }
        let s = |d: Duration| d.as_secs_f64();
        println!(
            "{:>7} {:>8.1} | {:>8.3}s {:>8.3}s {:>8.3}s | {:>7.2}x {:>7.2}x | {:>5.1} MB {:>5.1} MB",
            label,
            fs::metadata(&archive).expect("stat").len() as f64 / 1e6,
            s(best[0]),
            s(best[1]),
            s(best[2]),
            s(best[0]) / s(best[2]),
            s(best[1]) / s(best[2]),
            disk[0] as f64 / 1e6,
            disk[2] as f64 / 1e6,
        );
        fs::remove_file(&archive).expect("rm archive");
    }
    fs::remove_dir_all(&ws).expect("rm sparse workspace");
}

/// Bytes the files below `dir` take on disk (`st_blocks`), holes not counted.
fn allocated(dir: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let mut total = 0;
    for e in fs::read_dir(dir).expect("read_dir") {
        let e = e.expect("entry");
        let m = e.metadata().expect("stat");
        total += if m.is_dir() {
            allocated(&e.path())
        } else {
            m.blocks() * 512
        };
    }
    total
}

/// Bytes of the text the files' contents are cut from.
const TEXT: usize = 16 << 20;

/// Writes an archive of `files` regular files in 100-file directories whose sizes vary
/// (deterministically) around `total / files`; returns the archive size in bytes. Contents
/// are cut at random offsets from 16 MiB of random text over 16 letters, so that they
/// compress about as well as source code (gzip and zstd: roughly 2:1), not as a repeated
/// pattern would.
fn build(path: &Path, files: usize, total: usize) -> u64 {
    let f = fs::File::create(path).expect("create archive");
    let mut b = tar::Builder::new(std::io::BufWriter::new(f));
    let avg = total / files;
    let mut rng = Rng::new(1);
    let text: Vec<u8> = (0..TEXT).map(|_| b'a' + rng.below(16) as u8).collect();
    for i in 0..files {
        let size = rng.below(avg * 2);
        let at = rng.below(TEXT - size);
        let chunk = &text[at..];
        let mut h = tar::Header::new_gnu();
        h.set_size(size as u64);
        h.set_mode(0o644);
        h.set_mtime(1_700_000_000);
        h.set_entry_type(tar::EntryType::Regular);
        let name = format!("dir{:04}/file{:06}.dat", i / 100, i);
        b.append_data(&mut h, name, &chunk[..size]).expect("append");
    }
    let mut w = b.into_inner().expect("finish");
    w.flush().expect("flush");
    fs::metadata(path).expect("stat").len()
}

/// Runs one tool in a child process; returns wall time and (for ours) peak RSS in KiB.
fn run(tool: &str, archive: &Path, out: &Path) -> (Duration, u64) {
    let me = std::env::current_exe().expect("current_exe");
    let mut cmd = match tool {
        "file" | "stream" => {
            let mut c = Command::new(me);
            c.env("SNAPCONF_BENCH_CHILD", tool).arg(archive).arg(out);
            c
        }
        "tar" => {
            fs::create_dir(out).expect("mkdir");
            let mut c = Command::new("tar");
            c.arg("-xf").arg(archive).arg("-C").arg(out);
            c
        }
        _ => {
            fs::create_dir(out).expect("mkdir");
            let mut c = Command::new("python3");
            c.arg("-c")
                .arg("import sys, tarfile\nwith tarfile.open(sys.argv[1]) as t: t.extractall(sys.argv[2], filter='data')")
                .arg(archive)
                .arg(out);
            c
        }
    };
    let t0 = Instant::now();
    let output = cmd.output().expect("spawn");
    let t = t0.elapsed();
    assert!(
        output.status.success(),
        "{tool}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let hwm = String::from_utf8_lossy(&output.stdout)
        .trim()
        .parse()
        .unwrap_or(0);
    (t, hwm)
}

/// The child: hydrate, then print `VmHWM` in KiB.
fn child(mode: &str) {
    let args: Vec<String> = std::env::args().collect();
    let (archive, root) = (Path::new(&args[1]), Path::new(&args[2]));
    let f = fs::File::open(archive).expect("open archive");
    let r = if mode == "file" {
        hydrate_file(&f, root, &Policy::default())
    } else {
        hydrate(f, root, &Policy::default())
    };
    r.expect("hydrate");
    let status = fs::read_to_string("/proc/self/status").unwrap_or_default();
    let hwm = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .unwrap_or(0);
    println!("{hwm}");
}

/// Removes an extraction result (Python's and tar's trees are plain; ours too).
fn remove(p: &Path) {
    if p.exists() {
        fs::remove_dir_all(p).expect("remove output");
    }
}
