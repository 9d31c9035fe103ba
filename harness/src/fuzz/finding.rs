//! From a hit to a finding: shrink its archive, confirm it, key its cause, and write its
//! reproducer (`cases/<id>/`, mode `fuzz`).

use super::causes::FirstSeen;
use super::effect::{class_word, effect, fuzz_cause};
use super::execute::{execute, runnable, Hit};
use super::mutate::Mutation;
use super::options::FuzzOptions;
use super::persist::Persist;
use super::safety::judge_safety;
use super::worker::{Pending, Shared};
use crate::checks::Check;
use crate::engine::repro::{
    shell_word, FindingFile, ReplayConditions, ReproDir, ReproMode, Script,
};
use crate::error::HarnessError;
use crate::report::ShrinkEnd;
use serde::Serialize;
use snapconf_producers::Extractor;
use snapconf_tarbytes::Records;
use std::path::Path;
use std::time::Instant;

/// One finding of a session (the first of its cause); its reproducer's `finding.json`
/// ([`crate::engine::repro::FindingFile`], mode `fuzz`) is written from it.
#[derive(Clone, Debug, Serialize)]
pub struct FuzzFinding {
    /// Format version.
    pub schema: u32,
    /// The violated check.
    pub check: Check,
    /// The extractor.
    pub extractor: String,
    /// The profile's name.
    pub profile: String,
    /// What happened.
    pub message: String,
    /// The session seed and the iteration that found it.
    pub seed: u64,
    /// 0-based iteration.
    pub iteration: u64,
    /// The base archive's label (`seeds/x.tar`), or the attack class and what it built
    /// (`attack/dir-to-symlink: ...`).
    pub base: String,
    /// The mutations applied to the base.
    pub mutations: Vec<Mutation>,
    /// The reference's verdict on the shrunk archive.
    pub reference: String,
    /// Records (headers, extension headers included) in the shrunk archive.
    pub records: usize,
    /// The cause: the attack class and the kind of effect (`path-max-chain: a decoy gained
    /// a hardlink, through a link`; see `fuzz/effect.rs`), for `atomic-hydration` `prior: `
    /// and the message (what the failure did to the prior), for a check with no effect
    /// kinds the signature of the shrunk archive ([`super::signature`]); findings of one
    /// check with the same cause are one.
    pub cause: String,
    /// The attack class the cause is charged to: the class that generated the input, else
    /// the one recognised from the shrunk archive, else `unclassified`.
    #[serde(default)]
    pub class: String,
    /// Executions with a hit of this cause in the session (repeats are counted, not
    /// shrunk), the one shrunk included.
    #[serde(default)]
    pub hits: u64,
    /// The cause's first hit: seconds into the session and execution number.
    #[serde(default)]
    pub first_seen: FirstSeen,
    /// Where its hits came from: generating attack classes, and `mutant` for mutants of
    /// seed archives.
    #[serde(default)]
    pub classes: Vec<String>,
    /// `cases/<id>` relative to the report directory.
    pub case_dir: String,
    /// The baseline ([`FuzzOptions::known`]) lists the cause: reported, not failing the
    /// session, and not counted against the check's slots.
    #[serde(default)]
    pub known: bool,
    /// How the shrink ended: `minimal`, or the budget that stopped it first (`steps`:
    /// `--shrink-runs`; `time`: the session's time), `interrupted`.
    #[serde(default)]
    pub shrink: ShrinkEnd,
}

/// The smallest archive that still gives a hit of `check` with the effect `kind` (when the
/// check has effect kinds, [`effect`]) ([`super::shrink::shrink_archive`]: members, then
/// records, then the tail), within `opts.shrink_runs` runs and the session's time; and how
/// the shrink ended (`minimal` unless a budget or a stop cut it short).
fn shrink(
    bytes: &[u8],
    (check, kind): (Check, Option<&str>),
    ex: &dyn Extractor,
    opts: &FuzzOptions,
    persist: &mut Persist,
    session_end: Instant,
) -> Result<(Vec<u8>, ShrinkEnd), HarnessError> {
    let mut runs = 0;
    let mut end = ShrinkEnd::Minimal;
    // Within the session's time; a finding made near its end still gets two timeouts'
    // worth (a `hang` costs a full timeout per run).
    let deadline = session_end.max(Instant::now() + opts.timeout * 2);
    let min = super::shrink::shrink_archive(bytes, |b| -> Result<Option<bool>, HarnessError> {
        let cut = if crate::jail::cleanup::stop_requested() {
            Some(ShrinkEnd::Interrupted)
        } else if runs >= opts.shrink_runs {
            Some(ShrinkEnd::Steps)
        } else if Instant::now() >= deadline {
            Some(ShrinkEnd::Time)
        } else {
            None
        };
        if let Some(c) = cut {
            end = c;
            return Ok(None);
        }
        runs += 1;
        Ok(Some(
            runnable(b, ex, opts)
                && execute(b, ex, opts, persist)?
                    .0
                    .iter()
                    .any(|h| h.check == check && effect(h, b).as_deref() == kind),
        ))
    })?;
    Ok((min, end))
}

/// Shrinks `p` (a hit whose estimated cause was new, [`super::causes::Causes::hit`]) and
/// writes its reproducer when the shrunk archive's cause is new; the finding written, if
/// any. A cause kept before takes the hit's count instead.
pub(super) fn shrink_and_write(
    shared: &Shared,
    persist: &mut Persist,
    p: Pending,
    seed: u64,
) -> Result<Option<FuzzFinding>, HarnessError> {
    let &Shared {
        ex,
        opts,
        causes,
        ref start,
        ..
    } = shared;
    let lock = || causes.lock().unwrap_or_else(|e| e.into_inner());
    let Pending {
        hit,
        bytes,
        label,
        mutations,
        iteration,
        class,
        estimate,
    } = p;
    if start.elapsed() > opts.time {
        lock().abandon(hit.check, &estimate);
        return Ok(None);
    }
    let kind = effect(&hit, &bytes);
    // Every run of a shrink under the cut: a candidate that hangs is not the smaller
    // reproducer of another check, and one that hangs is a hang.
    persist.cut = Some(super::worker::loop_cut(
        opts,
        persist,
        &lock(),
        Some(hit.check),
    ));
    let shrunk = shrink(
        &bytes,
        (hit.check, kind.as_deref()),
        ex,
        opts,
        persist,
        *start + opts.time,
    );
    persist.cut = None;
    let (mut min, mut end) = match shrunk {
        Ok(s) => s,
        Err(e) => {
            lock().abandon(hit.check, &estimate);
            return Err(e);
        }
    };
    let (again, _) = execute(&min, ex, opts, persist)?;
    let same = |h: &Hit| h.check == hit.check && effect(h, &min) == kind;
    let confirmed = match again.iter().position(same) {
        Some(i) => Some(again[i].clone()),
        None => again.into_iter().find(|h| h.check == hit.check),
    };
    // A hang shrunk under the cut may only have been slow: the archive found at the full
    // timeout is kept instead.
    if confirmed.is_none() && hit.check == Check::HANG {
        min = bytes;
        end = crate::report::ShrinkEnd::NotShrunk;
    }
    let hit = confirmed.unwrap_or(hit);
    let class = class.or_else(|| super::recognise::recognise(&min));
    let cause = fuzz_cause(&hit, &min, class);
    let known = opts
        .known
        .knows_key(&crate::report::CauseKey::of_fuzz_cause(hit.check, &cause));
    let charged = effect(&hit, &min).and(class);
    let mut causes = lock();
    let Some(n) = causes.resolve(hit.check, &estimate, &cause, charged, known) else {
        return Ok(None);
    };
    let stats = causes
        .kept()
        .iter()
        .find(|k| k.check == hit.check && k.cause == cause)
        .map(|k| (k.hits, k.first, k.origins.iter().cloned().collect()));
    drop(causes);
    let (hits, first_seen, classes) = stats.unwrap_or_default();
    let id = match (known, n) {
        (false, 1) => format!("{}__fuzz__{}", hit.check.id(), ex.name()),
        (false, _) => format!("{}__fuzz__{}__{n}", hit.check.id(), ex.name()),
        (true, 1) => format!("{}__fuzz__{}__known", hit.check.id(), ex.name()),
        (true, _) => format!("{}__fuzz__{}__known-{n}", hit.check.id(), ex.name()),
    };
    let finding = FuzzFinding {
        schema: 1,
        check: hit.check,
        extractor: ex.name().to_string(),
        profile: opts.profile.name.clone(),
        message: hit.message.clone(),
        seed,
        iteration,
        base: label,
        mutations,
        reference: judge_safety(&min, &opts.profile).verdict,
        records: Records::parse(&min).records.len(),
        cause,
        class: class_word(charged).to_string(),
        hits,
        first_seen,
        classes,
        case_dir: format!("cases/{id}"),
        known,
        shrink: end,
    };
    write_reproducer(
        &opts.report_dir.join("cases"),
        &id,
        &finding,
        &min,
        &hit,
        opts,
    )?;
    Ok(Some(finding))
}

/// Write the reproducer of `f` (its shrunk archive `archive`, the hit `hit`) as
/// `cases_dir/<id>`: `archive.tar`, `finding.json` (mode `fuzz`), `observed.txt` and
/// `repro.sh` (`snapconf fuzz --replay`).
fn write_reproducer(
    cases_dir: &Path,
    id: &str,
    f: &FuzzFinding,
    archive: &[u8],
    hit: &Hit,
    opts: &FuzzOptions,
) -> Result<(), HarnessError> {
    let repro = ReproDir::create(cases_dir, id)?;
    repro.write("archive.tar", archive)?;
    let mut meta = FindingFile::new(
        ReproMode::Fuzz,
        f.check,
        Some(f.extractor.clone()),
        f.message.clone(),
        ReplayConditions {
            profile: opts.profile.clone(),
            timeout_secs: opts.timeout.as_secs(),
            seed: Some(f.seed),
            case_index: None,
        },
    );
    meta.iteration = Some(f.iteration);
    meta.base = Some(f.base.clone());
    meta.mutations = f
        .mutations
        .iter()
        .map(|m| serde_json::to_value(m).unwrap_or_default())
        .collect();
    meta.reference = Some(f.reference.clone());
    meta.records = Some(f.records);
    meta.cause = Some(f.cause.clone());
    meta.case_dir = Some(f.case_dir.clone());
    meta.known = f.known;
    meta.shrink = Some(f.shrink);
    repro.write_finding(&meta)?;
    repro.write_evidence(None, false, &hit.message, hit.observed.as_deref())?;
    let ex = shell_word(&f.extractor);
    repro.write_script(
        f.check,
        &Script {
            pair: &format!(
                "fuzz of extractor `{}`: archive.tar over the fuzzer's prior workspace, in a fresh jail",
                f.extractor
            ),
            tools: &[format!("the tool behind extractor `{}`", f.extractor)],
            bin: &opts.bin,
            backends: &[],
            command: &format!(
                "fuzz --extractor {ex}{} --replay \"$here\"",
                opts.replay_args
            ),
        },
    )
}
