//! Proptest strategies for plans and the public strategies for specs, priors and cases.
//!
//! Every choice is a weighted `Union` built only from alternatives whose weight is non-zero
//! (a disabled feature is absent even while shrinking), ordered simplest first, since a
//! `Union` shrinks towards earlier alternatives.

use super::config::GenConfig;
use super::edit::edit_for;
use super::plan::{
    ContentPlan, EntryPlan, ExclusionPlan, KindPlan, LinkPlan, ModePlan, NamePlan, Order,
    PriorPlan, SpecPlan, VenvExclusion, VenvPlan, VENV_PARTS,
};
use super::prior::resolve_prior;
use super::resolve::resolve_spec;
use super::smaller::NoLarger;
use crate::model::spec::{Case, WorkspaceSpec};
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::strategy::Union;
use std::fmt::Debug;

/// A weighted choice among the alternatives with non-zero weight, in the given order;
/// `fallback` when every weight is zero.
fn weighted<T: Debug + Send + Sync + 'static>(
    options: Vec<(u32, SBoxedStrategy<T>)>,
    fallback: SBoxedStrategy<T>,
) -> SBoxedStrategy<T> {
    let options: Vec<_> = options.into_iter().filter(|(w, _)| *w > 0).collect();
    match options.len() {
        0 => fallback,
        1 => options
            .into_iter()
            .map(|(_, s)| s)
            .next()
            .unwrap_or(fallback),
        _ => Union::new_weighted(options).sboxed(),
    }
}

fn just<T: Clone + Debug + Send + Sync + 'static>(v: T) -> SBoxedStrategy<T> {
    Just(v).sboxed()
}

/// Base names: plain first, then by length (newline, non-UTF-8, long).
pub fn name_strategy(cfg: &GenConfig) -> SBoxedStrategy<NamePlan> {
    weighted(
        vec![
            (
                cfg.name_plain_weight,
                any::<u8>().prop_map(NamePlan::Plain).sboxed(),
            ),
            (
                cfg.name_long_weight,
                any::<u8>().prop_map(NamePlan::Long).sboxed(),
            ),
            (cfg.name_non_utf8_weight, just(NamePlan::NonUtf8)),
            (cfg.name_newline_weight, just(NamePlan::Newline)),
        ],
        any::<u8>().prop_map(NamePlan::Plain).sboxed(),
    )
}

/// File contents: empty first, then short text, then short binary.
pub fn content_strategy(cfg: &GenConfig) -> SBoxedStrategy<ContentPlan> {
    let text = proptest::collection::vec(0x20u8..0x7f, 1..40).prop_map(ContentPlan::Text);
    weighted(
        vec![
            (cfg.content_empty_weight, just(ContentPlan::Empty)),
            (cfg.content_text_weight, text.sboxed()),
            (
                cfg.content_binary_weight,
                proptest::collection::vec(any::<u8>(), 0..62)
                    .prop_map(ContentPlan::Binary)
                    .sboxed(),
            ),
        ],
        just(ContentPlan::Empty),
    )
}

/// File modes: default first.
pub fn mode_strategy(cfg: &GenConfig) -> SBoxedStrategy<ModePlan> {
    weighted(
        vec![
            (cfg.mode_default_weight, just(ModePlan::Default)),
            (cfg.mode_exec_weight, just(ModePlan::Exec)),
            (cfg.mode_zero_weight, just(ModePlan::Zero)),
            (cfg.mode_setuid_weight, just(ModePlan::Setuid)),
            (cfg.mode_setgid_weight, just(ModePlan::Setgid)),
        ],
        just(ModePlan::Default),
    )
}

/// What an entry plan creates; single-entry kinds first, multi-entry kinds last.
pub fn kind_strategy(cfg: &GenConfig) -> SBoxedStrategy<KindPlan> {
    let content = content_strategy(cfg);
    let file = (content.clone(), mode_strategy(cfg))
        .prop_map(|(content, mode)| KindPlan::File { content, mode })
        .sboxed();
    let link = |w: u32, s: SBoxedStrategy<LinkPlan>| (w, s.prop_map(KindPlan::Symlink).sboxed());
    let char_device = if cfg.allow_char_devices {
        cfg.char_device_weight
    } else {
        0
    };
    let aliases = proptest::collection::vec((any::<Index>(), any::<u8>()), 1..=3);
    weighted(
        vec![
            (cfg.file_weight, file.clone()),
            (cfg.dir_weight, just(KindPlan::Dir)),
            (cfg.empty_dir_weight, just(KindPlan::EmptyDir)),
            (
                cfg.hardlink_weight,
                (any::<Index>(), content.clone())
                    .prop_map(|(target, content)| KindPlan::Hardlink { target, content })
                    .sboxed(),
            ),
            link(
                cfg.symlink_relative_weight,
                any::<Index>().prop_map(LinkPlan::ToEntry).sboxed(),
            ),
            link(cfg.symlink_dangling_weight, just(LinkPlan::Dangling)),
            link(
                cfg.symlink_abs_into_root_weight,
                any::<Index>().prop_map(LinkPlan::AbsIntoRoot).sboxed(),
            ),
            link(
                cfg.symlink_abs_out_weight,
                any::<bool>().prop_map(LinkPlan::AbsOut).sboxed(),
            ),
            link(
                cfg.symlink_escaping_weight,
                (0u8..2).prop_map(LinkPlan::Escaping).sboxed(),
            ),
            link(cfg.symlink_loop_self_weight, just(LinkPlan::LoopSelf)),
            (cfg.fifo_weight, just(KindPlan::Fifo)),
            (cfg.socket_weight, just(KindPlan::Socket)),
            (char_device, just(KindPlan::CharDevice)),
            (
                cfg.readonly_dir_weight,
                content
                    .clone()
                    .prop_map(|child| KindPlan::LockedDir { mode: 0o555, child })
                    .sboxed(),
            ),
            (
                cfg.dir_mode_zero_weight,
                content
                    .clone()
                    .prop_map(|child| KindPlan::LockedDir { mode: 0o000, child })
                    .sboxed(),
            ),
            (
                cfg.hardlink_to_symlink_weight,
                any::<Index>()
                    .prop_map(|alias_parent| KindPlan::HardlinkToSymlink { alias_parent })
                    .sboxed(),
            ),
            (cfg.symlink_loop_pair_weight, just(KindPlan::LoopPair)),
            (
                cfg.shared_inode_weight,
                (content, aliases)
                    .prop_map(|(content, aliases)| KindPlan::SharedInode { content, aliases })
                    .sboxed(),
            ),
            (
                cfg.long_path_weight,
                (0u8..4)
                    .prop_map(|total| KindPlan::LongPath { total })
                    .sboxed(),
            ),
        ],
        file,
    )
}

/// One entry plan.
pub fn entry_plan_strategy(cfg: &GenConfig) -> SBoxedStrategy<EntryPlan> {
    (any::<Index>(), name_strategy(cfg), kind_strategy(cfg))
        .prop_map(|(parent, name, kind)| EntryPlan { parent, name, kind })
        .sboxed()
}

/// One exclusion plan; `None` when every exclusion weight is zero.
pub fn exclusion_plan_strategy(cfg: &GenConfig) -> Option<SBoxedStrategy<ExclusionPlan>> {
    let order = prop_oneof![
        Just(Order::Creation),
        Just(Order::Sorted),
        Just(Order::Reverse)
    ];
    let alias = |as_dir: bool| {
        (any::<Index>(), order.clone())
            .prop_map(move |(inode, order)| ExclusionPlan::AliasFirst {
                inode,
                order,
                as_dir,
            })
            .sboxed()
    };
    let options: Vec<(u32, SBoxedStrategy<ExclusionPlan>)> = vec![
        (
            cfg.exclude_entry_weight,
            any::<Index>().prop_map(ExclusionPlan::Entry).sboxed(),
        ),
        (
            cfg.exclude_parent_weight,
            any::<Index>().prop_map(ExclusionPlan::ParentOf).sboxed(),
        ),
        (cfg.exclude_alias_first_weight, alias(false)),
        (cfg.exclude_alias_first_dir_weight, alias(true)),
    ];
    let fallback = options[0].1.clone();
    options
        .iter()
        .any(|(w, _)| *w > 0)
        .then(|| weighted(options, fallback))
}

/// The venv template: a subsequence of its parts (shrinks by dropping parts) and what it
/// excludes (shrinks towards nothing).
pub fn venv_plan_strategy() -> SBoxedStrategy<VenvPlan> {
    let exclusion = prop_oneof![
        Just(VenvExclusion::None),
        Just(VenvExclusion::CacheDir),
        Just(VenvExclusion::CacheFile)
    ];
    (
        proptest::sample::subsequence(VENV_PARTS.to_vec(), 1..=VENV_PARTS.len()),
        exclusion,
    )
        .prop_map(|(parts, exclusion)| VenvPlan { parts, exclusion })
        .sboxed()
}

/// A whole W1 plan: the template with probability `realistic / (realistic + random)`
/// (shrinks to no template), up to `max_entries` entry plans and `max_exclusions`
/// exclusion plans (shrink by removal).
pub fn spec_plan_strategy(cfg: &GenConfig) -> SBoxedStrategy<SpecPlan> {
    let (real, random) = (
        u64::from(cfg.realistic_weight),
        u64::from(cfg.random_weight),
    );
    let venv = match (real, random) {
        (0, _) => just(None),
        (_, 0) => venv_plan_strategy().prop_map(Some).sboxed(),
        _ => proptest::option::weighted(real as f64 / (real + random) as f64, venv_plan_strategy())
            .sboxed(),
    };
    let entries = proptest::collection::vec(entry_plan_strategy(cfg), 0..=cfg.max_entries);
    let exclusions = match exclusion_plan_strategy(cfg) {
        Some(x) => proptest::collection::vec(x, 0..=cfg.max_exclusions).sboxed(),
        None => just(Vec::new()),
    };
    let newline_exclusions = cfg.newline_exclusions;
    (venv, entries, exclusions)
        .prop_map(move |(venv, entries, exclusions)| SpecPlan {
            newline_exclusions,
            venv,
            entries,
            exclusions,
        })
        .sboxed()
}

/// Prior plans: empty with weight `prior_empty_weight`, otherwise 1..=`max_prior_entries`
/// plans, each random (`prior_random_weight`), hostile (`hostile_prior_weight`, shared out
/// by the `prior_*_weight`s) or W1 moved on by 1–3 edits (`prior_edited_weight`). Shrinks
/// by removing plans, then to the empty prior.
pub fn prior_plans_strategy(cfg: &GenConfig) -> SBoxedStrategy<Vec<PriorPlan>> {
    let hostile_kinds = [
        cfg.prior_symlink_at_dir_weight,
        cfg.prior_fifo_at_file_weight,
        cfg.prior_stale_file_weight,
        cfg.prior_dir_at_file_weight,
        cfg.prior_readonly_dir_weight,
        // A hardlink like any other: off when hardlinks are.
        if cfg.hardlink_weight == 0 {
            0
        } else {
            cfg.prior_hardlink_out_weight
        },
    ];
    let kinds_sum: u32 = hostile_kinds.iter().fold(0u32, |a, w| a.saturating_add(*w));
    let hostile = |w: u32| cfg.hostile_prior_weight.saturating_mul(w).min(1 << 20);
    let random_w = cfg
        .prior_random_weight
        .saturating_mul(kinds_sum.max(1))
        .min(1 << 20);
    let random = entry_plan_strategy(cfg)
        .prop_map(PriorPlan::Random)
        .sboxed();
    let edited_w = cfg.prior_edited_weight.saturating_mul(2).min(1 << 20);
    let edit_cfg = cfg.clone();
    let edited = proptest::collection::vec(any::<u64>(), 1..=3)
        .prop_map(move |seeds| PriorPlan::Edited {
            edits: seeds.iter().map(|s| edit_for(&edit_cfg, *s)).collect(),
        })
        .sboxed();
    // Hostile plans resolve to one or two entries (none when W1 has no target for them), a
    // random plan to up to seven: one-entry kinds first, random last, since a union shrinks
    // towards earlier alternatives.
    let element = weighted(
        vec![
            (
                hostile(hostile_kinds[0]),
                (any::<Index>(), any::<bool>())
                    .prop_map(|(dir, to_out)| PriorPlan::SymlinkAtDir { dir, to_out })
                    .sboxed(),
            ),
            (
                hostile(hostile_kinds[1]),
                any::<Index>()
                    .prop_map(|file| PriorPlan::FifoAtFile { file })
                    .sboxed(),
            ),
            (
                hostile(hostile_kinds[2]),
                (any::<Index>(), content_strategy(cfg))
                    .prop_map(|(file, content)| PriorPlan::StaleFile { file, content })
                    .sboxed(),
            ),
            (
                hostile(hostile_kinds[3]),
                any::<Index>()
                    .prop_map(|file| PriorPlan::DirAtFile { file })
                    .sboxed(),
            ),
            (
                hostile(hostile_kinds[4]),
                (any::<Index>(), prop::bool::weighted(0.25))
                    .prop_map(|(dir, zero)| PriorPlan::ReadOnlyDir { dir, zero })
                    .sboxed(),
            ),
            (
                hostile(hostile_kinds[5]),
                any::<Index>()
                    .prop_map(|file| PriorPlan::HardlinkOut { file })
                    .sboxed(),
            ),
            (random_w, random.clone()),
            // Last: a W1-sized plan, which shrinking drops rather than turns into another.
            (edited_w, edited),
        ],
        random,
    );
    let non_empty =
        if cfg.max_prior_entries == 0 || (random_w == 0 && kinds_sum == 0 && edited_w == 0) {
            0
        } else {
            cfg.prior_random_weight
                .saturating_add(cfg.hostile_prior_weight)
        };
    weighted(
        vec![
            (cfg.prior_empty_weight, just(Vec::new())),
            (
                non_empty,
                proptest::collection::vec(element, 1..=cfg.max_prior_entries.max(1)).sboxed(),
            ),
        ],
        just(Vec::new()),
    )
}

/// Workspaces W1 with exclusions. Property: every value, and every value reached by
/// `simplify`/`complicate`, passes `WorkspaceSpec::check`.
/// A `simplify` step never yields more entries plus exclusions than the value before it.
pub fn spec_strategy(
    cfg: &GenConfig,
) -> impl Strategy<Value = WorkspaceSpec> + Clone + Send + Sync {
    NoLarger::new(
        spec_plan_strategy(cfg).prop_map(|plan| resolve_spec(&plan)),
        spec_size,
    )
}

/// Entries plus exclusions: what shrinking makes smaller.
pub fn spec_size(spec: &WorkspaceSpec) -> usize {
    spec.entries.len() + spec.exclusions.len()
}

/// W1's entries and exclusions plus W0's entries: what shrinking makes smaller.
pub fn case_size(case: &Case) -> usize {
    spec_size(&case.spec) + spec_size(&case.prior)
}

/// Prior workspaces W0 for the given W1: empty, random, or hostile relative to `w1` (a
/// symlink where `w1` has a directory, a FIFO or a directory where it has a file, a
/// read-only directory, stale same-named files). Every value passes `WorkspaceSpec::check`
/// and has no exclusions.
pub fn prior_strategy(
    cfg: &GenConfig,
    w1: &WorkspaceSpec,
) -> impl Strategy<Value = WorkspaceSpec> + Clone + Send + Sync {
    let w1 = w1.clone();
    NoLarger::new(
        prior_plans_strategy(cfg).prop_map(move |plans| resolve_prior(&plans, &w1)),
        spec_size,
    )
}

/// Cases `{ spec: W1 with exclusions, prior: W0 }`. The prior is planned by index into W1's
/// directories and files, so both shrink independently and stay valid. Property: every
/// value and every shrink step passes `WorkspaceSpec::check` for both workspaces, and a
/// `simplify` step never makes [`case_size`] larger.
pub fn case_strategy(cfg: &GenConfig) -> impl Strategy<Value = Case> + Clone + Send + Sync {
    NoLarger::new(unfiltered_case_strategy(cfg), case_size)
}

/// [`case_strategy`] without the [`NoLarger`] filter on shrink steps.
pub(crate) fn unfiltered_case_strategy(
    cfg: &GenConfig,
) -> impl Strategy<Value = Case> + Clone + Send + Sync {
    // The prior first: it shrinks before W1 does, so a prior that copies W1 (an edited
    // one) is gone by the time W1's entries are removed and cannot make a removal larger.
    (prior_plans_strategy(cfg), spec_plan_strategy(cfg)).prop_map(|(prior_plans, spec_plan)| {
        let spec = resolve_spec(&spec_plan);
        let prior = resolve_prior(&prior_plans, &spec);
        Case { spec, prior }
    })
}
