//! `--backend FILE`: loading plugged-in backends and choosing the built-ins they pair with.

use super::Usage;
use snapconf_harness::model::backend_profile::backend_profile;
use snapconf_harness::model::policy_map::hydration_policy;
use snapconf_harness::model::profile::Profile;
use snapconf_producers::adapters::reference::link_promises;
use snapconf_producers::Backend;
use std::path::PathBuf;

/// Load every `--backend` file. Errors (exit 2) name the file and the key; two backends of
/// one name, or a backend named like a built-in adapter, are refused too.
pub fn load(paths: &[PathBuf]) -> Result<Vec<Backend>, Usage> {
    let builtin: Vec<String> = snapconf_producers::all_producers()
        .iter()
        .map(|p| p.name().to_owned())
        .chain(
            snapconf_producers::all_extractors(snapconf_extract::Policy::default())
                .iter()
                .map(|e| e.name().to_owned()),
        )
        .collect();
    let mut out: Vec<Backend> = Vec::new();
    for path in paths {
        let b = Backend::load(path).map_err(|e| Usage(e.to_string()))?;
        let profile = backend_profile(b.description()).map_err(|e| Usage(e.to_string()))?;
        // What the profile refuses, its extractor promises never to leave in a root
        // (`escaping-link`): the links the reference under that profile's policy refuses.
        let b = match profile {
            Some(p) => b.with_link_promises(link_promises(&hydration_policy(&p, None))),
            None => b,
        };
        if builtin.iter().any(|n| n == b.name()) || out.iter().any(|o| o.name() == b.name()) {
            return Err(Usage(format!(
                "backend `{}`: key `name`: `{}` is already taken by another adapter",
                path.display(),
                b.name()
            )));
        }
        out.push(b);
    }
    Ok(out)
}

/// The run's profile: `--profile` when given, else the first backend's `[profile]`, else the
/// embedded default.
pub fn profile(explicit: Option<&str>, backends: &[Backend]) -> Result<Profile, Usage> {
    if let Some(p) = explicit {
        return Profile::load(p).map_err(|e| Usage(e.to_string()));
    }
    for b in backends {
        if let Some(p) = backend_profile(b.description()).map_err(|e| Usage(e.to_string()))? {
            return Ok(p);
        }
    }
    Ok(Profile::default_profile())
}

/// The built-in names to choose from `wanted` (a `--producers`/`--extractors` list), or `None`
/// for no built-in at all: backend names in the list are dropped (backends always run),
/// `none` selects no built-in, and an empty list means every built-in unless every backend
/// says `pair-with-builtins = false`.
pub fn builtins(wanted: &[String], backends: &[Backend]) -> Option<Vec<String>> {
    let named: Vec<String> = wanted
        .iter()
        .filter(|w| !backends.iter().any(|b| b.name() == w.as_str()))
        .cloned()
        .collect();
    if named.iter().any(|w| w == "none") {
        return None;
    }
    let backend_only = !wanted.is_empty() && named.is_empty();
    let no_pairing = wanted.is_empty()
        && !backends.is_empty()
        && backends.iter().all(|b| !b.description().pair_with_builtins);
    if backend_only || no_pairing {
        return None;
    }
    Some(named)
}

/// Print, for every backend, its worker's starts and failures and its validate step's
/// verdicts (stderr).
pub fn print_notes(backends: &[Backend]) {
    for b in backends {
        if let Some(w) = b.worker() {
            eprintln!(
                "snapconf: backend `{}` worker `{}`: started {} time(s){}",
                b.name(),
                w.rendered(),
                w.starts(),
                w.unavailable()
                    .map(|r| format!("; unavailable: {r}"))
                    .unwrap_or_default()
            );
            for i in w.incidents() {
                eprintln!("snapconf:   {i}");
            }
        }
        if b.description().validate.is_none() {
            continue;
        }
        let v = b.verdicts().counts();
        eprintln!(
            "snapconf: backend `{}` validate step (shrinking re-runs included): {} accepted, {} refused; of the accepted, {} refused and {} hung at the hydrate step",
            b.name(),
            v.accepted,
            v.refused,
            v.accepted_then_refused,
            v.accepted_then_hung
        );
    }
}
