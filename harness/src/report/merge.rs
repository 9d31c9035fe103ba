//! Joining the reports of `snapconf run --shard K/N` into the report of the whole run
//! (`snapconf report merge`).
//!
//! Shards of one run draw their cases from the same seed and split the case indices, so the
//! whole run's matrix is the sum of theirs: pair counts add up, and each cell's first
//! finding is the one with the lowest case index over the shards (the one the unsharded run
//! would have found first; on a tie, or when an index is unknown, the earlier input). The
//! causes, the JUnit report and the baseline check follow from the merged findings.
//!
//! Each report says which shard it is ([`RunReport::shard`], `K/N`; a report without it is
//! the whole run, `1/1`; one written before the field existed is read from its
//! `shard K/N: ...` note). Two reports of one shard are refused (they would count its
//! cases twice); shards of another `N` are not of the same run; missing shards are
//! recorded in the merged report's [`RunReport::partial`].

use super::{
    FaultRow, FindingRecord, MissingShards, PairReport, RefusalCount, RunReport, SkippedAdapter,
};
use crate::checks::Check;
use crate::model::shard::Shard;
use std::collections::BTreeMap;

/// One report to merge: the run, and for each of its findings (same order) the index of
/// the generated case it was found in (`None` when unknown, e.g. an audit).
pub struct MergeInput {
    /// Where the report was read from (its directory), as messages name it.
    pub dir: String,
    /// A shard's report.
    pub run: RunReport,
    /// The case index of each of its findings, in order.
    pub case_index: Vec<Option<u64>>,
}

/// The shard `run` covers: [`RunReport::shard`]; else, for a report written before that
/// field, its `shard K/N: ...` note; else the whole run ([`Shard::ALL`]).
///
/// # Errors
/// The text of a `shard` field that is not `K/N`.
pub fn shard_of(run: &RunReport) -> Result<Shard, String> {
    if let Some(s) = &run.shard {
        return s.parse().map_err(|e| format!("shard field: {e}"));
    }
    let from_note = run.notes.iter().find_map(|n| {
        let (k_n, _) = n.strip_prefix("shard ")?.split_once(':')?;
        k_n.parse::<Shard>().ok()
    });
    Ok(from_note.unwrap_or(Shard::ALL))
}

/// The merged run, and for each of its findings the input (position in the slice) whose
/// reproducer it keeps.
pub struct Merged {
    /// The merged report (baseline not applied: `known` is false, `fixed` empty).
    pub run: RunReport,
    /// For each merged finding, the input whose reproducer it keeps.
    pub source: Vec<usize>,
}

/// Merge `inputs` (at least one). `Err` says which input does not belong to the first's run:
/// a different mode (`run` and `lifecycle` shards do not mix), seed, profile, audited
/// directory or shard count; or names the two directories of one shard given twice.
/// Shards missing are in the merged report's `partial`; each input's `incomplete`
/// sentences carry over.
pub fn merge(inputs: &[MergeInput]) -> Result<Merged, String> {
    let Some(first) = inputs.first() else {
        return Err("no report to merge".into());
    };
    let base = &first.run;
    if base.mode == super::Mode::Fuzz {
        return Err(
            "a fuzz session has no shards: its report is whole as written, not merged".into(),
        );
    }
    for (i, m) in inputs.iter().enumerate().skip(1) {
        let r = &m.run;
        let differs = |what: &str, a: &dyn std::fmt::Display, b: &dyn std::fmt::Display| {
            format!(
                "report {} has {what} {b}, report 1 has {a}: not shards of one run",
                i + 1
            )
        };
        if r.mode != base.mode {
            return Err(format!(
                "report {} was written by `snapconf {}`, report 1 by `snapconf {}`: not shards of one run",
                i + 1,
                r.mode.command(),
                base.mode.command()
            ));
        }
        if r.seed != base.seed {
            return Err(differs("seed", &base.seed, &r.seed));
        }
        if r.profile != base.profile {
            return Err(differs("profile", &base.profile, &r.profile));
        }
        if r.audited != base.audited {
            return Err(format!(
                "report {} audits another directory than report 1: not shards of one run",
                i + 1
            ));
        }
    }
    let partial = missing_shards(inputs)?;
    let mut pairs: BTreeMap<(String, String), PairReport> = BTreeMap::new();
    let mut cells: BTreeMap<(String, String, Check), (u64, usize, FindingRecord)> = BTreeMap::new();
    let mut refusals: BTreeMap<(String, String), u64> = BTreeMap::new();
    let mut skipped: Vec<SkippedAdapter> = Vec::new();
    let mut faults: Vec<FaultRow> = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    let mut incomplete: Vec<String> = Vec::new();
    let (mut cases, mut skipped_entries) = (0, 0);
    for (i, m) in inputs.iter().enumerate() {
        let r = &m.run;
        cases += r.cases;
        skipped_entries += r.skipped_entries;
        for p in &r.pairs {
            let into = pairs
                .entry((p.producer.clone(), p.extractor.clone()))
                .or_insert_with(|| PairReport::new(&p.producer, &p.extractor));
            into.cases += p.cases;
            into.passed += p.passed;
            into.skipped += p.skipped;
            for (check, n) in &p.findings {
                *into.findings.entry(check.clone()).or_default() += n;
            }
        }
        for (j, f) in r.findings.iter().enumerate() {
            let index = m.case_index.get(j).copied().flatten().unwrap_or(u64::MAX);
            let key = (f.producer.clone(), f.extractor.clone(), f.check);
            match cells.get_mut(&key) {
                None => {
                    cells.insert(key, (index, i, f.clone()));
                }
                Some((best, src, kept)) => {
                    let count = kept.count + f.count;
                    if index < *best {
                        (*best, *src, *kept) = (index, i, f.clone());
                    }
                    kept.count = count;
                }
            }
        }
        for c in &r.capture_refusals {
            *refusals
                .entry((c.producer.clone(), c.feature.clone()))
                .or_default() += c.count;
        }
        for a in &r.skipped_adapters {
            if !skipped.iter().any(|s| s.name == a.name) {
                skipped.push(a.clone());
            }
        }
        for row in &r.faults {
            match faults
                .iter_mut()
                .find(|f| f.extractor == row.extractor && f.fault == row.fault)
            {
                Some(f) => {
                    f.runs += row.runs;
                    f.failed_intact += row.failed_intact;
                    f.failed_damaged += row.failed_damaged;
                    f.accepted += row.accepted;
                    f.skipped += row.skipped;
                    if f.skip_reason.is_none() {
                        f.skip_reason = row.skip_reason.clone();
                    }
                }
                None => faults.push(row.clone()),
            }
        }
        for n in &r.incomplete {
            if !incomplete.contains(n) {
                incomplete.push(n.clone());
            }
        }
        for n in &r.notes {
            // A shard's own note ("shard 1/2: 10 of 20 cases") does not describe the whole.
            if !n.starts_with("shard ") && !notes.contains(n) {
                notes.push(n.clone());
            }
        }
    }
    faults.sort_by(|a, b| a.extractor.cmp(&b.extractor));
    notes.push(format!("merged from {} shard report(s)", inputs.len()));
    let mut findings = Vec::with_capacity(cells.len());
    let mut source = Vec::with_capacity(cells.len());
    for (_, (_, src, mut f)) in cells {
        f.known = false;
        findings.push(f);
        source.push(src);
    }
    Ok(Merged {
        run: RunReport {
            schema: base.schema,
            mode: base.mode,
            seed: base.seed,
            cases,
            profile: base.profile.clone(),
            pairs: pairs.into_values().collect(),
            findings,
            capture_refusals: RefusalCount::rows(refusals),
            skipped_adapters: skipped,
            skipped_entries,
            fixed: Vec::new(),
            faults,
            notes,
            audited: base.audited.clone(),
            shard: None,
            incomplete,
            partial,
        },
        source,
    })
}

/// The shards of the run that no input covers (`None` when every one is there).
///
/// # Errors
/// Two inputs of one shard (naming both directories), or inputs of different shard counts.
fn missing_shards(inputs: &[MergeInput]) -> Result<Option<MissingShards>, String> {
    let mut seen: BTreeMap<u64, &str> = BTreeMap::new();
    let mut of = None;
    for m in inputs {
        let shard = shard_of(&m.run).map_err(|e| format!("`{}`: {e}", m.dir))?;
        match of {
            None => of = Some((shard.n(), m.dir.as_str())),
            Some((n, first)) if n != shard.n() => {
                return Err(format!(
                    "`{}` is shard {shard}, `{first}` one of {n}: not shards of one run",
                    m.dir
                ));
            }
            Some(_) => {}
        }
        if let Some(other) = seen.insert(shard.k(), &m.dir) {
            return Err(format!(
                "`{other}` and `{}` are both shard {shard} of one run (seed {}): each shard \
                 counts once; pass one of them",
                m.dir, m.run.seed
            ));
        }
    }
    let Some((n, _)) = of else {
        return Ok(None);
    };
    let missing: Vec<u64> = (1..=n).filter(|k| !seen.contains_key(k)).collect();
    Ok((!missing.is_empty()).then_some(MissingShards { of: n, missing }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::ShrinkEnd;

    /// Shard `k` of 2 of a run of `seed`, `cases` of its cases, written before reports had
    /// a `shard` field (the shard is in its note) when `k` is odd, with it when even.
    fn run(seed: u64, k: u64, cases: u64, findings: Vec<FindingRecord>) -> RunReport {
        let mut pair = PairReport::new("p", "e");
        pair.cases = cases;
        pair.passed = cases - findings.iter().map(|f| f.count).sum::<u64>();
        for f in &findings {
            pair.findings.insert(f.check.id().into(), f.count);
        }
        RunReport {
            pairs: vec![pair],
            findings,
            notes: vec![format!("shard {k}/2: {cases} of 20 cases")],
            shard: k.is_multiple_of(2).then(|| format!("{k}/2")),
            ..RunReport::empty(Default::default(), seed, cases, "default")
        }
    }

    fn rec(count: u64, entries: usize) -> FindingRecord {
        FindingRecord {
            check: Check::ROUNDTRIP,
            producer: "p".into(),
            extractor: "e".into(),
            case_dir: "cases/roundtrip__p__e".into(),
            entries,
            message: "differs".into(),
            count,
            capture_side: false,
            fingerprint: String::new(),
            known: true,
            shrink: ShrinkEnd::Minimal,
            cause: None,
            trigger: Default::default(),
        }
    }

    /// Counts add up; the cell keeps the finding of the lowest case index, from any input.
    #[test]
    fn shards_sum_and_keep_the_first_case() {
        let a = input("a", run(7, 1, 10, vec![rec(2, 5)]), vec![Some(9)]);
        let b = input("b", run(7, 2, 10, vec![rec(3, 1)]), vec![Some(4)]);
        let m = merge(&[a, b]).expect("merges");
        assert_eq!(m.run.cases, 20);
        assert_eq!(m.run.pairs[0].cases, 20);
        assert_eq!(m.run.pairs[0].passed, 15);
        assert_eq!(m.run.pairs[0].findings["roundtrip"], 5);
        assert_eq!(m.run.findings.len(), 1);
        assert_eq!(m.run.findings[0].count, 5);
        assert_eq!(m.run.findings[0].entries, 1, "case 4 is the first");
        assert!(!m.run.findings[0].known, "the baseline is applied afresh");
        assert_eq!(m.source, [1]);
        assert_eq!(m.run.notes, ["merged from 2 shard report(s)"]);
        assert_eq!(m.run.partial, None, "both shards are there");
    }

    fn input(dir: &str, run: RunReport, case_index: Vec<Option<u64>>) -> MergeInput {
        MergeInput {
            dir: dir.into(),
            run,
            case_index,
        }
    }

    /// Two reports of one shard (by field or by note) are refused, naming both; a
    /// missing shard is recorded, not hidden; a whole run given twice is a duplicate.
    #[test]
    fn duplicate_shards_are_refused_and_missing_ones_recorded() {
        for k in [1, 2] {
            let a = input("a", run(7, k, 10, vec![]), vec![]);
            let b = input("b", run(7, k, 10, vec![]), vec![]);
            let err = merge(&[a, b]).err().expect("one shard twice");
            assert!(
                err.contains("`a` and `b` are both shard") && err.contains(&format!("{k}/2")),
                "{err}"
            );
        }
        let m = merge(&[input("b", run(7, 2, 10, vec![]), vec![])]).expect("merges");
        assert_eq!(
            m.run.partial,
            Some(MissingShards {
                of: 2,
                missing: vec![1]
            })
        );
        assert!(m.run.shortfall()[0].contains("shard(s) 1 of 2 missing"));
        let whole = || {
            let mut r = run(7, 1, 20, vec![]);
            r.notes.clear();
            r
        };
        let err = merge(&[input("x", whole(), vec![]), input("y", whole(), vec![])])
            .err()
            .expect("a whole run twice");
        assert!(err.contains("`x` and `y` are both shard 1/1"), "{err}");
        let err = merge(&[
            input("x", whole(), vec![]),
            input("s", run(7, 2, 10, vec![]), vec![]),
        ])
        .err()
        .expect("a whole run and a shard");
        assert!(err.contains("not shards of one run"), "{err}");
    }

    #[test]
    fn reports_of_different_runs_do_not_merge() {
        let a = input("a", run(7, 1, 10, vec![]), vec![]);
        let b = input("b", run(8, 2, 10, vec![]), vec![]);
        let err = merge(&[a, b]).err().expect("different seeds");
        assert!(err.contains("seed 8") && err.contains("report 2"), "{err}");
        assert!(merge(&[]).is_err());
    }
}
