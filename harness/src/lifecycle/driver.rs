//! The lifecycle run: every sequence through every producer × extractor pair on the `-j`
//! pool (a backend gets a fresh instance, one worker process, per sequence), the first
//! finding of each (pair, check) cell shrunk over the sequence and written as a
//! reproducer, and `lifecycle.json`; and the replay of such a reproducer.

use super::session::{run_sequence, SequenceOutcome};
use super::shrink_sequence::shrink_sequence;
use crate::checks::Check;
use crate::engine::case::{Env, Finding};
use crate::engine::phases::{
    run_in_order, shrink_in_groups, units, InOrder, ShrinkDeadline, ShrinkPhase, Started, Unit,
};
use crate::engine::progress::{Event, FindingEvent};
use crate::engine::repro::{
    read_finding, read_repro_text, FindingFile, ReplayConditions, ReproDir, ReproMode, Script,
    FINDING_JSON,
};
use crate::engine::shard::Shard;
use crate::engine::shrink::ShrinkBudget;
use crate::error::HarnessError;
use crate::gen::GenConfig;
use crate::gen::{draw_sequence, Sequence};
use crate::report::ShrinkEnd;
use serde::{Deserialize, Serialize};
use snapconf_producers::{Backend, Extractor, Producer};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Everything a lifecycle run needs.
pub struct LifecycleOptions {
    /// Sequences per pair.
    pub sequences: u64,
    /// Most turns of one sequence (at least 1).
    pub max_turns: usize,
    /// The seed the sequences are drawn from.
    pub seed: u64,
    /// What the generator draws.
    pub gen: GenConfig,
    /// The pipeline's settings (profile, timeout, jails, faults, checks).
    pub env: Env,
    /// Budget for shrinking one finding.
    pub shrink: ShrinkBudget,
    /// Wall time all shrinking may take together; later findings are written unshrunk.
    pub shrink_total: Duration,
    /// Receives `lifecycle.json` and `cases/`.
    pub report_dir: PathBuf,
    /// The producers in the run's order.
    pub producers: Vec<Box<dyn Producer>>,
    /// The extractors in the run's order.
    pub extractors: Vec<Box<dyn Extractor>>,
    /// The `--backend`s: a producer or extractor of one of these names runs as a fresh
    /// instance of it for every sequence.
    pub backends: Vec<Backend>,
    /// The binary `repro.sh` calls.
    pub bin: PathBuf,
    /// The `--backend` files (absolute), passed back by `repro.sh`.
    pub backend_files: Vec<PathBuf>,
    /// Workers running sequences and shrinks at once (`-j`).
    pub jobs: usize,
    /// Which sequence indices this process runs (`--shard K/N`, as `run`'s case indices;
    /// [`Shard::ALL`] by default): every shard draws from the same seed, so the shards'
    /// reports merge (`snapconf report merge`) into the whole run's.
    pub shard: Shard,
}

impl LifecycleOptions {
    /// The sequence indices of `0..sequences` in this process's shard.
    pub fn shard_len(&self) -> u64 {
        (0..self.sequences)
            .filter(|i| self.shard.contains(*i))
            .count() as u64
    }
}

/// `lifecycle.json`: what a lifecycle run did and found (schema 1).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LifecycleReport {
    /// Report schema version (1).
    pub schema: u32,
    /// The seed the sequences were drawn from.
    pub seed: u64,
    /// Sequences per pair.
    pub sequences: u64,
    /// Most turns of one sequence.
    pub max_turns: usize,
    /// Profile name.
    pub profile: String,
    /// Faults tried over every warm restore (`--faults`).
    pub faults: Vec<String>,
    /// One row per pair, by producer then extractor.
    pub pairs: Vec<PairRow>,
    /// The first finding of each failing (pair, check) cell, shrunk.
    pub findings: Vec<LifecycleFinding>,
    /// Wall seconds of the sequences (without the shrinks).
    pub seconds: f64,
    /// `K/N` when this is one shard of the run (`--shard`); its `pairs` count that shard's
    /// sequences only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
    /// Sequences this process ran per pair (this shard's share of `sequences`).
    #[serde(default)]
    pub ran: u64,
}

impl LifecycleReport {
    /// The run as the report every mode writes ([`crate::report::RunReport`], mode
    /// `lifecycle`): a pair's `cases` are its sequences (this shard's), `passed` those
    /// without a finding, `skipped` 0 (a refused capture does not end a sequence: the
    /// refusals are in `lifecycle.json`), `findings` the sequences failing each check;
    /// each cell's first finding with `entries` the entries of its shrunk initial
    /// workspace and `count` the sequences that failed its check.
    pub fn run_report(&self) -> crate::report::RunReport {
        use crate::report::{FindingRecord, Mode, PairReport, RunReport};
        let pairs: Vec<PairReport> = self
            .pairs
            .iter()
            .map(|p| PairReport {
                producer: p.producer.clone(),
                extractor: p.extractor.clone(),
                cases: p.sequences,
                passed: p.passed,
                skipped: 0,
                findings: p.findings.clone(),
            })
            .collect();
        let findings = self
            .findings
            .iter()
            .map(|f| FindingRecord {
                check: f.check,
                producer: f.producer.clone(),
                extractor: f.extractor.clone(),
                case_dir: f.case_dir.clone(),
                entries: f.entries,
                message: f.message.clone(),
                count: self
                    .pairs
                    .iter()
                    .find(|p| p.producer == f.producer && p.extractor == f.extractor)
                    .and_then(|p| p.findings.get(f.check.id()).copied())
                    .unwrap_or(1),
                capture_side: f.capture_side,
                fingerprint: String::new(),
                known: false,
                shrink: f.shrink,
                cause: None,
                trigger: f.trigger.clone(),
            })
            .collect();
        let mut notes = Vec::new();
        if let Some(s) = &self.shard {
            notes.push(format!(
                "shard {s}: {} of {} sequences per pair",
                self.ran, self.sequences
            ));
        }
        if !self.faults.is_empty() {
            notes.push(format!(
                "every warm restore was repeated under the faults {}",
                self.faults.join(", ")
            ));
        }
        let mut run = RunReport::empty(Mode::Lifecycle, self.seed, self.ran, &self.profile);
        run.pairs = pairs;
        run.findings = findings;
        run.notes = notes;
        run
    }
}

/// The counts of one pair.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct PairRow {
    /// The producer of the pair.
    pub producer: String,
    /// The extractor of the pair.
    pub extractor: String,
    /// Sequences run through the pair.
    pub sequences: u64,
    /// Sequences without a finding.
    pub passed: u64,
    /// Turns run.
    pub turns: u64,
    /// Captures the producer refused.
    pub refused: u64,
    /// Restores run (cold and warm).
    pub restores: u64,
    /// Faulted restores (`--faults`).
    pub faulted: u64,
    /// Wall seconds of this pair's sequences, added up over the workers (each sequence
    /// timed on the worker that ran it): `sequences / seconds` is the pair's rate on one
    /// worker, measured side by side with the other pairs of the run.
    pub seconds: f64,
    /// Sequences failing each check, by check id.
    pub findings: BTreeMap<String, u64>,
}

impl PairRow {
    /// Counts one sequence's outcome `out`, which took `secs` wall seconds.
    fn add(&mut self, out: &SequenceOutcome, secs: f64) {
        self.sequences += 1;
        self.turns += out.turns as u64;
        self.refused += out.refused as u64;
        self.restores += out.restores as u64;
        self.faulted += out.faulted as u64;
        self.seconds += secs;
        if out.findings.is_empty() {
            self.passed += 1;
        }
        for f in &out.findings {
            *self.findings.entry(f.check.id().to_string()).or_default() += 1;
        }
    }
}

/// One shrunk finding of a lifecycle run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LifecycleFinding {
    /// The check failed.
    pub check: Check,
    /// The producer of the pair.
    pub producer: String,
    /// The extractor of the pair.
    pub extractor: String,
    /// The producer alone is at fault (a capture-side check).
    pub capture_side: bool,
    /// The shrunk sequence's message.
    pub message: String,
    /// The sequence it was first seen in.
    pub index: u64,
    /// Turns of the shrunk sequence.
    pub turns: usize,
    /// Edits of the shrunk sequence's turns.
    pub edits: usize,
    /// Entries of the shrunk sequence's initial workspace.
    pub entries: usize,
    /// How the shrink ended.
    pub shrink: ShrinkEnd,
    /// The reproducer, relative to the report directory.
    pub case_dir: String,
    /// The features of the shrunk initial workspace and the kinds of its diff, the part
    /// of the cause key that is not the message ([`crate::report::Trigger`]).
    #[serde(default)]
    pub trigger: crate::report::Trigger,
}

/// A first finding waiting for its shrink.
struct Pending {
    index: u64,
    pair: (usize, usize),
    sequence: Sequence,
    finding: Finding,
}

/// Run the lifecycle matrix on the sequences of `opts.shard`, telling `on_event` of each
/// sequence done (`CaseDone`, counting sequences × pairs) and of the shrinks, as `run`
/// does. `Err` only for faults of snapconf itself.
pub fn run(
    opts: &LifecycleOptions,
    on_event: &mut dyn FnMut(Event),
) -> Result<LifecycleReport, HarnessError> {
    let started = Instant::now();
    let pairs: Vec<(usize, usize)> = (0..opts.producers.len())
        .flat_map(|p| (0..opts.extractors.len()).map(move |x| (p, x)))
        .collect();
    // A unit is a sequence through one pair (`part`, numbering `pairs`).
    let units = units(opts.sequences, opts.shard, pairs.len());
    let total = units.len() as u64;
    let work = |u: &Unit,
                env: &Env,
                note: &dyn Fn(Event)|
     -> Result<(Sequence, SequenceOutcome, f64), HarnessError> {
        let (p, x) = pairs[u.part];
        note(Event::CaseStarted {
            index: u.index,
            producer: opts.producers[p].name().to_string(),
            extractor: Some(opts.extractors[x].name().to_string()),
        });
        let seq = draw_sequence(&opts.gen, opts.seed, u.index, opts.max_turns)
            .map_err(HarnessError::Other)?;
        let t = Instant::now();
        let out = run_pair(opts, pairs[u.part], &seq, env, None)?;
        Ok((seq, out, t.elapsed().as_secs_f64()))
    };
    let mut rows: BTreeMap<(usize, usize), PairRow> = BTreeMap::new();
    for &(p, x) in &pairs {
        rows.insert(
            (p, x),
            PairRow {
                producer: opts.producers[p].name().to_string(),
                extractor: opts.extractors[x].name().to_string(),
                ..PairRow::default()
            },
        );
    }
    let mut pending: Vec<Pending> = Vec::new();
    let mut seen: BTreeMap<(usize, usize, Check), ()> = BTreeMap::new();
    let mut done = 0u64;
    run_in_order(opts.jobs, &opts.env, &units, &work, &mut |o| {
        let (i, (seq, out, secs)) = match o {
            InOrder::Next(i, r) => (i, r),
            InOrder::Note(ev) => return on_event(ev),
            InOrder::Arrived => {
                done += 1;
                on_event(Event::CaseDone {
                    done,
                    total,
                    findings: seen.len(),
                });
                return;
            }
        };
        let u = &units[i];
        let pair = pairs[u.part];
        let Some(row) = rows.get_mut(&pair) else {
            return;
        };
        row.add(&out, secs);
        let mut new = Vec::new();
        for f in &out.findings {
            if seen.insert((pair.0, pair.1, f.check), ()).is_none() {
                new.push(FindingEvent {
                    check: f.check,
                    producer: Some(row.producer.clone()),
                    extractor: Some(row.extractor.clone()),
                    case: Some(u.index),
                    case_dir: None,
                    known: None,
                    message: f.message.clone(),
                });
                pending.push(Pending {
                    index: u.index,
                    pair,
                    sequence: seq.clone(),
                    finding: f.clone(),
                });
            }
        }
        on_event(Event::CaseFinished {
            index: u.index,
            producer: row.producer.clone(),
            extractor: Some(row.extractor.clone()),
            new_findings: new.len(),
        });
        for f in new {
            on_event(Event::Finding(Box::new(f)));
        }
    })?;
    let seconds = started.elapsed().as_secs_f64();
    pending.sort_by_key(|p| (p.finding.check.severity(), p.index, p.pair));
    let findings = shrink_and_write(opts, &pending, on_event)?;
    Ok(LifecycleReport {
        schema: 1,
        seed: opts.seed,
        sequences: opts.sequences,
        max_turns: opts.max_turns,
        profile: opts.env.profile.name.clone(),
        faults: fault_names(&opts.env),
        pairs: rows.into_values().collect(),
        findings,
        seconds,
        shard: (opts.shard != Shard::ALL).then(|| opts.shard.to_string()),
        ran: opts.shard_len(),
    })
}

/// Shrink each pending finding (on the pool, most severe first) and write its reproducer.
fn shrink_and_write(
    opts: &LifecycleOptions,
    pending: &[Pending],
    on_event: &mut dyn FnMut(Event),
) -> Result<Vec<LifecycleFinding>, HarnessError> {
    let deadline = ShrinkDeadline::starting_now(opts.shrink_total);
    let cases = opts.report_dir.join("cases");
    let total = pending.len();
    let started = Started::default();
    // Each finding is a group of its own.
    let groups: Vec<usize> = (0..total).collect();
    let work = |&i: &usize,
                env: &Env,
                note: &dyn Fn(Event)|
     -> Result<Vec<(usize, LifecycleFinding)>, HarnessError> {
        let p = &pending[i];
        let check = p.finding.check;
        note(Event::Shrinking {
            check,
            producer: opts.producers[p.pair.0].name().to_string(),
            extractor: opts.extractors[p.pair.1].name().to_string(),
            done: started.next(),
            total,
        });
        let (seq, end) = if deadline.spent() {
            (p.sequence.clone(), ShrinkEnd::TotalSpent)
        } else {
            let shrunk = shrink_sequence(
                p.sequence.clone(),
                |c: &Sequence| -> Result<bool, HarnessError> {
                    let out = run_pair(opts, p.pair, c, env, None)?;
                    Ok(has(&out, check, p.finding.extractor.as_deref()))
                },
                deadline.budget(opts.shrink),
            )?;
            (shrunk.sequence, shrunk.end)
        };
        Ok(vec![(
            i,
            write_reproducer(opts, p, &seq, end, env, &cases)?,
        )])
    };
    let phase = ShrinkPhase {
        jobs: opts.jobs,
        total,
        budget: opts.shrink_total,
    };
    let out = shrink_in_groups(phase, &opts.env, &groups, &work, on_event)?;
    let mut found: Vec<LifecycleFinding> = out.into_iter().flatten().collect();
    found.sort_by(|a, b| {
        (&a.producer, &a.extractor, a.check).cmp(&(&b.producer, &b.extractor, b.check))
    });
    Ok(found)
}

/// The run's `--faults`, by name.
fn fault_names(env: &Env) -> Vec<String> {
    env.faults.kinds.iter().map(|k| k.to_string()).collect()
}

/// Whether `out` has a finding of `check` for `extractor` (a capture-side one counts for
/// every extractor).
fn has(out: &SequenceOutcome, check: Check, extractor: Option<&str>) -> bool {
    out.findings
        .iter()
        .any(|f| f.check == check && (f.extractor.is_none() || f.extractor.as_deref() == extractor))
}

/// Write the reproducer of `p`'s finding, shrunk to `seq`: `sequence.json`,
/// `finding.json`, `expected.txt`, `observed.txt`, the checkpoints, and `repro.sh`
/// (`snapconf lifecycle --replay`).
fn write_reproducer(
    opts: &LifecycleOptions,
    p: &Pending,
    seq: &Sequence,
    end: ShrinkEnd,
    env: &Env,
    cases: &Path,
) -> Result<LifecycleFinding, HarnessError> {
    let producer = opts.producers[p.pair.0].name().to_string();
    let extractor = opts.extractors[p.pair.1].name().to_string();
    let check = p.finding.check;
    let id = format!("{}__{producer}__{extractor}", check.id());
    let repro = ReproDir::create(cases, &id)?;
    let out = run_pair(opts, p.pair, seq, env, Some(repro.path()))?;
    let shrunk = out
        .findings
        .iter()
        .find(|f| f.check == check && (f.extractor.is_none() || f.extractor == p.finding.extractor))
        .cloned()
        .unwrap_or_else(|| p.finding.clone());
    let mut meta = FindingFile::new(
        ReproMode::Lifecycle,
        check,
        Some(extractor.clone()),
        shrunk.message.clone(),
        ReplayConditions {
            profile: opts.env.profile.clone(),
            timeout_secs: opts.env.timeout.as_secs(),
            seed: Some(opts.seed),
            case_index: Some(p.index),
        },
    );
    meta.producer = Some(producer.clone());
    meta.faults = fault_names(&opts.env);
    repro.write_finding(&meta)?;
    repro.write(
        "sequence.json",
        serde_json::to_string_pretty(seq)
            .unwrap_or_default()
            .as_bytes(),
    )?;
    repro.write_finding_evidence(&shrunk)?;
    repro.write_script(
        check,
        &Script {
            pair: &format!("{producer} x {extractor}, a session of turns"),
            tools: &[producer.clone(), extractor.clone()],
            bin: &opts.bin,
            backends: &opts.backend_files,
            command: "lifecycle --replay \"$here\"",
        },
    )?;
    Ok(LifecycleFinding {
        check,
        producer,
        extractor,
        capture_side: p.finding.extractor.is_none(),
        message: shrunk.message,
        index: p.index,
        turns: seq.turns.len(),
        edits: seq.edits(),
        entries: seq.initial.entries.len(),
        shrink: end,
        case_dir: repro.case_dir(),
        trigger: crate::report::Trigger::of(&seq.initial, shrunk.observed.as_deref()),
    })
}

/// Run `seq` through pair `pair`: a producer or extractor that is one of the run's
/// backends runs as a fresh instance of it (one for both sides when they are the same
/// backend), so nothing carries over from another sequence.
fn run_pair(
    opts: &LifecycleOptions,
    pair: (usize, usize),
    seq: &Sequence,
    env: &Env,
    keep: Option<&Path>,
) -> Result<SequenceOutcome, HarnessError> {
    let builtin_p = opts.producers[pair.0].as_ref();
    let builtin_x = opts.extractors[pair.1].as_ref();
    let backend = |name: &str| opts.backends.iter().find(|b| b.name() == name);
    let pb = backend(builtin_p.name());
    let xb = backend(builtin_x.name());
    let p_instance = pb.map(|b| Backend::new(b.description().clone()));
    let x_instance = match (xb, &p_instance) {
        (Some(b), Some(p)) if b.name() == p.name() => None,
        (Some(b), _) => Some(Backend::new(b.description().clone())),
        (None, _) => None,
    };
    let p_side = p_instance.as_ref().map(Backend::producer);
    let x_side = match (&x_instance, xb, &p_instance) {
        (Some(x), _, _) => Some(x.extractor()),
        (None, Some(_), Some(p)) => Some(p.extractor()),
        _ => None,
    };
    let producer: &dyn Producer = match &p_side {
        Some(p) => p,
        None => builtin_p,
    };
    let extractor: &dyn Extractor = match &x_side {
        Some(x) => x,
        None => builtin_x,
    };
    run_sequence(
        seq,
        producer,
        extractor,
        pb.map(Backend::description),
        env,
        keep,
    )
}

/// The outcome of `snapconf lifecycle --replay`.
pub struct Replayed {
    /// The finding's check still fails for the pair.
    pub reproduces: bool,
    /// The finding of that check now, if any.
    pub finding: Option<Finding>,
}

/// Read a lifecycle reproducer (`finding.json`, `sequence.json`: regular files of at most
/// [`CONFIG_LIMIT`](snapconf_producers::input::CONFIG_LIMIT) bytes). `Err` names the file.
pub fn read_reproducer(dir: &Path) -> Result<(FindingFile, Sequence), String> {
    let read = |name: &str| read_repro_text(dir, name);
    let meta = read_finding(dir)?;
    meta.expect_mode(&[ReproMode::Lifecycle], &dir.join(FINDING_JSON))?;
    if meta.producer.is_none() || meta.extractor.is_none() {
        return Err(format!(
            "`{}` is not a lifecycle finding: it names no producer or extractor",
            dir.join(FINDING_JSON).display()
        ));
    }
    let seq: Sequence = serde_json::from_str(&read("sequence.json")?)
        .map_err(|e| format!("`{}`: {e}", dir.join("sequence.json").display()))?;
    if seq.turns.is_empty() {
        return Err(format!(
            "`{}`: a sequence needs at least one turn",
            dir.join("sequence.json").display()
        ));
    }
    seq.initial
        .check()
        .map_err(|e| format!("`{}`: {e}", dir.join("sequence.json").display()))?;
    Ok((meta, seq))
}

/// Replay `seq` once through the first producer and extractor of `opts` (the
/// reproducer's pair) and say whether `meta`'s check still fails.
///
/// # Errors
/// Faults of snapconf itself; no producer or extractor in `opts`.
pub fn replay(
    opts: &LifecycleOptions,
    meta: &FindingFile,
    seq: &Sequence,
) -> Result<Replayed, HarnessError> {
    if opts.producers.is_empty() || opts.extractors.is_empty() {
        return Err(HarnessError::Other(
            "the reproducer's producer or extractor is not available".into(),
        ));
    }
    let out = run_pair(opts, (0, 0), seq, &opts.env, None)?;
    let finding = out
        .findings
        .iter()
        .find(|f| f.check == meta.check && (f.extractor.is_none() || f.extractor == meta.extractor))
        .cloned();
    Ok(Replayed {
        reproduces: finding.is_some(),
        finding,
    })
}
