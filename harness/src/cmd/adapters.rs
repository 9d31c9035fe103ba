//! Choosing adapters by name; unknown names are usage errors, missing tools are skips.

use super::Usage;
use snapconf_harness::report::SkippedAdapter;
use snapconf_producers::{Availability, Extractor, Producer};

/// Chosen adapters of one kind, and those skipped because their tool is missing.
pub struct Chosen<T: ?Sized> {
    pub run: Vec<Box<T>>,
    pub skipped: Vec<SkippedAdapter>,
}

fn choose<T: ?Sized>(
    all: Vec<Box<T>>,
    wanted: &[String],
    kind: &str,
    name: impl Fn(&T) -> String,
    avail: impl Fn(&T) -> Availability,
) -> Result<Chosen<T>, Usage> {
    let known: Vec<String> = all.iter().map(|a| name(a)).collect();
    for w in wanted {
        if !known.contains(w) {
            return Err(Usage(format!(
                "unknown {kind} `{w}` (known: {})",
                known.join(", ")
            )));
        }
    }
    let mut run = Vec::new();
    let mut skipped = Vec::new();
    for a in all {
        let n = name(&a);
        if !wanted.is_empty() && !wanted.contains(&n) {
            continue;
        }
        match avail(&a) {
            Availability::Available { .. } => run.push(a),
            Availability::Unavailable {
                reason,
                install_hint,
            } => {
                eprintln!("snapconf: skipping {kind} `{n}`: {reason} (install: {install_hint})");
                skipped.push(SkippedAdapter {
                    name: n,
                    reason,
                    install_hint,
                })
            }
        }
    }
    Ok(Chosen { run, skipped })
}

/// The producers named in `wanted` (all built-ins when empty).
pub fn producers(wanted: &[String]) -> Result<Chosen<dyn Producer>, Usage> {
    choose(
        snapconf_producers::producers(),
        wanted,
        "producer",
        |p: &(dyn Producer + 'static)| p.name().to_string(),
        |p: &(dyn Producer + 'static)| p.availability(),
    )
}

/// The extractors named in `wanted` (all built-ins when empty); `reference` uses `policy`.
pub fn extractors(
    wanted: &[String],
    policy: snapconf_extract::Policy,
) -> Result<Chosen<dyn Extractor>, Usage> {
    choose(
        snapconf_producers::extractors(policy),
        wanted,
        "extractor",
        |e: &(dyn Extractor + 'static)| e.name().to_string(),
        |e: &(dyn Extractor + 'static)| e.availability(),
    )
}
