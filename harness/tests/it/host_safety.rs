//! No hostile archive ever touches the host.
//!
//! Every hostile archive here runs inside `fixtures/host_overlay.sh`: a private mount
//! namespace whose whole host is a copy-on-write overlay, with decoy files at the absolute
//! paths the attacks aim at, and `/dev` (device nodes of its own, the jails' `/dev/shm`),
//! `/proc` (read-only) private too. Whatever snapconf, a tool or an archive writes outside
//! the test's one shared directory lands in the overlay's upper layer, which the script
//! lists afterwards: the real host cannot be written, and a write past snapconf's
//! filesystem view is *seen* instead of lost.
//!
//! The extractors are two unprotected backends (`fixtures/unprotected/`): Python's
//! `extractall()` with no filter and a naive Node.js extractor. They run as plugged-in
//! backends, so through the view every backend gets (the whole host, read-only, around the
//! jail's decoys). The ground truth of "this archive escapes with that extractor" is the
//! extractor itself, run on the archive with no view at all inside the overlay: whatever it
//! wrote outside its root is an escape, and snapconf's replay of the same archive must
//! report it as `containment`.

use crate::support;

use snapconf_harness::fuzz::{attack_of, AttackClass};
use snapconf_harness::jail::view_layout::{VIEW_DECOYS, VIEW_ROOT};
use snapconf_tarbytes::Rng;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use support::skip::skip;

pub(crate) fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// The two unprotected backends: (description file, extractor name, ground-truth command
/// words before `ROOT ARCHIVE`).
fn backends() -> Vec<(PathBuf, &'static str, Vec<String>)> {
    let u = fixtures().join("unprotected");
    vec![
        (
            u.join("extractall.toml"),
            "unprotected-extractall",
            vec![
                "python3".into(),
                "-I".into(),
                "-B".into(),
                u.join("extractall.py").display().to_string(),
            ],
        ),
        (
            u.join("naive_extract.toml"),
            "unprotected-node",
            vec![
                "node".into(),
                u.join("naive_extract.js").display().to_string(),
            ],
        ),
    ]
}

/// Whether this test can run here: root (the overlay needs it), bubblewrap, python3 and
/// node; else reports the skip.
pub(crate) fn can_run(test: &str) -> bool {
    if !rustix::process::geteuid().is_root() {
        skip(
            &format!("{test}: the host overlay needs root"),
            "run the tests as root (CI does)",
        );
        return false;
    }
    if !crate::support::view_or_skip(&format!("{test}: ")) {
        return false;
    }
    for (tool, hint) in [
        ("python3", "apt-get install python3"),
        ("node", "apt-get install nodejs"),
    ] {
        let ok = Command::new(tool)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        if !ok {
            skip(&format!("{test}: `{tool}` is not installed"), hint);
            return false;
        }
    }
    true
}

/// A scratch directory under `/dev/shm`, removed on drop: the one host directory the
/// overlay shares (see `host_overlay.sh`).
pub(crate) fn shm_dir(tag: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("snapconf-hostsafety-{tag}-"))
        .tempdir_in("/dev/shm")
        .expect("a directory under /dev/shm")
}

/// One entry of the overlay's upper layer: kind (`f`, `d`, `l`, …) and sha256 for files.
pub(crate) type Upper = BTreeMap<String, (String, String)>;

/// Run `script` (sh) inside the host overlay with the view's decoys placed at their
/// absolute paths; its exit code and the upper layer afterwards.
pub(crate) fn in_overlay(work: &Path, script: &str) -> (i32, Upper) {
    let decoys = work.join("decoys.txt");
    let mut list = String::new();
    for d in VIEW_DECOYS {
        list.push_str(d);
        list.push('\n');
    }
    std::fs::write(&decoys, list).expect("decoy list");
    let listing = work.join("upper.txt");
    let status = Command::new(fixtures().join("host_overlay.sh"))
        .arg(&decoys)
        .arg(&listing)
        .arg(work)
        .arg("--")
        .args(["sh", "-c", script])
        .status()
        .expect("host_overlay.sh runs");
    let bytes = std::fs::read(&listing).expect("the upper layer's listing");
    let fields: Vec<String> = bytes
        .split(|b| *b == 0)
        .map(snapconf_harness::model::bytes::escape)
        .collect();
    let mut upper = Upper::new();
    for entry in fields.chunks(3).filter(|c| c.len() == 3) {
        let path = entry[1].trim_start_matches('.').to_string();
        upper.insert(path, (entry[0].clone(), entry[2].clone()));
    }
    (status.code().unwrap_or(-1), upper)
}

/// What the upper layer holds beyond how the overlay starts (each decoy, unchanged, and
/// its directories): `<kind> <path>` lines, a changed decoy among them.
pub(crate) fn decoys_only(upper: &Upper) -> Vec<String> {
    use sha2::Digest;
    let mut dirs: Vec<String> = Vec::new();
    for d in VIEW_DECOYS {
        let mut p = Path::new(d).parent();
        while let Some(a) = p.filter(|a| *a != Path::new("/")) {
            dirs.push(a.display().to_string());
            p = a.parent();
        }
    }
    let untouched = |path: &str, sum: &str| {
        VIEW_DECOYS.contains(&path)
            && sha2::Sha256::digest(format!("decoy {path}\n"))
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect::<String>()
                == sum
    };
    upper
        .iter()
        .filter(|(path, (kind, sum))| {
            !(kind == "d" && dirs.contains(path) || kind == "f" && untouched(path, sum))
        })
        .map(|(p, (k, _))| format!("{k} {p}"))
        .collect()
}

/// Every escaping attack class of the generator, a few draws each, as archive files in
/// `dir`: `<class>-<n>.tar`.
fn attack_archives(dir: &Path, per_class: u64) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for class in AttackClass::ALL.into_iter().filter(|c| c.escapes()) {
        for n in 0..per_class {
            let mut rng = Rng::new(1000 + n);
            let (bytes, _) = attack_of(class, &mut rng);
            let p = dir.join(format!("{}-{n}.tar", class.id()));
            std::fs::write(&p, bytes).expect("archive");
            out.push(p);
        }
    }
    out
}

/// The archives of the reported escape, by name: members hidden in the payload of a
/// directory, a character device and a hardlink header (whose size field Python, GNU tar,
/// bsdtar, BusyBox and naive JavaScript loops ignore, reading the payload as headers), a
/// PAX `path` with a NUL (`x\0/../..//…/decoy`: a check that stops at the NUL sees `x`,
/// Node's `path.join` keeps the rest), and `////abs` names.
fn named_archives(dir: &Path) -> Vec<PathBuf> {
    use snapconf_tarbytes::raw::{checksum_sum, header, RawHeader, RawTar, CHKSUM};
    let deep = format!("{}etc/passwd", "../".repeat(7));
    let smuggled = |flag: u8, link: &[u8]| {
        let data = b"root::0:0:pwned:/:/bin/sh\n";
        let mut inner = header(b'0', deep.as_bytes(), b"", data.len() as u64, 0o644).to_vec();
        inner.extend_from_slice(data);
        inner.resize(1024, 0);
        let mut t = RawTar::new();
        t.push(flag, b"hidden", link, &inner, 0o755);
        t.finish()
    };
    let mut nul = RawTar::new();
    nul.pax(&[("path", b"x\0/../..//..//..//..//decoy")])
        .file("x", b"pwned\n");
    let mut abs = RawTar::new();
    abs.file("////decoy", b"pwned\n")
        .file("////etc/passwd", b"pwned\n")
        .symlink("up", "////out")
        .file("up/target", b"pwned\n");
    // The hostile review's three ways past the conservative rule: legacy `.lzma` (no
    // magic), a zstd skippable frame over a plain tar with lenient checksum fields, and
    // PAX records whose last byte Python drops (`15 linkpath=..Z` is `..`).
    let lzma_alone = {
        use liblzma::stream::{Action, LzmaOptions, Stream};
        let mut t = RawTar::new();
        t.file("/etc/decoy", b"pwned\n").file("/decoy", b"pwned\n");
        let tar = t.finish();
        let opts = LzmaOptions::new_preset(6).expect("preset");
        let mut s = Stream::new_lzma_encoder(&opts).expect("encoder");
        let mut out = Vec::with_capacity(tar.len() + 4096);
        s.process_vec(&tar, &mut out, Action::Finish).expect("lzma");
        out
    };
    let skippable = {
        let mut t = RawTar::new();
        t.file("a", b"x\n")
            .file("/etc/decoy", b"pwned\n")
            .file("/decoy", b"pwned\n");
        let mut tar = t.finish();
        let len = u32::try_from(tar.len() - 8).expect("small");
        tar[..4].copy_from_slice(&[0x50, 0x2a, 0x4d, 0x18]);
        tar[4..8].copy_from_slice(&len.to_le_bytes());
        for at in (0..tar.len()).step_by(512) {
            if tar[at..at + 512].iter().all(|&b| b == 0) {
                continue;
            }
            let block = &mut tar[at..at + 512];
            let sum = checksum_sum(block).expect("a whole block");
            RawHeader(block).set_raw(CHKSUM, format!("\x1c{sum:06o}\0").as_bytes());
        }
        tar.extend_from_slice(&zstd::encode_all(&[0u8; 10240][..], 3).expect("zstd"));
        tar
    };
    let pax_last_byte = {
        let mut t = RawTar::new();
        let mut name = String::from("a");
        for _ in 0..10 {
            let body = b"15 linkpath=..Z";
            t.block(&header(b'x', b"pax", b"", body.len() as u64, 0o644))
                .data(body);
            t.push(b'2', name.as_bytes(), b"x", b"", 0o777);
            name.push_str("/b");
        }
        t.file(&format!("{name}/etc/decoy"), b"pwned\n");
        t.finish()
    };
    let mut out = Vec::new();
    for (name, bytes) in [
        ("lzma-alone", lzma_alone),
        ("zstd-skippable-lenient-checksum", skippable),
        ("pax-record-last-byte", pax_last_byte),
        ("smuggle-in-dir", smuggled(b'5', b"")),
        ("smuggle-in-chr", smuggled(b'3', b"")),
        ("smuggle-in-lnk", smuggled(b'1', b"a")),
        ("pax-path-nul", nul.finish()),
        ("slashes-abs", abs.finish()),
    ] {
        let p = dir.join(format!("{name}.tar"));
        std::fs::write(&p, bytes).expect("archive");
        out.push(p);
    }
    out
}

/// A corpora directory in `work` with the repository's seed archives and no adversarial
/// ones: what a seeds-only session draws from.
pub(crate) fn seeds_only_corpora(work: &Path) -> PathBuf {
    let corpora = work.join("corpora");
    std::fs::create_dir_all(corpora.join("seeds")).expect("corpora");
    std::fs::create_dir_all(corpora.join("adversarial")).expect("corpora");
    let seeds = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpora/seeds");
    for e in std::fs::read_dir(&seeds).expect("seeds").flatten() {
        std::fs::copy(e.path(), corpora.join("seeds").join(e.file_name())).expect("seed");
    }
    corpora
}

pub(crate) fn sh_quote(p: &Path) -> String {
    format!("'{}'", p.display().to_string().replace('\'', "'\\''"))
}

/// Property: a whole-host view (what a plugged-in backend gets) runs Python and Node as
/// they are installed, shows host files read-only, and takes a write aimed at a decoy
/// (`/etc/passwd`, `/decoy`) or a new path (`/etc/new`) into the jail, never the host.
#[test]
fn a_whole_host_view_runs_interpreters_and_writes_only_the_jail() {
    if !can_run("a_whole_host_view_runs_interpreters_and_writes_only_the_jail") {
        return;
    }
    let work = shm_dir("view");
    let marker = format!("snapconf-view-probe-{}", std::process::id());
    let script = format!(
        "set -e
python3 -I -c 'print(1)' >/dev/null
node -e 'process.exit(0)'
echo pwned >/etc/passwd
echo pwned >/decoy
echo pwned >/etc/{marker}
if echo pwned 2>/dev/null >/usr/{marker}; then echo 'wrote /usr'; exit 9; fi
if echo pwned 2>/dev/null >/etc/hostname; then echo 'wrote /etc/hostname'; exit 9; fi
cat /etc/os-release >/dev/null
"
    );
    let jail = snapconf_harness::jail::Jail::new(Some(work.path())).expect("jail");
    let view = snapconf_harness::jail::view::View::prepare(
        &jail,
        &[PathBuf::from(snapconf_producers::process::view::WHOLE_HOST)],
        &[],
    )
    .expect("view");
    assert!(
        !view.prefix().iter().any(|a| a == "CAP_DAC_READ_SEARCH"),
        "no tool may open inodes by handle past the binds"
    );
    let scratch = shm_dir("view-scratch");
    let mut cmd = Command::new("sh");
    cmd.args(["-c", &script]);
    let out = snapconf_producers::process::view::with_view(view.prefix().to_vec(), || {
        snapconf_producers::process::run::run_with_timeout(
            &mut cmd,
            scratch.path(),
            std::time::Duration::from_secs(30),
        )
    })
    .expect("runs");
    assert!(
        matches!(out, snapconf_producers::Outcome::Success),
        "{out:?}"
    );
    let at = |p: &str| jail.path().join(p.trim_start_matches('/'));
    assert_eq!(
        std::fs::read_to_string(at("/etc/passwd")).expect("decoy"),
        "pwned\n"
    );
    assert_eq!(
        std::fs::read_to_string(at("/decoy")).expect("decoy"),
        "pwned\n"
    );
    assert!(at(&format!("/etc/{marker}")).is_file());
    assert!(
        !Path::new("/etc").join(&marker).exists() && !Path::new("/usr").join(&marker).exists(),
        "the host was written"
    );
    assert!(at(VIEW_ROOT).is_dir());
}

/// Property: every escaping shape of the attack generator (absolute names, `..`, links,
/// hardlinks, size-smuggled headers, PAX globals, …), run through two unprotected
/// backends by `snapconf fuzz --replay`, writes nothing outside the jails, and every
/// archive that escapes when the same extractor runs it with no view is reported as a
/// `containment` finding by the replay.
#[test]
fn every_escape_shape_is_containment_and_never_reaches_the_host() {
    if !can_run("every_escape_shape_is_containment_and_never_reaches_the_host") {
        return;
    }
    let work = shm_dir("replay");
    let mut archives = attack_archives(work.path(), 2);
    archives.extend(named_archives(work.path()));
    let snapconf = support::snapconf_bin();
    let ws = Path::new("/").join(VIEW_ROOT);
    for (toml, name, truth) in backends() {
        let out = work.path().join(name);
        std::fs::create_dir(&out).expect("out dir");
        // Ground truth first, with no view: in an overlay of its own per archive, the prior
        // the fuzzer hydrates over, then the extractor; whatever it left in the upper
        // layer outside the root and the decoys is where it escaped to.
        let mut truth_of = BTreeMap::new();
        for a in &archives {
            let script = format!(
                "rm -rf {ws} && mkdir -p {ws}/d && printf 'old a\\n' >{ws}/a && printf 'old d/f\\n' >{ws}/d/f && ln -s ../decoy {ws}/l
TMPDIR={tmp} timeout 20 {truth} {ws} {arc} >/dev/null 2>&1
exit 0
",
                ws = ws.display(),
                tmp = work.path().display(),
                truth = truth.iter().map(|w| sh_quote(Path::new(w))).collect::<Vec<_>>().join(" "),
                arc = sh_quote(a),
            );
            let (_, upper) = in_overlay(work.path(), &script);
            let ws_text = ws.display().to_string();
            let escapes: Vec<String> = decoys_only(&upper)
                .into_iter()
                .filter(|e| {
                    let path = e.split_once(' ').map_or("", |(_, p)| p);
                    !(path == ws_text
                        || path.starts_with(&format!("{ws_text}/"))
                        || (e.starts_with("d ") && ws.starts_with(path)))
                })
                .collect();
            truth_of.insert(a.clone(), escapes);
        }
        // Then the replays, in a fresh overlay: each writes its verdict to `<archive>.replay`.
        let mut script = String::from("set -u\n");
        for a in &archives {
            let stem = a.file_stem().and_then(|s| s.to_str()).expect("name");
            script.push_str(&format!(
                "TMPDIR={tmp} {bin} fuzz --backend {toml} --extractor {name} --replay {arc} >{base}.replay 2>&1; echo \"exit $?\" >>{base}.replay\n",
                tmp = work.path().display(),
                bin = sh_quote(&snapconf),
                toml = sh_quote(&toml),
                arc = sh_quote(a),
                base = sh_quote(&out.join(stem)),
            ));
        }
        let (_, upper) = in_overlay(work.path(), &script);
        assert_eq!(
            decoys_only(&upper),
            Vec::<String>::new(),
            "{name}: the replays wrote outside the jails"
        );
        let mut escaped = 0;
        for a in &archives {
            let stem = a.file_stem().and_then(|s| s.to_str()).expect("name");
            let replay =
                std::fs::read_to_string(out.join(format!("{stem}.replay"))).expect("replay");
            assert!(
                !replay.contains("could reach past the jail"),
                "{name} {stem}: a backend in a view runs every archive: {replay}"
            );
            let outside = &truth_of[a];
            if !outside.is_empty() {
                escaped += 1;
                assert!(
                    replay.contains("reproduces: containment") && replay.ends_with("exit 1\n"),
                    "{name} {stem} wrote {outside:?} with no view, but the replay says: {replay}"
                );
            }
        }
        assert!(
            escaped > 0,
            "{name}: no archive escaped at all (the ground truth is broken)"
        );
        eprintln!("{name}: {escaped} of {} archives escape with no view; every one reported as containment", archives.len());
    }
}

/// Property: a 60 s seeds-only fuzz session of each unprotected backend (the session that
/// overwrote a host's `/etc/passwd`) runs every archive it draws in the view (none skipped
/// as unsafe for the host), reports the escapes as `containment`, and writes nothing
/// outside its jails and its report.
#[test]
fn a_seeds_only_session_of_an_unprotected_backend_leaves_the_host_untouched() {
    if !can_run("a_seeds_only_session_of_an_unprotected_backend_leaves_the_host_untouched") {
        return;
    }
    let secs = std::env::var("SNAPCONF_HOST_SAFETY_SECS").unwrap_or_else(|_| "60".into());
    let work = shm_dir("session");
    let corpora = seeds_only_corpora(work.path());
    let snapconf = support::snapconf_bin();
    for (toml, name, _) in backends() {
        let report = work.path().join(format!("report-{name}"));
        let log = work.path().join(format!("{name}.log"));
        let script = format!(
            "TMPDIR={tmp} {bin} fuzz --backend {toml} --extractor {name} --time {secs} --seed 3 --corpora {corpora} --report-dir {report} >{log} 2>&1; echo \"exit $?\" >>{log}",
            tmp = work.path().display(),
            bin = sh_quote(&snapconf),
            toml = sh_quote(&toml),
            corpora = sh_quote(&corpora),
            report = sh_quote(&report),
            log = sh_quote(&log),
        );
        let (_, upper) = in_overlay(work.path(), &script);
        let log = std::fs::read_to_string(&log).expect("log");
        assert_eq!(
            decoys_only(&upper),
            Vec::<String>::new(),
            "{name}: the session wrote outside its jails: {log}"
        );
        assert!(
            log.ends_with("exit 1\n"),
            "{name}: findings expected: {log}"
        );
        let summary: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(report.join("fuzz.json")).expect("fuzz.json"),
        )
        .expect("fuzz.json parses");
        assert_eq!(
            summary["skipped_unsafe_for_host"], 0,
            "{name}: a backend in a view runs every archive: {log}"
        );
        assert!(
            summary["accepted"].as_u64() > Some(0),
            "{name}: the backend ran and accepted archives: {log}"
        );
        let findings = summary["findings"].as_array().cloned().unwrap_or_default();
        assert!(
            findings.iter().any(|f| f["check"] == "containment"),
            "{name}: the escapes are containment findings: {log}"
        );
    }
}

/// Property: a backend in worker mode is fuzzed through a worker process of its own in
/// each fuzz worker's view, so it gets every archive: a replay of an escaping archive runs
/// (the escapes are `containment`) and a seeds-only session skips nothing; with
/// `--no-view` (the shared worker, outside any view) it gets only archives that cannot
/// reach past the jail: the replay is refused before it runs, naming the rule, and the
/// session skips and counts the rest. Neither writes anything outside its jails.
#[test]
fn a_worker_backend_gets_every_archive_in_the_view_and_only_host_safe_ones_without() {
    if !can_run("a_worker_backend_gets_every_archive_in_the_view_and_only_host_safe_ones_without") {
        return;
    }
    let work = shm_dir("worker");
    let toml = fixtures().join("unprotected/extractall_worker.toml");
    let name = "unprotected-worker";
    let archives = named_archives(work.path());
    let corpora = seeds_only_corpora(work.path());
    let bin = sh_quote(&support::snapconf_bin());
    let mut script = String::new();
    for (suffix, flag) in [("view", ""), ("noview", "--no-view")] {
        for a in &archives {
            script.push_str(&format!(
                "TMPDIR={tmp} {bin} fuzz --backend {toml} --extractor {name} {flag} --replay {arc} >{arc}.{suffix} 2>&1; echo \"exit $?\" >>{arc}.{suffix}\n",
                tmp = work.path().display(),
                toml = sh_quote(&toml),
                arc = sh_quote(a),
            ));
        }
        script.push_str(&format!(
            "TMPDIR={tmp} {bin} fuzz --backend {toml} --extractor {name} {flag} --time 10 --seed 5 --corpora {corpora} --report-dir {tmp}/report-{suffix} >{tmp}/session-{suffix}.log 2>&1\n",
            tmp = work.path().display(),
            toml = sh_quote(&toml),
            corpora = sh_quote(&corpora),
        ));
    }
    let (_, upper) = in_overlay(work.path(), &script);
    assert_eq!(
        decoys_only(&upper),
        Vec::<String>::new(),
        "a worker backend wrote outside its jails"
    );
    let mut contained = 0;
    for a in &archives {
        let read = |suffix: &str| {
            std::fs::read_to_string(format!("{}.{suffix}", a.display())).expect("replay")
        };
        let (view, noview) = (read("view"), read("noview"));
        assert!(
            !view.contains("could reach past the jail")
                && (view.ends_with("exit 0\n") || view.ends_with("exit 1\n")),
            "{}: in the view every archive runs: {view}",
            a.display()
        );
        contained += usize::from(view.contains("reproduces: containment"));
        // Not run for the host's sake: nothing ran (3), not an internal error (4).
        assert!(
            noview.contains("could reach past the jail") && noview.ends_with("exit 3\n"),
            "{}: {noview}",
            a.display()
        );
    }
    assert!(contained > 0, "the escapes are containment in the view");
    let summary = |suffix: &str| -> (serde_json::Value, String) {
        let log = std::fs::read_to_string(work.path().join(format!("session-{suffix}.log")))
            .unwrap_or_default();
        let path = work.path().join(format!("report-{suffix}/fuzz.json"));
        let text = std::fs::read_to_string(&path).expect("fuzz.json");
        (serde_json::from_str(&text).expect("fuzz.json parses"), log)
    };
    let (view, log) = summary("view");
    assert_eq!(view["skipped_unsafe_for_host"], 0, "{log}");
    assert!(
        view["server_starts"].as_u64() > Some(0),
        "a worker per fuzz worker: {log}"
    );
    assert!(view["executions"].as_u64() > Some(0), "{log}");
    let (noview, log) = summary("noview");
    assert!(
        noview["skipped_unsafe_for_host"].as_u64() > Some(0),
        "escaping archives are skipped and counted: {log}"
    );
    assert!(noview["executions"].as_u64() > Some(0), "{log}");
}

/// A backend step that swaps every file in the scratch it runs in (the `exclude` file,
/// and what else snapconf keeps there) for a link to a host path, a FIFO or a device node:
/// snapconf writes and reads there from outside the view, so following the link would
/// write or read the host, and opening the node would open a host device. Nothing outside
/// the jails is written, and the step's outcome is read back all the same (its reaper's
/// report has no name in the scratch): the replay ends as a plain acceptance.
#[test]
fn a_backend_that_swaps_its_scratch_files_writes_nothing_on_the_host() {
    if !can_run("a_backend_that_swaps_its_scratch_files_writes_nothing_on_the_host") {
        return;
    }
    let work = shm_dir("swap");
    let archive = work.path().join("a.tar");
    std::fs::write(
        &archive,
        support::raw_archive(&[support::RawMember {
            flag: b'0',
            name: b"f",
            link: b"",
            data: b"x\n",
        }]),
    )
    .expect("archive");
    let kinds = [
        ("link", "ln -s \"/root/snapconf-swapped-$f\" \"$f\""),
        ("fifo", "mkfifo \"$f\""),
        ("device", "mknod \"$f\" c 1 3"),
    ];
    let mut script = String::new();
    for (kind, make) in kinds {
        let step = format!(
            "for f in * .[!.]*; do [ -e \"$f\" ] || [ -L \"$f\" ] || continue; rm -f \"$f\"; {make}; done; \
             tar -xf \"$2\" -C \"$1\""
        );
        let toml = work.path().join(format!("{kind}.toml"));
        std::fs::write(
            &toml,
            format!(
                "name = \"swap\"\nmode = \"command\"\ntimeout = 20\n\
                 capture = [\"tar\", \"-cf\", \"{{archive}}\", \"-C\", \"{{root}}\", \".\"]\n\
                 validate = [\"sh\", \"-c\", {step:?}, \"sh\", \"{{root}}\", \"{{archive}}\"]\n\
                 hydrate = [\"sh\", \"-c\", {step:?}, \"sh\", \"{{root}}\", \"{{archive}}\"]\n\
                 version = [\"tar\", \"--version\"]\n"
            ),
        )
        .expect("toml");
        script.push_str(&format!(
            "TMPDIR={tmp} {bin} fuzz --backend {toml} --extractor swap --replay {arc} >{log} 2>&1; echo \"exit $?\" >>{log}\n",
            tmp = work.path().display(),
            bin = sh_quote(&support::snapconf_bin()),
            toml = sh_quote(&toml),
            arc = sh_quote(&archive),
            log = sh_quote(&work.path().join(format!("{kind}.log"))),
        ));
    }
    let (_, upper) = in_overlay(work.path(), &script);
    let logs: Vec<(&str, String)> = kinds
        .iter()
        .map(|(kind, _)| {
            let log = work.path().join(format!("{kind}.log"));
            (*kind, std::fs::read_to_string(log).expect("log"))
        })
        .collect();
    assert_eq!(
        decoys_only(&upper),
        Vec::<String>::new(),
        "the host was written through a swapped scratch file: {logs:#?}"
    );
    for (kind, log) in &logs {
        assert!(
            log.ends_with("exit 0\n") && !log.contains("reaper"),
            "{kind}: the step's outcome is read back: {log}"
        );
    }
}

/// A persistent worker runs on between requests in its view, which can write the jail,
/// while snapconf writes into that jail from outside the view (the prior it puts back in
/// the root, the decoys a restore recreates, the decoy directories planted for an archive
/// whose link leaves the root: a seed `d/`, `d -> ../absent/deep`, `d/pwned` is added for
/// them): a hostile worker that keeps planting links to host paths at those names
/// (`racing_worker.py`) must not get a single write onto the host, and the session runs on
/// (a write that meets a planted link fails, and the jail is laid out anew or the decoy
/// directory is not planted).
#[test]
fn a_worker_racing_snapconfs_writes_into_its_jail_writes_nothing_on_the_host() {
    if !can_run("a_worker_racing_snapconfs_writes_into_its_jail_writes_nothing_on_the_host") {
        return;
    }
    let work = shm_dir("race");
    let toml = fixtures().join("unprotected/racing_worker.toml");
    let corpora = seeds_only_corpora(work.path());
    let poison = support::raw_archive(&[
        support::RawMember {
            flag: b'5',
            name: b"d/",
            link: b"",
            data: b"",
        },
        support::RawMember {
            flag: b'2',
            name: b"d",
            link: b"../absent/deep",
            data: b"",
        },
        support::RawMember {
            flag: b'0',
            name: b"d/pwned",
            link: b"",
            data: b"pwned\n",
        },
    ]);
    std::fs::write(corpora.join("seeds/planted-decoy.tar"), poison).expect("seed");
    let (summary, log) = overlay_session(
        work.path(),
        &toml,
        "racing-worker",
        &corpora,
        "--time 10 --seed 5",
        "snapconf wrote the host through a link the worker planted in its jail",
    );
    assert!(
        summary["executions"].as_u64() > Some(0),
        "the session ran through the worker's server: {log}"
    );
    assert!(summary["server_starts"].as_u64() > Some(0), "{log}");
}

/// Property: a decoy directory the fuzzer plants for an archive never hides that archive's
/// own escape. `e -> ../out`, then the file `e/x`, then `e/x/y` (or `e/x/y/z`): the naive
/// Node backend writes `e/x` through the link into the view's `/home/user/ws/out`, a
/// `containment` finding; a decoy directory planted at `../out/x` for `e/x/y` would make
/// that write fail (`EISDIR`, and the backend stops) with nothing outside changed. The
/// same for `e/x/q/..` alone, which is `e/x` to Node's `path.join` while its parent
/// `e/x/q` is where a decoy directory would go.
#[test]
fn a_planted_decoy_never_takes_a_members_own_write() {
    if !can_run("a_planted_decoy_never_takes_a_members_own_write") {
        return;
    }
    let work = shm_dir("masked");
    let toml = fixtures().join("unprotected/naive_extract.toml");
    let cases: [(&str, &[&[u8]]); 3] = [
        ("at", &[b"e/x", b"e/x/y"]),
        ("under", &[b"e/x", b"e/x/y/z"]),
        ("folded", &[b"e/x/q/.."]),
    ];
    let mut script = String::new();
    for (tag, files) in cases {
        let mut members = vec![support::RawMember {
            flag: b'2',
            name: b"e",
            link: b"../out",
            data: b"",
        }];
        members.extend(files.iter().map(|name| support::RawMember {
            flag: b'0',
            name,
            link: b"",
            data: b"pwned\n",
        }));
        let bytes = support::raw_archive(&members);
        let arc = work.path().join(format!("{tag}.tar"));
        std::fs::write(&arc, bytes).expect("archive");
        script.push_str(&format!(
            "TMPDIR={tmp} {bin} fuzz --backend {toml} --extractor unprotected-node --replay {arc} >{arc}.replay 2>&1; echo \"exit $?\" >>{arc}.replay\n",
            tmp = work.path().display(),
            bin = sh_quote(&support::snapconf_bin()),
            toml = sh_quote(&toml),
            arc = sh_quote(&arc),
        ));
    }
    let (_, upper) = in_overlay(work.path(), &script);
    assert_eq!(
        decoys_only(&upper),
        Vec::<String>::new(),
        "nothing past the view"
    );
    for (tag, _) in cases {
        let out = std::fs::read_to_string(work.path().join(format!("{tag}.tar.replay")))
            .expect("replay output");
        assert!(
            out.contains("reproduces: containment")
                && out.contains("home/user/ws/out")
                && out.ends_with("exit 1\n"),
            "{tag}: the write of `e/x` through `e -> ../out` is hidden: {out}"
        );
    }
}

/// `snapconf fuzz --backend toml --extractor extractor --corpora corpora ARGS` in the host
/// overlay, in `work` (its `TMPDIR`, log and report). Asserts that the host was not written
/// (`what` says how, with the session's log); returns the session's `fuzz.json` and log.
fn overlay_session(
    work: &Path,
    toml: &Path,
    extractor: &str,
    corpora: &Path,
    args: &str,
    what: &str,
) -> (serde_json::Value, String) {
    let script = format!(
        "TMPDIR={tmp} {bin} fuzz --backend {toml} --extractor {extractor} {args} --corpora {corpora} --report-dir {tmp}/report >{tmp}/session.log 2>&1; echo \"exit $?\" >>{tmp}/session.log",
        tmp = work.display(),
        bin = sh_quote(&support::snapconf_bin()),
        toml = sh_quote(toml),
        corpora = sh_quote(corpora),
    );
    let (_, upper) = in_overlay(work, &script);
    let log = std::fs::read_to_string(work.join("session.log")).unwrap_or_default();
    assert_eq!(decoys_only(&upper), Vec::<String>::new(), "{what}: {log}");
    let text = std::fs::read_to_string(work.join("report/fuzz.json"))
        .unwrap_or_else(|e| panic!("{what}: fuzz.json: {e}: {log}"));
    let summary: serde_json::Value = serde_json::from_str(&text).expect("fuzz.json parses");
    (summary, log)
}

/// [`overlay_session`] of the worker backend `unprotected/<toml>` of the fixtures over 8
/// archives of the seeds-only corpora (seed 5, `-j 1`, no shrinking), in a fresh `/dev/shm`
/// directory tagged `tag`; asserts that the 8 archives ran and returns the `fuzz.json`.
fn overlay_fuzz(tag: &str, toml: &str, extractor: &str) -> serde_json::Value {
    let work = shm_dir(tag);
    let corpora = seeds_only_corpora(work.path());
    let (summary, log) = overlay_session(
        work.path(),
        &fixtures().join("unprotected").join(toml),
        extractor,
        &corpora,
        "--runs 8 --time 300 --seed 5 -j 1 --shrink-runs 0",
        extractor,
    );
    assert_eq!(
        summary["executions"].as_u64(),
        Some(8),
        "{extractor}: {log}"
    );
    summary
}

/// A persistent worker, the first or a spare, runs on between requests in its view and may
/// change its jail while it waits, after one request was judged and before the next one's
/// snapshot (`idle_planting_worker.py`: a file in the jail's `/tmp` each time, or the
/// prior's file `a` rewritten in the root). Such a jail is not trusted: every request's
/// observation before is checked against the jail as laid out and the prior as written,
/// and a changed one is dropped and laid out anew (`view_rebuilds`), never judged against
/// as if nothing had happened; the same worker changing nothing keeps its jail, and the
/// host is never written.
#[test]
fn a_worker_that_changes_its_jail_between_requests_is_not_trusted() {
    if !can_run("a_worker_that_changes_its_jail_between_requests_is_not_trusted") {
        return;
    }
    let session = |name: &str| {
        let summary = overlay_fuzz(
            &format!("idle-{name}"),
            &format!("idle_{name}_worker.toml"),
            &format!("idle-{name}"),
        );
        (
            summary["view_rebuilds"].as_u64().unwrap_or(0),
            summary.to_string(),
        )
    };
    // The worker changes its jail from a thread that must run in the few milliseconds
    // between snapconf's reset and its next snapshot; on a loaded machine it may not get
    // the CPU in any of a session's 7 windows and change nothing (seen: `prior`, 0
    // rebuilds, 0 restores, no finding). A session is tried up to 3 times; a snapconf that
    // trusted a changed jail fails all 3.
    for name in ["planting", "prior"] {
        let mut tried = Vec::new();
        for _ in 0..3 {
            let (rebuilt, summary) = session(name);
            if rebuilt >= 1 {
                break;
            }
            tried.push(summary);
        }
        assert!(
            tried.len() < 3,
            "{name}: a jail changed between requests was trusted, 3 sessions: {tried:#?}"
        );
    }
    let (rebuilt, summary) = session("quiet");
    assert_eq!(rebuilt, 0, "the quiet worker keeps its jail: {summary}");
}

/// A worker that answers `stalled` is kept (a `hang` told at once, not killed), so it may
/// go on and change its jail after its answer: `stall_liar_worker.py` lies about a stall on
/// every archive and writes `/tmp/stall-planted-N` in its view once the root is reset. Every
/// execution is a hang, the change is seen (before the next request, and the jail laid out
/// anew, as for any server that changes its jail while it waits; or in a later request,
/// and restored), and the host is never written.
#[test]
fn a_worker_that_answers_stalled_and_writes_later_is_not_trusted() {
    if !can_run("a_worker_that_answers_stalled_and_writes_later_is_not_trusted") {
        return;
    }
    let summary = overlay_fuzz("stall", "stall_liar_worker.toml", "stall-liar");
    let n = |k: &str| summary[k].as_u64().unwrap_or(0);
    let hung: u64 = summary["hung_by"]
        .as_object()
        .map(|m| m.values().filter_map(serde_json::Value::as_u64).sum())
        .unwrap_or(0);
    assert_eq!(hung, 8, "every stalled answer is a hang: {summary}");
    // Each plant lands between requests (the jail is laid out anew) or, on a loaded
    // machine, during a later request (a change outside the root, restored): either way
    // it is seen.
    assert!(
        n("view_rebuilds") + n("view_restores") >= 1,
        "a jail changed after a stalled answer was trusted: {summary}"
    );
}

/// A spare (or any server) may die while it waits for a request: it is found dead before
/// the request and replaced, so the archive it would have got is not refused or hung on
/// its account (`spare_dies_worker.py` accepts every archive; its spares kill themselves
/// while they wait, and each worker hangs on its third request so that spares are taken).
#[test]
fn a_server_that_died_while_waiting_is_not_sent_an_archive() {
    if !can_run("a_server_that_died_while_waiting_is_not_sent_an_archive") {
        return;
    }
    let summary = overlay_fuzz("dies", "spare_dies_worker.toml", "spare-dies");
    let n = |k: &str| summary[k].as_u64().unwrap_or(0);
    assert_eq!(
        (n("accepted"), n("refused")),
        (8, 0),
        "an archive was charged with a server's death while it waited: {summary}"
    );
}
