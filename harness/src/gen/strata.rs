//! Stratified draws: a run's opening cases cover every coverage shape ([`super::coverage`]),
//! whatever the seed, so that a behaviour one shape triggers is found by every seed of a
//! run of the default size (and a baseline written from one seed holds for the others).
//!
//! Case `i` with `i` below the number of [`Strata`] is drawn for stratum `i`: the normal
//! strategy is drawn from [`attempt_runner`]`(seed, i, 0)`, `(seed, i, 1)`, ... until the
//! case has the stratum's shapes, at most [`MAX_ATTEMPTS`] times; when none has them, the
//! case is the plain draw of `(seed, i)` (the fallback). Case `i` stays a pure function of
//! `(seed, i)` and the config, and its value tree is the strategy's, so shards, `-j`,
//! replay and shrinking are unchanged. Cases from the number of strata on are plain draws.

use super::config::GenConfig;
use super::coverage::{case_shapes, entry_shapes, ESCAPING_AT_ONE_NAME, PRIOR_SHAPES, SPEC_SHAPES};
use super::draw::{attempt_runner, draw_case};
use crate::model::spec::Case;
use proptest::strategy::{Strategy, ValueTree};

/// Most draws of one stratified case before it falls back to the plain draw. With the
/// default config, seeds 2 to 4 reach every stratum in at most 288 draws (22 on average,
/// 3348 draws for the 153 stratified cases; `strata_are_reachable_within_the_bound`), so
/// the bound is about 7 times the worst seen. A draw and its shape check take about 10 ms
/// in a debug build on a loaded machine; a stratum a config makes unreachable costs at
/// most this many draws.
pub const MAX_ATTEMPTS: u32 = 2000;

/// The shapes a hardlink's target symlink can have: where a link leads decides what an
/// extractor does when it restores a second name of it (the H8 family: `tar-rs` fails,
/// Python `tarfile` with `filter="tar"` follows an absolute target out of the root,
/// `filter="data"` keeps an escaping one).
const LINK_TARGETS: [&str; 10] = [
    ESCAPING_AT_ONE_NAME,
    "symlink-abs-out",
    "symlink-abs-into-root",
    "symlink-escaping",
    "symlink-abs-other",
    "symlink-dangling",
    "symlink-loop-self",
    "symlink-loop-pair",
    "symlink-target-over-100",
    "symlink-relative-ok",
];

/// Names a header format must encode specially (a newline inside a PAX record or a GNU
/// long name, bytes that are not UTF-8) ...
const ODD_NAMES: [&str; 2] = ["name-newline", "name-non-utf8"];
/// ... and the path lengths at which a path leaves the ustar name field (100) and its
/// prefix split (255): where the two meet, the writer and the reader pick different
/// encodings (seed 4's `tar-rs` refusal of a 300-byte path under a newline directory).
const LONG_PATHS: [&str; 2] = ["path-over-255", "path-over-100"];

/// Every single coverage shape ([`SPEC_SHAPES`] and [`PRIOR_SHAPES`]), most informative
/// first: links and their targets, shared inodes and their exclusions, hostile priors,
/// special files, modes, names, then the shapes nearly every case has anyway.
const SINGLES: [&str; 52] = [
    "hardlink-to-symlink",
    "symlink-abs-out",
    "symlink-abs-into-root",
    "symlink-escaping",
    "symlink-abs-other",
    "symlink-loop-pair",
    "symlink-loop-self",
    "symlink-dangling",
    "symlink-target-over-100",
    "hardlink-target-over-100",
    "symlink-relative-ok",
    "alias-excluded-first-creation",
    "alias-excluded-first-sorted",
    "alias-excluded-first-reverse",
    "alias-excluded-by-file",
    "alias-excluded-by-dir",
    "shared-inode-3plus",
    "shared-inode-cross-dir",
    "hardlink",
    "prior-symlink-at-dir",
    "prior-fifo-at-file",
    "prior-readonly-dir",
    "prior-dir-at-file",
    "prior-stale-overlap",
    "prior-stale-extra",
    "fifo",
    "chardev",
    "socket",
    "mode-setuid",
    "mode-setgid",
    "mode-0000",
    "dir-mode-0000",
    "readonly-dir-with-children",
    "mode-exec",
    "name-newline",
    "name-non-utf8",
    "path-over-255",
    "name-255",
    "name-155",
    "name-100",
    "name-99",
    "path-over-100",
    "realistic-venv",
    "exclusion-dir",
    "exclusion-file",
    "binary-content",
    "empty-dir",
    "empty-file",
    "empty-workspace",
    "prior-empty",
    "dir",
    "file",
];

/// The strata of a run under one [`GenConfig`], in the order the opening cases draw them.
///
/// A stratum is one shape, or two shapes that must meet in one entry (a hardlink counts
/// with the entry it names, see [`entry_shapes`]). The pairs, first, are the ones whose
/// meeting is a behaviour of its own rather than two behaviours side by side:
/// `hardlink-to-symlink` with each of the 10 shapes of a symlink's target (9 coverage shapes, and a target that leaves the root from one of the two names only)
/// (`LINK_TARGETS`), and each odd name with each long-path shape (`name-newline`,
/// `name-non-utf8` × `path-over-255`, `path-over-100`), once for a directory and once for
/// a file (GNU tar's archive of a directory there makes `tar-rs` 0.4.46 refuse it, of a
/// file, write it under another name): 18 strata of several shapes. Then every single
/// shape that no earlier stratum already holds, most informative first (36 with every
/// shape on): 54 strata, about half of the default 100 cases. A stratum one of whose shapes the
/// config turns off (a zero weight, no character devices, fewer than 2 entry plans for a
/// link pair) is left out, so later strata move up and no case is spent on it.
#[derive(Clone, Debug)]
pub struct Strata {
    strata: Vec<Vec<&'static str>>,
}

impl Strata {
    /// The strata `cfg` can draw (see [`Strata`]); none when `cfg.stratify` is off.
    pub fn new(cfg: &GenConfig) -> Strata {
        let mut strata: Vec<Vec<&'static str>> = Vec::new();
        if !cfg.stratify {
            return Strata { strata };
        }
        // A hardlink to a symlink with a chosen target takes two entry plans.
        if cfg.max_entries >= 2 {
            for target in LINK_TARGETS {
                strata.push(vec!["hardlink-to-symlink", target]);
            }
        }
        for name in ODD_NAMES {
            for path in LONG_PATHS {
                for kind in ["dir", "file"] {
                    strata.push(vec![name, path, kind]);
                }
            }
        }
        strata.retain(|s| s.iter().all(|shape| enabled(cfg, shape)));
        for shape in SINGLES {
            if enabled(cfg, shape) && !strata.iter().any(|s| s.contains(&shape)) {
                strata.push(vec![shape]);
            }
        }
        Strata { strata }
    }

    /// How many opening cases are stratified.
    pub fn len(&self) -> usize {
        self.strata.len()
    }

    /// Whether no case is stratified (every shape turned off).
    pub fn is_empty(&self) -> bool {
        self.strata.is_empty()
    }

    /// The shapes case `index` is drawn to have; `None` past the strata.
    pub fn stratum(&self, index: u64) -> Option<&[&'static str]> {
        usize::try_from(index)
            .ok()
            .and_then(|i| self.strata.get(i))
            .map(Vec::as_slice)
    }

    /// Case `index` of the run with `seed`: for a stratified index, the first of
    /// [`MAX_ATTEMPTS`] draws that has its stratum's shapes, else (and past the strata)
    /// the plain [`draw_case`]. Errors are the strategy's, as for [`draw_case`].
    pub fn draw<S>(&self, strategy: &S, seed: u64, index: u64) -> Result<S::Tree, String>
    where
        S: Strategy<Value = Case>,
    {
        Ok(self.draw_counted(strategy, seed, index)?.0)
    }

    /// As [`draw`](Self::draw), plus the draws it took: `Some(n)` when draw `n - 1` had
    /// the stratum's shapes, `None` when it fell back or `index` is not stratified.
    pub fn draw_counted<S>(
        &self,
        strategy: &S,
        seed: u64,
        index: u64,
    ) -> Result<(S::Tree, Option<u32>), String>
    where
        S: Strategy<Value = Case>,
    {
        if let Some(shapes) = self.stratum(index) {
            for attempt in 0..MAX_ATTEMPTS {
                let mut runner = attempt_runner(seed, index, attempt);
                let tree = strategy
                    .new_tree(&mut runner)
                    .map_err(|e| format!("cannot draw case {index}: {e}"))?;
                if has_shapes(&tree.current(), shapes) {
                    return Ok((tree, Some(attempt + 1)));
                }
            }
        }
        Ok((draw_case(strategy, seed, index)?, None))
    }
}

/// Whether `case` has every shape of `shapes`: one shape anywhere in the case
/// ([`case_shapes`]), several in one entry ([`entry_shapes`]).
pub fn has_shapes(case: &Case, shapes: &[&str]) -> bool {
    match shapes {
        [one] => case_shapes(case).contains(one),
        _ => entry_shapes(&case.spec)
            .iter()
            .any(|f| shapes.iter().all(|s| f.contains(s))),
    }
}

/// Whether `cfg` can generate `shape` at all: false when every knob that makes it is
/// zero. Generous where several plans can make a shape (a stratum that is on but rare
/// costs at most [`MAX_ATTEMPTS`] draws).
fn enabled(cfg: &GenConfig, shape: &str) -> bool {
    let on = |w: u32| w > 0;
    let c = cfg;
    let symlinks = [
        c.symlink_relative_weight,
        c.symlink_abs_into_root_weight,
        c.symlink_abs_out_weight,
        c.symlink_escaping_weight,
        c.symlink_dangling_weight,
        c.symlink_loop_self_weight,
        c.symlink_loop_pair_weight,
        c.hardlink_to_symlink_weight,
        c.realistic_weight,
    ];
    let any_symlink = symlinks.iter().any(|w| on(*w));
    let entries = c.max_entries > 0 || on(c.realistic_weight);
    let shared = on(c.hardlink_weight)
        || on(c.shared_inode_weight)
        || on(c.hardlink_to_symlink_weight)
        || on(c.realistic_weight);
    let exclusions = (c.max_exclusions > 0
        && [
            c.exclude_entry_weight,
            c.exclude_parent_weight,
            c.exclude_alias_first_weight,
            c.exclude_alias_first_dir_weight,
        ]
        .iter()
        .any(|w| on(*w)))
        || on(c.realistic_weight);
    let long = on(c.long_path_weight) || on(c.name_long_weight);
    let prior = c.max_prior_entries > 0;
    let hostile = |w: u32| prior && on(c.hostile_prior_weight) && on(w);
    let random_prior = prior && on(c.prior_random_weight);
    let edited = prior && on(c.prior_edited_weight);
    // Every shape but these needs an entry in W1.
    let needs_entries = !matches!(
        shape,
        "empty-workspace" | "file" | "prior-empty" | "prior-stale-extra"
    );
    let ok = (entries || !needs_entries)
        && match shape {
            "empty-file" => on(c.content_empty_weight) || on(c.content_binary_weight),
            "binary-content" => on(c.content_binary_weight),
            "empty-dir" => on(c.empty_dir_weight) || on(c.dir_weight),
            "readonly-dir-with-children" => on(c.readonly_dir_weight),
            "dir-mode-0000" => on(c.dir_mode_zero_weight),
            "hardlink" | "shared-inode-cross-dir" => shared,
            "shared-inode-3plus" => on(c.shared_inode_weight) || on(c.hardlink_weight),
            "hardlink-to-symlink" => {
                on(c.hardlink_to_symlink_weight) || (on(c.hardlink_weight) && any_symlink)
            }
            "hardlink-target-over-100" => shared && long,
            "exclusion-file" | "exclusion-dir" => exclusions,
            "alias-excluded-by-file"
            | "alias-excluded-by-dir"
            | "alias-excluded-first-creation"
            | "alias-excluded-first-sorted"
            | "alias-excluded-first-reverse" => shared && exclusions,
            "symlink-relative-ok" => {
                on(c.symlink_relative_weight)
                    || on(c.realistic_weight)
                    || on(c.symlink_abs_into_root_weight)
            }
            "symlink-target-over-100" => any_symlink && long,
            "symlink-abs-into-root" => on(c.symlink_abs_into_root_weight),
            "symlink-abs-out" => on(c.symlink_abs_out_weight),
            "symlink-abs-other" => on(c.realistic_weight),
            "symlink-escaping" => on(c.symlink_escaping_weight),
            "symlink-dangling" => any_symlink,
            "symlink-loop-self" => on(c.symlink_loop_self_weight),
            "symlink-loop-pair" => on(c.symlink_loop_pair_weight),
            "fifo" => on(c.fifo_weight),
            "socket" => on(c.socket_weight),
            "chardev" => c.allow_char_devices && on(c.char_device_weight),
            "mode-exec" => {
                on(c.mode_exec_weight)
                    || on(c.mode_setuid_weight)
                    || on(c.mode_setgid_weight)
                    || on(c.realistic_weight)
            }
            "mode-0000" => on(c.mode_zero_weight),
            "mode-setuid" => on(c.mode_setuid_weight),
            "mode-setgid" => on(c.mode_setgid_weight),
            "name-99" | "name-100" | "name-155" | "name-255" => on(c.name_long_weight),
            "path-over-100" | "path-over-255" => long,
            "name-non-utf8" => on(c.name_non_utf8_weight),
            "name-newline" => on(c.name_newline_weight),
            "realistic-venv" => on(c.realistic_weight),
            "prior-empty" => on(c.prior_empty_weight) || !prior,
            "prior-symlink-at-dir" => hostile(c.prior_symlink_at_dir_weight),
            "prior-fifo-at-file" => {
                hostile(c.prior_fifo_at_file_weight) || (random_prior && on(c.fifo_weight))
            }
            "prior-readonly-dir" => {
                hostile(c.prior_readonly_dir_weight) || (random_prior && on(c.readonly_dir_weight))
            }
            "prior-dir-at-file" => hostile(c.prior_dir_at_file_weight) || edited,
            "prior-stale-overlap" => hostile(c.prior_stale_file_weight) || edited,
            "prior-stale-extra" => random_prior || edited,
            _ => true,
        };
    let pair_only = shape == ESCAPING_AT_ONE_NAME && on(c.symlink_escaping_weight);
    ok && (SPEC_SHAPES.contains(&shape) || PRIOR_SHAPES.contains(&shape) || pair_only)
}

#[cfg(test)]
mod tests;
