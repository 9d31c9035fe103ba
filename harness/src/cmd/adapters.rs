//! Choosing adapters by name; unknown names are usage errors, missing tools are skips.

use super::Usage;
use snapconf_harness::report::SkippedAdapter;
use snapconf_producers::{Availability, Backend, Extractor, Producer};

/// Chosen adapters of one kind, and those skipped because their tool is missing.
pub struct Chosen<T: ?Sized> {
    pub run: Vec<Box<T>>,
    /// `(adapter name, version its tool printed)` of each adapter in `run`, asked once here.
    pub versions: Vec<(String, String)>,
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
        if w != "all" && !known.contains(w) {
            return Err(Usage(format!(
                "unknown {kind} `{w}` (known: {}, or all)",
                known.join(", ")
            )));
        }
    }
    let every = wanted.iter().any(|w| w == "all");
    let mut run = Vec::new();
    let mut versions = Vec::new();
    let mut skipped = Vec::new();
    for a in all {
        let n = name(&a);
        let taken = if every {
            true
        } else if wanted.is_empty() {
            snapconf_producers::in_default_set(&n)
        } else {
            wanted.contains(&n)
        };
        if !taken {
            continue;
        }
        match avail(&a) {
            Availability::Available { version } => {
                versions.push((n, version));
                run.push(a);
            }
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
    Ok(Chosen {
        run,
        versions,
        skipped,
    })
}

/// The producers named in `wanted` (`all`: every built-in; empty: the built-ins of the
/// default set, [`snapconf_producers::in_default_set`]; see
/// [`backends::builtins`](super::backends::builtins)), then each backend's producer.
pub fn producers(wanted: &[String], backends: &[Backend]) -> Result<Chosen<dyn Producer>, Usage> {
    with_backends(
        wanted,
        backends,
        "producer",
        snapconf_producers::all_producers,
        |b| Box::new(b.producer()),
        &|p| p.name().to_string(),
        &|p| p.availability(),
    )
}

/// The extractors named in `wanted` (`all`: every built-in; empty: the built-ins of the
/// default set; see
/// [`backends::builtins`](super::backends::builtins)), then each backend's extractor;
/// `reference` uses `policy`.
pub fn extractors(
    wanted: &[String],
    policy: snapconf_extract::Policy,
    backends: &[Backend],
) -> Result<Chosen<dyn Extractor>, Usage> {
    with_backends(
        wanted,
        backends,
        "extractor",
        || snapconf_producers::all_extractors(policy),
        |b| Box::new(b.extractor()),
        &|e| e.name().to_string(),
        &|e| e.availability(),
    )
}

/// The adapters of one `kind` (`producer`, `extractor`): the built-ins `builtins` makes,
/// chosen by `wanted` (see [`backends::builtins`](super::backends::builtins)), then the one
/// `of_backend` makes of each backend.
fn with_backends<T: ?Sized>(
    wanted: &[String],
    backends: &[Backend],
    kind: &str,
    builtins: impl FnOnce() -> Vec<Box<T>>,
    of_backend: impl Fn(&Backend) -> Box<T>,
    name: &dyn Fn(&T) -> String,
    avail: &dyn Fn(&T) -> Availability,
) -> Result<Chosen<T>, Usage> {
    let wanted = super::backends::builtins(wanted, backends);
    let all = if wanted.is_some() {
        builtins()
    } else {
        Vec::new()
    };
    let mut chosen = choose(all, &wanted.unwrap_or_default(), kind, name, avail)?;
    let extra: Vec<Box<T>> = backends.iter().map(of_backend).collect();
    let more = choose(extra, &[], kind, name, avail)?;
    chosen.run.extend(more.run);
    chosen.versions.extend(more.versions);
    chosen.skipped.extend(more.skipped);
    Ok(chosen)
}
