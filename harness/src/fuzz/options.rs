//! The options of a fuzz campaign (`snapconf fuzz`): its base archives, budgets, limits
//! and the per-check caps on causes and shrinks.

use crate::checks::Check;
use crate::error::HarnessError;
use crate::model::profile::Profile;
use snapconf_tarbytes::Records;
use std::path::PathBuf;
use std::time::Duration;

/// What a fuzz session needs.
pub struct FuzzOptions {
    /// Base archives: `(label, bytes)`, e.g. the files of `corpora/seeds` and
    /// `corpora/adversarial`.
    pub bases: Vec<(String, Vec<u8>)>,
    /// The profile the extractor promises (decides which mode bits are outside policy).
    pub profile: Profile,
    /// Wall-clock budget for the whole session.
    pub time: Duration,
    /// Most executions of the session over every worker (`--runs`, as libFuzzer's
    /// `-runs`); `None`: only `time` ends it. With one worker and a seed, the session's
    /// draws are then the same on any machine, however loaded (a hang's cut, which
    /// depends on timing, aside).
    pub runs: Option<u64>,
    /// Seed of the mutation generator.
    pub seed: u64,
    /// Timeout of one hydration.
    pub timeout: Duration,
    /// Where jails go (system temp dir when `None`).
    pub jail_base: Option<PathBuf>,
    /// Receives `cases/<id>/` for each finding.
    pub report_dir: PathBuf,
    /// Most extractor runs spent shrinking one finding.
    pub shrink_runs: u32,
    /// The binary `repro.sh` calls.
    pub bin: PathBuf,
    /// The checks each execution is judged by: [`Check::ALL`] unless a test adds its own.
    pub checks: Vec<Check>,
    /// Run each hydration in a filesystem view ([`crate::jail::view`]) when the extractor
    /// can run in one, so that no mutant is skipped for the host's safety. The caller
    /// sets it after [`crate::jail::view::probe`] succeeded.
    pub view: bool,
    /// Workers fuzzing at once (`-j`; at least 1), each with jails of its own and a seed of
    /// its own (worker `k` draws from `seed + k`), sharing the causes found: a cause is
    /// kept and shrunk once whichever worker finds it.
    pub jobs: usize,
    /// What `repro.sh` passes back to `snapconf fuzz` besides `--extractor` and `--replay`
    /// so that the finding replays the same way: ` --backend 'FILE'` for a backend's
    /// extractor, ` --profile 'P'` when one was given; shell-quoted words, each after a
    /// space. Empty for a built-in extractor under the default profile.
    pub replay_args: String,
    /// Run an extractor that has a persistent server
    /// ([`snapconf_producers::Extractor::server_command`]) through it, one server and one
    /// kept view per worker (`fuzz::persist`), when in a view; else (and for every
    /// other extractor) one process and one fresh view per archive. The checks see the
    /// same either way; `--one-shot` turns it off.
    pub server: bool,
    /// Known causes (`--baseline`): a shrunk finding whose cause the baseline lists
    /// ([`crate::report::CauseKey::of_fuzz_cause`]) is written and reported as known but
    /// takes none of its check's [`FuzzOptions::causes_per_check`] slots, and its shrink is
    /// given back (up to [`MAX_SHRINKS_PER_CHECK`] per check), so a documented behaviour
    /// hides no other cause of the same check. Empty: every cause is new.
    pub known: crate::report::Baseline,
    /// Distinct new causes kept per check ([`MAX_CAUSES_PER_CHECK`] for `snapconf fuzz`;
    /// `hang` keeps one whatever this says). At least 1.
    pub causes_per_check: usize,
    /// Coverage feedback (`--coverage`; `fuzz/feedback.rs`): `Auto` where the extractor
    /// reports coverage.
    pub coverage: super::feedback::CoverageMode,
}

/// Distinct causes kept per check in one session: a behaviour the extractor documents
/// takes one, and later, different findings of the same check are still reported.
pub const MAX_CAUSES_PER_CHECK: usize = 5;
/// Findings of one check shrunk per session (a repeat of a known cause costs a shrink to
/// tell it apart).
pub const MAX_SHRINKS_PER_CHECK: usize = 12;

/// `opts.bases`, parsed into records.
///
/// # Errors
/// There are none.
pub(super) fn parsed_bases(opts: &FuzzOptions) -> Result<Vec<(String, Records)>, HarnessError> {
    if opts.bases.is_empty() {
        return Err(HarnessError::Other("no base archives to mutate".into()));
    }
    Ok(opts
        .bases
        .iter()
        .map(|(l, b)| (l.clone(), Records::parse(b)))
        .collect())
}
