//! The report data (`report.json`, schema [`REPORT_SCHEMA`]), in stable order.

use super::{causes, BaselineEntry, Cause};
use crate::checks::Check;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The schema of the `report.json` this version writes: 2 adds `causes` and computes
/// `fingerprint` from the message with names abstracted ([`super::shape`]); schema 1
/// reports are still read (their fingerprints are recomputed where they are used).
pub const REPORT_SCHEMA: u32 = 2;

/// Which command wrote a report. Every mode writes the same files with the same model;
/// what a "case" and a "pair" are depends on it (see [`Mode::unit`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// `snapconf run` (and `report merge` of its shards): generated cases through every
    /// producer × extractor pair. Reports written before the field existed read as this.
    #[default]
    Run,
    /// `snapconf audit DIR`: one real directory through every pair (`audited` names it).
    Audit,
    /// `snapconf fuzz --extractor X`: archives drawn and mutated, run through one extractor;
    /// the pair's producer is [`FUZZ_PRODUCER`], a case is one execution, and a cell may hold
    /// several findings, one per cause (told apart by [`FindingRecord::cause`]).
    Fuzz,
    /// `snapconf lifecycle`: a case is a sequence of turns through one instance of a pair.
    Lifecycle,
}

/// The producer named in the pair of a fuzz report: the archives are drawn and mutated by
/// the fuzzer, no producer made them.
pub const FUZZ_PRODUCER: &str = "fuzz";

impl Mode {
    /// The command, as in a title: `run`, `audit`, `fuzz`, `lifecycle`.
    pub fn command(self) -> &'static str {
        match self {
            Mode::Run => "run",
            Mode::Audit => "audit",
            Mode::Fuzz => "fuzz",
            Mode::Lifecycle => "lifecycle",
        }
    }

    /// What the report's `cases` count, in the plural: `cases`, `executions` (fuzz),
    /// `sequences` (lifecycle).
    pub fn unit(self) -> &'static str {
        match self {
            Mode::Run | Mode::Audit => "cases",
            Mode::Fuzz => "executions",
            Mode::Lifecycle => "sequences",
        }
    }
}

/// A whole run. Pairs are sorted by (producer, extractor); findings likewise, then by check.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunReport {
    /// Report schema version ([`REPORT_SCHEMA`] when written by [`ReportFile::new`]).
    pub schema: u32,
    /// The command that wrote the report (`run` for reports without the field).
    #[serde(default)]
    pub mode: Mode,
    /// The seed the cases were drawn from.
    pub seed: u64,
    /// Cases drawn (each through every pair).
    pub cases: u64,
    /// Profile name.
    pub profile: String,
    /// One row per pair.
    pub pairs: Vec<PairReport>,
    /// The first finding of each (pair, check) cell, shrunk, with its occurrence count.
    pub findings: Vec<FindingRecord>,
    /// Capture refusals per producer and per feature the refused workspace had.
    pub capture_refusals: Vec<RefusalCount>,
    /// Adapters that could not run here, with why and how to install them.
    pub skipped_adapters: Vec<SkippedAdapter>,
    /// Spec entries this machine could not create (char devices when not root).
    pub skipped_entries: u64,
    /// Baseline entries not seen in this run (only with `--baseline`).
    #[serde(default)]
    pub fixed: Vec<BaselineEntry>,
    /// One row per extractor × fault (only with `--faults`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<super::FaultRow>,
    /// Things the run could not do on this machine (no private mount namespace, no tmpfs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The directory `snapconf audit` ran on (absent for `snapconf run`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audited: Option<String>,
    /// The shard this report covers, `K/N` (`run`/`lifecycle --shard`; absent for a whole
    /// run); `report merge` reads it to find duplicate and missing shards.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
    /// What was asked and did not run, one sentence each (a tool asked for that is not
    /// available here, shards missing from a merge): the report covers less than was
    /// asked, and the command exits [`crate::exit::INCOMPLETE`]. Empty when all ran.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub incomplete: Vec<String>,
    /// `report merge` of shards with some missing: which (1-based) of how many. Set with
    /// and without `--allow-partial`; the exit code differs (see [`crate::exit`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partial: Option<MissingShards>,
}

/// The shards a merged report lacks.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MissingShards {
    /// The shard count of the run (`N` of `--shard K/N`).
    pub of: u64,
    /// The missing shard numbers (`K`, 1-based), ascending.
    pub missing: Vec<u64>,
}

impl MissingShards {
    /// `shard(s) 2, 4 of 4 missing`.
    pub fn describe(&self) -> String {
        let list: Vec<String> = self.missing.iter().map(u64::to_string).collect();
        format!("shard(s) {} of {} missing", list.join(", "), self.of)
    }
}

impl RunReport {
    /// A report of `mode` with `seed`, `cases` and `profile` and nothing else yet (no
    /// pair, finding, refusal, skipped adapter, fault row or note), schema
    /// [`REPORT_SCHEMA`]: what a mode fills in.
    pub fn empty(mode: Mode, seed: u64, cases: u64, profile: &str) -> RunReport {
        RunReport {
            schema: REPORT_SCHEMA,
            mode,
            seed,
            cases,
            profile: profile.to_string(),
            pairs: Vec::new(),
            findings: Vec::new(),
            capture_refusals: Vec::new(),
            skipped_adapters: Vec::new(),
            skipped_entries: 0,
            fixed: Vec::new(),
            faults: Vec::new(),
            notes: Vec::new(),
            audited: None,
            shard: None,
            incomplete: Vec::new(),
            partial: None,
        }
    }

    /// The report's title: `snapconf run`, `snapconf audit of <dir>`, `snapconf fuzz of
    /// <extractor>`, `snapconf lifecycle`.
    pub fn title(&self) -> String {
        match (&self.audited, self.mode) {
            (Some(dir), _) => format!("snapconf audit of {dir}"),
            (None, Mode::Fuzz) => {
                let ex: Vec<&str> = self.pairs.iter().map(|p| p.extractor.as_str()).collect();
                format!("snapconf fuzz of {}", ex.join(", "))
            }
            (None, m) => format!("snapconf {}", m.command()),
        }
    }
}

impl RunReport {
    /// The check columns of the matrix, in column order: every built-in check a run can
    /// find, then any other check that has a finding here (a reference self-check, a
    /// test's own check).
    pub fn columns(&self) -> Vec<Check> {
        let mut cols: Vec<Check> = Check::ALL
            .into_iter()
            .filter(|c| c.column() < crate::checks::CheckDef::ONLY_WHEN_FOUND)
            .collect();
        for f in &self.findings {
            if !cols.contains(&f.check) {
                cols.push(f.check);
            }
        }
        cols.sort();
        cols
    }

    /// True if any pair has a finding.
    pub fn has_findings(&self) -> bool {
        !self.findings.is_empty()
    }

    /// True if any finding is not in the baseline (all are new without `--baseline`).
    pub fn has_new_findings(&self) -> bool {
        self.findings.iter().any(|f| !f.known)
    }

    /// The pairs of a `run` or `audit` that ran no case: every capture refused (a producer
    /// whose tool fails outright, say a broken `gzip` under `tar -z`, refuses them all), so
    /// they conform only by having nothing to judge. None in `fuzz` and `lifecycle`, whose
    /// `skipped` counts something else.
    pub fn idle_pairs(&self) -> Vec<&PairReport> {
        if !matches!(self.mode, Mode::Run | Mode::Audit) {
            return Vec::new();
        }
        self.pairs
            .iter()
            .filter(|p| p.cases > 0 && p.skipped == p.cases && p.findings.is_empty())
            .collect()
    }

    /// True if there were pairs and none of them ran a case: each is idle
    /// ([`RunReport::idle_pairs`]) or ran none at all (a fuzz session of 0 executions).
    pub fn nothing_ran(&self) -> bool {
        let idle = self.idle_pairs();
        !self.pairs.is_empty()
            && self
                .pairs
                .iter()
                .all(|p| p.cases == 0 || idle.iter().any(|i| std::ptr::eq(*i, p)))
    }

    /// What this report lacks, one sentence each: [`RunReport::incomplete`], then
    /// [`RunReport::partial`] (said even when `--allow-partial` accepted it).
    pub fn shortfall(&self) -> Vec<String> {
        let mut out = self.incomplete.clone();
        if let Some(p) = &self.partial {
            let said = p.describe();
            if !out.iter().any(|s| s.contains(&said)) {
                out.push(format!("partial: {said}"));
            }
        }
        out
    }
}

/// One producer × extractor pair.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PairReport {
    /// The producer of the pair.
    pub producer: String,
    /// The extractor of the pair.
    pub extractor: String,
    /// Cases run through this pair.
    pub cases: u64,
    /// Cases with an archive and no finding.
    pub passed: u64,
    /// Cases whose capture was refused (nothing to hydrate).
    pub skipped: u64,
    /// Cases with a finding, per check id.
    pub findings: BTreeMap<String, u64>,
}

impl PairReport {
    /// An empty pair.
    pub fn new(producer: &str, extractor: &str) -> Self {
        PairReport {
            producer: producer.to_string(),
            extractor: extractor.to_string(),
            cases: 0,
            passed: 0,
            skipped: 0,
            findings: BTreeMap::new(),
        }
    }
}

/// The first, shrunk finding of one (pair, check) cell.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FindingRecord {
    /// The check the cell failed.
    pub check: Check,
    /// The producer of the cell.
    pub producer: String,
    /// The extractor of the cell.
    pub extractor: String,
    /// The reproducer, relative to the report directory (`cases/<id>`).
    pub case_dir: String,
    /// Entries in the shrunk W1 spec.
    pub entries: usize,
    /// The shrunk case's message.
    pub message: String,
    /// Cases in which this cell failed.
    pub count: u64,
    /// True for capture-side checks (the producer alone is at fault).
    pub capture_side: bool,
    /// Digest of the check and the shrunk case's message with names abstracted: with the
    /// check and side, the key of the finding's cause (see [`super::fingerprint`]).
    pub fingerprint: String,
    /// True when the baseline lists this finding.
    #[serde(default)]
    pub known: bool,
    /// Why shrinking ended: `minimal`, or a budget (`steps`, `time`), `interrupted`,
    /// `total-spent`, `not-shrunk` (see [`crate::report::ShrinkEnd`]).
    #[serde(default)]
    pub shrink: crate::report::ShrinkEnd,
    /// A fuzz finding's cause signature (the fuzzer's signature of the shrunk archive,
    /// or `prior: <message>` for `atomic-hydration`): when present, it, not the message,
    /// is what the fingerprint digests ([`FindingRecord::key_fingerprint`]). Absent for
    /// the other modes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
    /// What the shrunk reproducer holds that the cause key is made of: its workspace's
    /// features and its tree diff's kinds (see [`super::Trigger`]). Empty in reports
    /// written before it existed and in fuzz reports.
    #[serde(default, skip_serializing_if = "super::Trigger::is_empty")]
    pub trigger: super::Trigger,
}

impl FindingRecord {
    /// The fingerprint of this finding's cause, computed now (never the stored field):
    /// the fingerprint of [`super::CauseKey::of`].
    pub fn key_fingerprint(&self) -> String {
        super::CauseKey::of(self).fingerprint
    }
}

/// Capture refusals of one producer for workspaces with one feature.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RefusalCount {
    /// The producer that refused.
    pub producer: String,
    /// The workspace feature it refused.
    pub feature: String,
    /// Captures refused.
    pub count: u64,
}

impl RefusalCount {
    /// The rows of `counts` (refusals by producer and feature), in key order.
    pub fn rows(counts: std::collections::BTreeMap<(String, String), u64>) -> Vec<RefusalCount> {
        counts
            .into_iter()
            .map(|((producer, feature), count)| RefusalCount {
                producer,
                feature,
                count,
            })
            .collect()
    }
}

/// An adapter that could not run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SkippedAdapter {
    /// The adapter's name.
    pub name: String,
    /// Why it cannot run here.
    pub reason: String,
    /// What would make it run (a package to install).
    pub install_hint: String,
}

/// What `report.json` holds: the run ([`RunReport`], its fields at the top level) and its
/// causes, most severe first.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ReportFile {
    /// The run, its fields at the top level of the file.
    #[serde(flatten)]
    pub run: RunReport,
    /// The causes of `run.findings` (see [`super::causes`]); absent in schema 1.
    #[serde(default)]
    pub causes: Vec<Cause>,
}

impl ReportFile {
    /// The file for `run` (after its baseline is applied): schema [`REPORT_SCHEMA`], every
    /// finding's fingerprint recomputed, causes ranked.
    pub fn new(mut run: RunReport) -> ReportFile {
        run.schema = REPORT_SCHEMA;
        for f in &mut run.findings {
            f.fingerprint = f.key_fingerprint();
        }
        let causes = causes(&run);
        ReportFile { run, causes }
    }

    /// The exit code of the command that wrote this file: [`crate::exit::INCOMPLETE`] when
    /// something asked did not run ([`RunReport::incomplete`]), else
    /// [`crate::exit::FINDINGS`] when a finding is new (not in the baseline), else
    /// [`crate::exit::NOTHING_RAN`] when no pair ran a case, else [`crate::exit::OK`].
    pub fn exit_code(&self) -> i32 {
        if !self.run.incomplete.is_empty() {
            crate::exit::INCOMPLETE
        } else if self.run.has_new_findings() {
            crate::exit::FINDINGS
        } else if self.run.nothing_ran() {
            crate::exit::NOTHING_RAN
        } else {
            crate::exit::OK
        }
    }

    /// Read `report.json` of schema 1 or 2: a regular file of at most
    /// [`CONFIG_LIMIT`](snapconf_producers::input::CONFIG_LIMIT) bytes. `Err` names the file.
    pub fn load(path: &std::path::Path) -> Result<ReportFile, String> {
        let text =
            snapconf_producers::input::read_text(path, snapconf_producers::input::CONFIG_LIMIT)
                .map_err(|e| format!("cannot use report: {e}"))?;
        let file: ReportFile = serde_json::from_str(&text)
            .map_err(|e| format!("`{}` is not a snapconf report: {e}", path.display()))?;
        if file.run.schema == 0 || file.run.schema > REPORT_SCHEMA {
            return Err(format!(
                "`{}` has report schema {}, expected 1 to {REPORT_SCHEMA}",
                path.display(),
                file.run.schema
            ));
        }
        Ok(file)
    }
}
