//! `snapconf replay CASE_DIR`.

use super::args::ReplayArgs;
use super::Usage;
use anyhow::Context;
use snapconf_harness::engine::case::{run_case, Env};
use snapconf_harness::engine::faults::{read_fault_json, FaultOptions};
use snapconf_harness::exit;
use snapconf_harness::model::policy_map::reference_policy;
use snapconf_harness::run::repro::{read_case_dir, reproduces};
use snapconf_producers::{Availability, Extractor, Producer};
use std::time::Duration;

pub fn replay(a: ReplayArgs) -> anyhow::Result<i32> {
    let (meta, case) = read_case_dir(&a.case_dir).map_err(Usage)?;
    // `read_case_dir` refuses a run's finding without one.
    let producer_name = meta.producer.clone().unwrap_or_default();
    let backends = super::backends::load(&a.backends)?;
    let hint = " (a `--backend` run's reproducer needs `--backend FILE` or `SNAPCONF_BACKEND`)";
    let producer = snapconf_producers::all_producers()
        .into_iter()
        .chain(
            backends
                .iter()
                .map(|b| Box::new(b.producer()) as Box<dyn Producer>),
        )
        .find(|p| p.name() == producer_name)
        .ok_or_else(|| {
            Usage(format!(
                "unknown producer `{producer_name}` in the reproducer{hint}"
            ))
        })?;
    let policy = reference_policy(&meta.profile, None);
    let extractor: Option<Box<dyn Extractor>> = match &meta.extractor {
        Some(name) => Some(
            snapconf_producers::all_extractors(policy)
                .into_iter()
                .chain(
                    backends
                        .iter()
                        .map(|b| Box::new(b.extractor()) as Box<dyn Extractor>),
                )
                .find(|e| e.name() == name)
                .ok_or_else(|| {
                    Usage(format!(
                        "unknown extractor `{name}` in the reproducer{hint}"
                    ))
                })?,
        ),
        None => None,
    };
    for a in
        std::iter::once(producer.availability()).chain(extractor.iter().map(|e| e.availability()))
    {
        if let Availability::Unavailable {
            reason,
            install_hint,
        } = a
        {
            eprintln!("snapconf: cannot replay: {reason} (install: {install_hint})");
            return Ok(exit::NOTHING_RAN);
        }
    }
    // A finding under a fault (`fault.json`) replays with that fault; its plan is drawn
    // from the case again, so the same cut or damaged field comes back.
    let fault = read_fault_json(&a.case_dir).map_err(Usage)?;
    let env = Env {
        profile: meta.profile.clone(),
        timeout: Duration::from_secs(meta.timeout_secs.max(1)),
        jail_base: std::env::var_os("SNAPCONF_JAIL_DIR")
            .map(Into::into)
            .or_else(snapconf_harness::jail::default_jail_base),
        faults: FaultOptions {
            kinds: fault.iter().map(|p| p.kind).collect(),
            bin: super::self_exe().ok(),
        },
        jails: Default::default(),
        checks: snapconf_harness::checks::Check::ALL.to_vec(),
    };
    let ex: Vec<&dyn Extractor> = extractor.iter().map(|e| e.as_ref()).collect();
    let outcome =
        run_case(&case, producer.as_ref(), &ex, &env, None).context("the replay failed")?;
    let pair = meta.pair();
    if reproduces(&meta, &outcome) {
        for f in outcome.findings.iter().filter(|f| f.check == meta.check) {
            outln!("{} ({pair}): {}", meta.check, f.message);
            if let Some(o) = &f.observed {
                outln!("{o}");
            }
        }
        outln!("reproduces: {} ({pair})", meta.check);
        Ok(exit::FINDINGS)
    } else {
        outln!("fixed: {} ({pair}) no longer reproduces", meta.check);
        Ok(exit::OK)
    }
}
