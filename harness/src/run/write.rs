//! Writing a shrunk finding's reproducer (`cases/<id>/`, through [`ReproDir`]) and the
//! record the report keeps of it.

use crate::checks::Check;
use crate::engine::case::{run_case, CaseOutcome, Env};
use crate::engine::faults::write_fault_json;
use crate::engine::repro::{FindingFile, ReplayConditions, ReproDir, ReproMode, Script};
use crate::error::HarnessError;
use crate::model::spec::Case;
use crate::report::ShrinkEnd;
use crate::report::{fingerprint, FindingRecord, Trigger};
use crate::run::matrix::RunOptions;
use crate::run::shrink_job::Job;
use std::path::Path;

/// Writes the reproducer of `job`'s finding in `min` (its shrunk case, whose shrink ended
/// with `end`) under `cases_dir`, running `min` once more under `env` for its archive and
/// evidence. `drawn` is the index of the generated case it came from (`None` for an audit).
pub(super) fn write_finding(
    opts: &RunOptions,
    job: &Job<'_>,
    env: &Env,
    min: &Case,
    end: ShrinkEnd,
    drawn: Option<u64>,
    cases_dir: &Path,
) -> Result<FindingRecord, HarnessError> {
    let (producer, extractors, finding) = (job.producer, &job.extractors, job.finding);
    let check = finding.check;
    let ex_name = extractors.first().map(|e| e.name().to_string());
    let id = format!(
        "{}__{}__{}",
        check.id(),
        producer.name(),
        ex_name.as_deref().unwrap_or("capture")
    );
    let repro = ReproDir::create(cases_dir, &id)?;
    let dir = repro.path();
    // Run the shrunk case once more to keep its archive and evidence.
    let outcome: CaseOutcome = run_case(min, producer, extractors, env, Some(dir))?;
    let mut mode = ReproMode::Run;
    // The shrunk case's finding came from a fault when a plan was recorded for it.
    if check == Check::ATOMIC_HYDRATION {
        let plan = outcome
            .fault_plans
            .iter()
            .find(|(x, _)| Some(x) == ex_name.as_ref())
            .map(|(_, p)| p);
        if let Some(plan) = plan {
            write_fault_json(dir, plan)?;
            mode = ReproMode::Faults;
        }
    }
    let shrunk = outcome
        .findings
        .iter()
        .find(|f| f.check == check && (f.extractor.is_none() || f.extractor == ex_name))
        .cloned()
        .unwrap_or_else(|| finding.clone());
    let mut meta = FindingFile::new(
        mode,
        check,
        finding.extractor.clone(),
        shrunk.message.clone(),
        ReplayConditions {
            profile: opts.env.profile.clone(),
            timeout_secs: opts.env.timeout.as_secs(),
            seed: drawn.map(|_| opts.seed),
            case_index: drawn,
        },
    );
    meta.producer = Some(producer.name().to_string());
    meta.entries = Some(min.spec.entries.len());
    // Each adapter with the version of the tool behind it, as `snapconf list` shows it.
    let tool = |name: &str| match opts.tool_versions.get(name) {
        Some(version) => format!("{name} ({version})"),
        None => name.to_string(),
    };
    let mut tools = vec![tool(producer.name())];
    tools.extend(extractors.iter().map(|e| tool(e.name())));
    repro.write_finding(&meta)?;
    repro.write("spec.json", min.spec.to_json().as_bytes())?;
    repro.write("prior.json", min.prior.to_json().as_bytes())?;
    repro.write_finding_evidence(&shrunk)?;
    // A Python pair found with `--python PATH` replays with that Python.
    let python = snapconf_producers::adapters::python::found();
    let command = if python.how == "--python"
        && std::iter::once(producer.name())
            .chain(extractors.iter().map(|e| e.name()))
            .any(|n| n.starts_with("python-"))
    {
        format!(
            "--python {} replay \"$here\"",
            crate::engine::repro::shell_word(&python.exe.to_string_lossy())
        )
    } else {
        "replay \"$here\"".to_string()
    };
    let script = Script {
        pair: &meta.pair(),
        tools: &tools,
        bin: &opts.bin,
        backends: &opts.backend_files,
        command: &command,
    };
    // A finding through the matrix's `reference` (the strict policy of the profile, see
    // `reference_policy`) also shows the `snapconf hydrate` flags that reach its verdict.
    if mode == ReproMode::Run
        && finding.extractor.as_deref() == Some("reference")
        && dir.join("archive.tar").is_file()
    {
        let policy = crate::model::policy_map::reference_policy(&opts.env.profile, None);
        repro.write_reference_script(check, &script, &policy)?;
    } else {
        repro.write_script(check, &script)?;
    }
    Ok(FindingRecord {
        check,
        producer: producer.name().to_string(),
        extractor: ex_name.unwrap_or_else(|| "capture".into()),
        case_dir: repro.case_dir(),
        entries: min.spec.entries.len(),
        fingerprint: fingerprint(check, &shrunk.message),
        message: shrunk.message,
        count: 1,
        capture_side: finding.extractor.is_none(),
        known: false,
        shrink: end,
        cause: None,
        trigger: Trigger::of(&min.spec, shrunk.observed.as_deref()),
    })
}
