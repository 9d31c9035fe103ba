//! Where an attack aims: the decoys and directories of the fuzzer's filesystem view
//! ([`crate::jail::view_layout`]), named absolutely or by `..` from a member's own depth.
//!
//! The extractor sees the jail as `/` and the root at [`VIEW_ROOT`], [`VIEW_ROOT_DEPTH`]
//! levels down. A symlink's target is read from the link's own directory, so a link `k`
//! directories below the root needs `k + VIEW_ROOT_DEPTH` `..` to reach `/`. A member name
//! and a hardlink's target are read from the root itself (GNU tar, bsdtar and Python
//! `tarfile` resolve a hardlink's link name against the extraction directory), so they use
//! depth 0 whatever the member's own depth.

use super::member::choose;
use crate::jail::view_layout::{VIEW_DECOYS, VIEW_DIRS, VIEW_ROOT, VIEW_ROOT_DEPTH};
use snapconf_tarbytes::Rng;

/// How a target spells a place in the view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Form {
    /// `/etc/passwd` as is.
    Absolute,
    /// `//etc/passwd`, `////etc/passwd`: still absolute to the kernel, still absolute after a
    /// sanitiser strips one `/` (node-tar CVE-2021-32804).
    Slashes(usize),
    /// Exactly up to `/`, then down: `k + VIEW_ROOT_DEPTH` `..` from depth `k`.
    Exact,
    /// The fewest `..`: up to the deepest directory the root's path shares with the place
    /// (`../decoy` from the root for `/home/user/ws/decoy`).
    Shortest,
    /// `n` more `..` than reach `/`: the kernel stays at `/`, a check that counts levels
    /// against the root's depth in some other tree does not.
    Extra(usize),
    /// [`Form::Exact`] with every `/` doubled after a `..` (`..//..//etc`): GNU tar's
    /// `contains_dot_dot` missed `..` after `//` in symlink targets (CVE-2007-4131).
    Doubled,
}

/// A spelling drawn for a target; `relative_only` leaves out the absolute ones.
pub(super) fn draw_form(rng: &mut Rng, relative_only: bool) -> Form {
    let n = if relative_only { 8 } else { 12 };
    match rng.below(n) {
        0..=2 => Form::Exact,
        3..=4 => Form::Shortest,
        5..=6 => Form::Extra(1 + rng.below(6)),
        7 => Form::Doubled,
        8..=10 => Form::Absolute,
        _ => Form::Slashes(2 + rng.below(3)),
    }
}

/// The components of a view path.
pub(super) fn components(path: &str) -> Vec<&str> {
    path.split('/').filter(|c| !c.is_empty()).collect()
}

/// `n` parent steps, `../..` (empty for 0).
pub(super) fn ups(n: usize) -> String {
    vec![".."; n].join("/")
}

/// `a/b`, with no doubled `/` and nothing added when either side is empty.
pub(super) fn join(a: impl AsRef<[u8]>, b: impl AsRef<[u8]>) -> Vec<u8> {
    let (a, b) = (a.as_ref(), b.as_ref());
    if a.is_empty() {
        return b.to_vec();
    }
    let mut v = a.to_vec();
    if !b.is_empty() {
        if !v.ends_with(b"/") {
            v.push(b'/');
        }
        v.extend_from_slice(b);
    }
    v
}

/// How many directories below the root a member's own directory is (`w/v/d` is 2).
pub(super) fn dir_depth(name: impl AsRef<[u8]>) -> usize {
    snapconf_extract::name_components(name.as_ref())
        .count()
        .saturating_sub(1)
}

/// `n` parent steps and then `rest`; `.` when both are empty.
fn climb(n: usize, rest: &str) -> String {
    match (n, rest.is_empty()) {
        (0, true) => ".".into(),
        (0, false) => rest.into(),
        (_, true) => ups(n),
        _ => format!("{}/{rest}", ups(n)),
    }
}

/// The view path `place` spelled in `form` from a directory `depth` levels below the root.
pub(super) fn spell(form: Form, depth: usize, place: &str) -> Vec<u8> {
    let target = components(place);
    let rest = target.join("/");
    let s = match form {
        Form::Absolute => format!("/{rest}"),
        Form::Slashes(n) => format!("{}{rest}", "/".repeat(n)),
        Form::Exact => climb(depth + VIEW_ROOT_DEPTH, &rest),
        Form::Extra(n) => climb(depth + VIEW_ROOT_DEPTH + n, &rest),
        Form::Doubled => climb(depth + VIEW_ROOT_DEPTH, &rest).replace("../", "..//"),
        Form::Shortest => {
            let root = components(VIEW_ROOT);
            let common = root.iter().zip(&target).take_while(|(a, b)| a == b).count();
            climb(
                depth + VIEW_ROOT_DEPTH - common.min(VIEW_ROOT_DEPTH),
                &target[common..].join("/"),
            )
        }
    };
    s.into_bytes()
}

/// `place` in a drawn spelling, absolute ones included, from `depth`.
pub(super) fn aim(rng: &mut Rng, depth: usize, place: &str) -> Vec<u8> {
    let form = draw_form(rng, false);
    spell(form, depth, place)
}

/// `place` by `..` only, from `depth`.
pub(super) fn aim_relative(rng: &mut Rng, depth: usize, place: &str) -> Vec<u8> {
    let form = draw_form(rng, true);
    spell(form, depth, place)
}

/// One decoy file of the view.
pub(super) fn decoy(rng: &mut Rng) -> &'static str {
    choose(rng, &VIEW_DECOYS)
}

/// One directory of the view.
pub(super) fn view_dir(rng: &mut Rng) -> &'static str {
    choose(rng, &VIEW_DIRS)
}

/// True if `dir` is a proper ancestor of `path`, component-wise.
fn holds(dir: &str, path: &str) -> bool {
    let (d, p) = (components(dir), components(path));
    d.len() < p.len() && p.starts_with(&d)
}

/// A view directory and the rest of a decoy below it: a link to the directory and a member
/// `link/rest` write the decoy (`("/etc", "passwd")`, `("/", "out/decoy/file")`).
pub(super) fn decoy_in_dir(rng: &mut Rng) -> (&'static str, String) {
    let file = decoy(rng);
    let dirs: Vec<&'static str> = VIEW_DIRS
        .iter()
        .copied()
        .filter(|d| holds(d, file))
        .collect();
    let dir = choose(rng, &dirs);
    (dir, components(file)[components(dir).len()..].join("/"))
}

/// A view directory `x` other than `/` and the rest of a decoy below `x`'s parent: a link
/// `s -> x` and a member `s/../rest` write the decoy, while the name reads as `rest` to a
/// lexical cleaner.
pub(super) fn decoy_beside(rng: &mut Rng) -> (&'static str, String) {
    let mut options = Vec::new();
    for x in VIEW_DIRS {
        let c = components(x);
        let Some((_, parent)) = c.split_last() else {
            continue;
        };
        for file in VIEW_DECOYS {
            let f = components(file);
            if f.len() > parent.len() && f.starts_with(parent) {
                options.push((x, f[parent.len()..].join("/")));
            }
        }
    }
    let at = rng.below(options.len());
    options.swap_remove(at)
}

/// A decoy in a drawn spelling from `depth`.
pub(super) fn aim_decoy(rng: &mut Rng, depth: usize) -> Vec<u8> {
    let place = decoy(rng);
    aim(rng, depth, place)
}

/// A decoy by `..` only from `depth`.
pub(super) fn aim_decoy_relative(rng: &mut Rng, depth: usize) -> Vec<u8> {
    let place = decoy(rng);
    aim_relative(rng, depth, place)
}

/// A view directory in a drawn spelling from `depth`.
pub(super) fn aim_dir(rng: &mut Rng, depth: usize) -> Vec<u8> {
    let place = view_dir(rng);
    aim(rng, depth, place)
}

/// A view directory by `..` only from `depth`.
pub(super) fn aim_dir_relative(rng: &mut Rng, depth: usize) -> Vec<u8> {
    let place = view_dir(rng);
    aim_relative(rng, depth, place)
}
