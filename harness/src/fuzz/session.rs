//! The fuzz loop: pick a base archive, mutate it, run it through the extractor over a small
//! prior workspace in a jail, judge the outcome, shrink and write each new finding kind.

use super::judge::{host_safe, judge, privileged_or_special};
use super::mutate::{mutate, Mutation};
use super::records::Records;
use super::rng::Rng;
use crate::checks::Check;
use crate::error::{HarnessError, IoContext};
use crate::jail::Jail;
use crate::model::profile::{ModeRule, Profile};
use crate::workspace::diff::diff_trees;
use crate::workspace::observe::observe;
use serde::Serialize;
use snapconf_producers::{Extractor, HydrateRequest, Outcome};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What a fuzz session needs.
pub struct FuzzOptions {
    /// Base archives: `(label, bytes)`, e.g. the files of `corpora/seeds` and
    /// `corpora/adversarial`.
    pub bases: Vec<(String, Vec<u8>)>,
    /// The profile the extractor promises (decides which mode bits are outside policy).
    pub profile: Profile,
    /// Wall-clock budget for the whole session.
    pub time: Duration,
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
}

/// One finding of a session (the first of its check), as written to `finding.json`.
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
    /// The base archive's label.
    pub base: String,
    /// The mutations applied to the base.
    pub mutations: Vec<Mutation>,
    /// The reference's verdict on the shrunk archive.
    pub reference: String,
    /// Records (headers, extension headers included) in the shrunk archive.
    pub records: usize,
    /// `cases/<id>` relative to the report directory.
    pub case_dir: String,
}

/// Progress events.
#[derive(Clone, Debug)]
pub enum FuzzEvent {
    /// A new finding kind was found and written.
    Found(Box<FuzzFinding>),
}

/// The end of a session.
#[derive(Clone, Debug, Default, Serialize)]
pub struct FuzzSummary {
    /// Archives run through the extractor.
    pub executions: u64,
    /// Mutants skipped because they could reach past the jail ([`super::host_safe`]).
    pub skipped_unsafe_for_host: u64,
    /// Extractor refusals, acceptances.
    pub refused: u64,
    /// Extractor acceptances.
    pub accepted: u64,
    /// One per check found, in order of discovery.
    pub findings: Vec<FuzzFinding>,
}

/// A finding of one execution (before shrinking).
#[derive(Clone, Debug)]
struct Hit {
    check: Check,
    message: String,
    evidence: String,
}

/// The small prior every execution hydrates over: a file, a directory with a file.
fn write_prior(root: &Path) -> std::io::Result<()> {
    std::fs::write(root.join("a"), b"old a\n")?;
    std::fs::create_dir(root.join("d"))?;
    std::fs::write(root.join("d/f"), b"old d/f\n")
}

/// Run `bytes` through `ex` once in a fresh jail; every check that fails, in order
/// containment, hang, atomic-hydration, unsafe-accept.
fn execute(
    bytes: &[u8],
    ex: &dyn Extractor,
    opts: &FuzzOptions,
) -> Result<(Vec<Hit>, bool), HarnessError> {
    let mut jail = Jail::new(opts.jail_base.as_deref()).ctx(|| "cannot create a jail".into())?;
    let archive = jail.archive();
    std::fs::write(&archive, bytes).ctx(|| "cannot write the archive".into())?;
    let root = jail.fresh_dir("h").ctx(|| "cannot create a root".into())?;
    write_prior(&root).ctx(|| "cannot write the prior workspace".into())?;
    let w0 = observe(&root).ctx(|| "cannot observe the prior".into())?;
    let scratch = jail
        .fresh_dir("scratch")
        .ctx(|| "cannot create scratch".into())?;
    let before = jail.snapshot().ctx(|| "cannot observe the jail".into())?;
    let outcome = ex.hydrate(&HydrateRequest {
        archive: &archive,
        root: &root,
        scratch: &scratch,
        limits: None,
        timeout: opts.timeout,
    })?;
    let after = jail.snapshot().ctx(|| "cannot observe the jail".into())?;
    let rel = jail.rel(&root);
    let changes = before.changes(&after, &[&rel]);
    let mut hits = Vec::new();
    if let Some(first) = changes.first() {
        hits.push(Hit {
            check: Check::Containment,
            message: format!("hydration changed the jail outside the root: {first}"),
            evidence: changes.join("\n"),
        });
    }
    let accepted = matches!(outcome, Outcome::Success);
    match outcome {
        Outcome::Hang { message } => hits.push(Hit {
            check: Check::Hang,
            message: format!("hydration: {message}"),
            evidence: String::new(),
        }),
        Outcome::Refused { message } => {
            let now = observe(&root).ctx(|| "cannot observe the root".into())?;
            let d = diff_trees(&w0, &now);
            if !d.is_empty() {
                hits.push(Hit {
                    check: Check::AtomicHydration,
                    message: format!(
                        "refused hydration changed the prior workspace: {}",
                        d.to_string()
                            .lines()
                            .find(|l| !l.trim().is_empty())
                            .unwrap_or("")
                            .trim()
                    ),
                    evidence: format!(
                        "hydration refused:\n{message}\n\ndiff (- prior, + after):\n{d}"
                    ),
                });
            }
        }
        Outcome::Success => {
            let j = judge(bytes, &opts.profile);
            if j.unsafe_reason.is_some() || j.privileged_mode {
                let now = observe(&root).ctx(|| "cannot observe the root".into())?;
                let strip = opts.profile.modes != ModeRule::Exact;
                let landed = privileged_or_special(&now, strip);
                if let Some(first) = landed.first() {
                    hits.push(Hit {
                        check: Check::UnsafeAccept,
                        message: format!(
                            "accepted an archive the reference refuses or filters ({}); {first}",
                            j.unsafe_reason.as_deref().unwrap_or("privileged mode bits")
                        ),
                        evidence: format!(
                            "reference: {}\noutside policy:\n{}\n",
                            j.verdict,
                            landed.join("\n")
                        ),
                    });
                }
            }
        }
    }
    Ok((hits, accepted))
}

/// Drop records one at a time while `check` still reproduces, within `budget` runs.
fn shrink(
    bytes: &[u8],
    check: Check,
    ex: &dyn Extractor,
    opts: &FuzzOptions,
) -> Result<Vec<u8>, HarnessError> {
    let mut recs = Records::parse(bytes);
    let mut runs = 0;
    let mut i = 0;
    // Shrinking a `hang` costs a full timeout per run: stop at the session's budget.
    let deadline = Instant::now() + opts.time.max(opts.timeout * 2);
    while i < recs.records.len() && runs < opts.shrink_runs && Instant::now() < deadline {
        let mut cand = recs.clone();
        cand.records.remove(i);
        let b = cand.to_bytes();
        runs += 1;
        if host_safe(&b) && execute(&b, ex, opts)?.0.iter().any(|h| h.check == check) {
            recs = cand;
        } else {
            i += 1;
        }
    }
    // A shorter tail (end-of-archive blocks, garbage) when that still reproduces.
    if !recs.tail.is_empty() && runs < opts.shrink_runs {
        let mut cand = recs.clone();
        cand.tail = vec![0; 1024.min(cand.tail.len())];
        let b = cand.to_bytes();
        if host_safe(&b) && execute(&b, ex, opts)?.0.iter().any(|h| h.check == check) {
            recs = cand;
        }
    }
    Ok(recs.to_bytes())
}

/// Run a fuzz session against `ex`. `Err` only for faults of snapconf itself.
pub fn fuzz(
    ex: &dyn Extractor,
    opts: &FuzzOptions,
    on_event: &mut dyn FnMut(FuzzEvent),
) -> Result<FuzzSummary, HarnessError> {
    let bases: Vec<(String, Records)> = opts
        .bases
        .iter()
        .map(|(l, b)| (l.clone(), Records::parse(b)))
        .collect();
    if bases.is_empty() {
        return Err(HarnessError::Other("no base archives to mutate".into()));
    }
    let mut rng = Rng::new(opts.seed);
    let start = Instant::now();
    let mut summary = FuzzSummary::default();
    let mut found: BTreeMap<Check, ()> = BTreeMap::new();
    let mut iteration = 0u64;
    while start.elapsed() < opts.time {
        iteration += 1;
        let (label, base) = &bases[rng.below(bases.len())];
        let n = 1 + rng.below(4);
        let (bytes, mutations) = mutate(base, &mut rng, n);
        if !host_safe(&bytes) {
            summary.skipped_unsafe_for_host += 1;
            continue;
        }
        let (hits, accepted) = execute(&bytes, ex, opts)?;
        summary.executions += 1;
        if accepted {
            summary.accepted += 1;
        } else {
            summary.refused += 1;
        }
        for hit in hits {
            if found.contains_key(&hit.check) {
                continue;
            }
            found.insert(hit.check, ());
            let min = shrink(&bytes, hit.check, ex, opts)?;
            let (again, _) = execute(&min, ex, opts)?;
            let hit = again
                .into_iter()
                .find(|h| h.check == hit.check)
                .unwrap_or(hit);
            let id = format!("{}__fuzz__{}", hit.check.id(), ex.name());
            let finding = FuzzFinding {
                schema: 1,
                check: hit.check,
                extractor: ex.name().to_string(),
                profile: opts.profile.name.clone(),
                message: hit.message.clone(),
                seed: opts.seed,
                iteration: iteration - 1,
                base: label.clone(),
                mutations: mutations.clone(),
                reference: judge(&min, &opts.profile).verdict,
                records: Records::parse(&min).records.len(),
                case_dir: format!("cases/{id}"),
            };
            write_reproducer(
                &opts.report_dir.join("cases").join(&id),
                &finding,
                &min,
                &hit,
                &opts.bin,
            )?;
            on_event(FuzzEvent::Found(Box::new(finding.clone())));
            summary.findings.push(finding);
        }
    }
    Ok(summary)
}

fn write_reproducer(
    dir: &Path,
    f: &FuzzFinding,
    archive: &[u8],
    hit: &Hit,
    bin: &Path,
) -> Result<(), HarnessError> {
    if dir.exists() {
        crate::workspace::materialise::remove_tree(dir)
            .ctx(|| format!("cannot replace `{}`", dir.display()))?;
    }
    std::fs::create_dir_all(dir).ctx(|| format!("cannot create `{}`", dir.display()))?;
    let w = |name: &str, data: &[u8]| {
        std::fs::write(dir.join(name), data)
            .ctx(|| format!("cannot write `{}`", dir.join(name).display()))
    };
    w("archive.tar", archive)?;
    w(
        "finding.json",
        serde_json::to_string_pretty(f)
            .unwrap_or_default()
            .as_bytes(),
    )?;
    w(
        "observed.txt",
        format!("{}\n\n{}", hit.message, hit.evidence).as_bytes(),
    )?;
    let script = format!(
        "#!/bin/sh\n\
         # Re-runs snapconf fuzz finding `{check}` of extractor `{ex}` on archive.tar, over the\n\
         # fuzzer's prior workspace in a fresh jail.\n\
         # Exits 1 while the finding reproduces, 0 once it is fixed, 2/3 when it cannot run.\n\
         here=$(cd \"$(dirname \"$0\")\" && pwd)\n\
         SNAPCONF=${{SNAPCONF:-{bin}}}\n\
         command -v \"$SNAPCONF\" >/dev/null 2>&1 || SNAPCONF=snapconf\n\
         exec \"$SNAPCONF\" fuzz --extractor {ex} --profile {profile} --replay \"$here\"\n",
        check = f.check,
        ex = f.extractor,
        profile = f.profile,
        bin = bin.display(),
    );
    w("repro.sh", script.as_bytes())?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir.join("repro.sh"), std::fs::Permissions::from_mode(0o755))
        .ctx(|| "cannot make repro.sh executable".into())?;
    Ok(())
}

/// Re-run a reproducer directory's `archive.tar` through `ex`: the checks that fail now.
///
/// # Errors
/// The archive cannot be read, or a fault of snapconf itself.
pub fn replay_finding(
    dir: &Path,
    ex: &dyn Extractor,
    opts: &FuzzOptions,
) -> Result<Vec<(Check, String)>, HarnessError> {
    let bytes = std::fs::read(dir.join("archive.tar"))
        .ctx(|| format!("cannot read `{}`", dir.join("archive.tar").display()))?;
    if !host_safe(&bytes) {
        return Err(HarnessError::Other(
            "archive.tar could reach past the jail (absolute names or several `..`); not run"
                .into(),
        ));
    }
    Ok(execute(&bytes, ex, opts)?
        .0
        .into_iter()
        .map(|h| (h.check, h.message))
        .collect())
}
