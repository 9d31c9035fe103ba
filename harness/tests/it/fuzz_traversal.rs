//! The `traversal` check end to end: a lenient unprotected backend (tarfile with no filter,
//! warning about a member it cannot write and succeeding anyway, as node-tar 6.1.0 does;
//! `fixtures/unprotected/lenient_extract.py`) replays the cache-poisoning shape aimed at a
//! place the view's layout does not hold, where the fuzzer plants a decoy directory for the
//! archive so that the write is seen, and a short seeds-only session of it hits
//! `traversal`. Every run is inside `fixtures/host_overlay.sh`, as in `host_safety.rs`.

use crate::host_safety::{
    can_run, decoys_only, fixtures, in_overlay, seeds_only_corpora, sh_quote, shm_dir,
};
use crate::support;
use std::io::Write;
use std::path::Path;

/// The lenient backend's description file and extractor name.
fn lenient() -> (std::path::PathBuf, &'static str) {
    (
        fixtures().join("unprotected/lenient_extract.toml"),
        "unprotected-lenient",
    )
}

/// One member: kind (`d` directory, `l` symlink, `f` a file), name, link target.
type Spec<'a> = (char, &'a str, &'a str);

/// A tar of [`Spec`] members.
fn archive(path: &Path, members: &[Spec<'_>]) {
    let mut b = tar::Builder::new(Vec::new());
    for (kind, name, target) in members {
        let mut h = tar::Header::new_gnu();
        h.set_mode(0o755);
        match kind {
            'd' => {
                h.set_entry_type(tar::EntryType::Directory);
                h.set_size(0);
                b.append_data(&mut h, name, std::io::empty()).expect("dir");
            }
            'l' => {
                h.set_entry_type(tar::EntryType::Symlink);
                h.set_size(0);
                b.append_link(&mut h, name, target).expect("symlink");
            }
            _ => {
                h.set_entry_type(tar::EntryType::Regular);
                h.set_size(6);
                b.append_data(&mut h, name, &b"pwned\n"[..]).expect("file");
            }
        }
    }
    let bytes = b.into_inner().expect("tar");
    std::fs::File::create(path)
        .and_then(|mut f| f.write_all(&bytes))
        .expect("archive");
}

/// Property: replayed through the lenient backend, `e -> ../absent` then `e/pwned` is a
/// `traversal` finding: the fuzzer planted an empty `../absent` in the view before the
/// step, so the write through the link lands there and is seen (by `containment` too;
/// without the decoy it would fail with ENOENT, the backend would warn and succeed, and
/// nothing outside would change). `y -> .`, `x -> y/..`, `x/absent/pwned` (tar-fs
/// CVE-2025-48387's shape) is one too; a link that stays inside is none.
#[test]
fn a_write_through_a_link_to_nowhere_is_a_traversal() {
    if !can_run("a_write_through_a_link_to_nowhere_is_a_traversal") {
        return;
    }
    let work = shm_dir("traversal");
    let (toml, name) = lenient();
    let cases: [(&str, &[Spec<'_>], bool); 3] = [
        (
            "nowhere",
            &[('l', "e", "../absent"), ('f', "e/pwned", "")],
            true,
        ),
        (
            "dotdot",
            &[
                ('l', "y", "."),
                ('l', "x", "y/.."),
                ('f', "x/absent/pwned", ""),
            ],
            true,
        ),
        (
            "inside",
            &[('d', "in", ""), ('l', "s", "in"), ('f', "s/x", "")],
            false,
        ),
    ];
    let bin = sh_quote(&support::snapconf_bin());
    let mut script = String::new();
    for (tag, members, _) in &cases {
        let arc = work.path().join(format!("{tag}.tar"));
        archive(&arc, members);
        script.push_str(&format!(
            "TMPDIR={tmp} {bin} fuzz --backend {toml} --extractor {name} --replay {arc} >{arc}.replay 2>&1; echo \"exit $?\" >>{arc}.replay\n",
            tmp = work.path().display(),
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
    for (tag, _, flagged) in cases {
        let out = std::fs::read_to_string(work.path().join(format!("{tag}.tar.replay")))
            .expect("replay output");
        if flagged {
            assert!(
                out.contains("reproduces: traversal") && out.ends_with("exit 1\n"),
                "{tag}: {out}"
            );
        } else {
            assert!(out.ends_with("exit 0\n"), "{tag}: {out}");
        }
        if tag == "nowhere" {
            assert!(
                out.contains("wrote outside at `/home/user/ws/absent/pwned`")
                    && out.contains("reproduces: containment"),
                "the write landed on the planted decoy: {out}"
            );
        }
    }
}

/// Property: a short seeds-only session of the lenient backend hits `traversal` (the
/// generator's lexical-versus-kernel and normalisation classes send members through links
/// leaving the root) and writes nothing outside its jails.
#[test]
fn a_seeds_only_session_of_a_lenient_backend_hits_traversal() {
    if !can_run("a_seeds_only_session_of_a_lenient_backend_hits_traversal") {
        return;
    }
    let work = shm_dir("traversal-session");
    let corpora = seeds_only_corpora(work.path());
    let (toml, name) = lenient();
    let report = work.path().join("report");
    let log = work.path().join("session.log");
    let script = format!(
        "TMPDIR={tmp} {bin} fuzz --backend {toml} --extractor {name} --time 30 --seed 1 -j 1 --corpora {corpora} --report-dir {report} >{log} 2>&1; echo \"exit $?\" >>{log}",
        tmp = work.path().display(),
        bin = sh_quote(&support::snapconf_bin()),
        toml = sh_quote(&toml),
        corpora = sh_quote(&corpora),
        report = sh_quote(&report),
        log = sh_quote(&log),
    );
    let (_, upper) = in_overlay(work.path(), &script);
    let log = std::fs::read_to_string(&log).expect("log");
    assert_eq!(decoys_only(&upper), Vec::<String>::new(), "{log}");
    let summary: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(report.join("fuzz.json")).expect("fuzz.json"),
    )
    .expect("fuzz.json parses");
    assert!(
        summary["hits"]["traversal"].as_u64() > Some(0),
        "a traversal hit: {log}\n{summary}"
    );
}
