//! The built-in adapters, in a stable order, and lookups by name.

use crate::adapter::{Extractor, Producer};
use crate::adapters::bsdtar::{BsdtarExtractor, BsdtarProducer};
use crate::adapters::busybox_tar::{BusyboxTarExtractor, BusyboxTarProducer};
use crate::adapters::gnu_tar::{
    GnuTarExtractor, GnuTarLnkProducer, GnuTarProducer, TarCompression,
};
use crate::adapters::python_filter::PythonFilterExtractor;
use crate::adapters::python_tarfile::{PythonTarfileProducer, TarfileFormat};
use crate::adapters::reference::ReferenceExtractor;
use crate::adapters::tar_rs::{TarRsExtractor, TarRsProducer};
use snapconf_extract::Policy;

/// A lookup named an adapter that is not built in.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown {role} `{name}`; known {role}s: {}", known.join(", "))]
pub struct UnknownAdapter {
    /// `producer` or `extractor`.
    pub role: &'static str,
    /// The name asked for.
    pub name: String,
    /// The built-in names, in registry order.
    pub known: Vec<String>,
}

/// The built-in adapters a run takes only when asked for by name or with `all`: variants
/// that show what remote sandbox backends run (a tool's own defaults, extraction over what
/// the root holds), left out of the default set to keep the default main job short.
pub const OPT_IN: &[&str] = &[
    "gnu-tar-lnk",
    "gnu-tar-lnk-gz",
    "gnu-tar-lnk-zst",
    "busybox-tar-gz",
    "bsdtar-gz",
    "gnu-tar-merge",
    "busybox-tar-merge",
    "bsdtar-merge",
];

/// True if a run with no `--producers`/`--extractors` list takes the built-in `name`
/// (every built-in but the [`OPT_IN`] ones).
pub fn in_default_set(name: &str) -> bool {
    !OPT_IN.contains(&name)
}

/// Every built-in producer, the [`OPT_IN`] ones included, in a stable order (each variant
/// after its tool's default-set producer).
pub fn all_producers() -> Vec<Box<dyn Producer>> {
    let mut all: Vec<Box<dyn Producer>> = Vec::new();
    for p in producers() {
        let variants: Vec<Box<dyn Producer>> = match p.name() {
            "gnu-tar" => [
                TarCompression::None,
                TarCompression::Gzip,
                TarCompression::Zstd,
            ]
            .into_iter()
            .map(|compression| Box::new(GnuTarLnkProducer { compression }) as Box<dyn Producer>)
            .collect(),
            "busybox-tar" => vec![Box::new(BusyboxTarProducer::GZIP)],
            "bsdtar" => vec![Box::new(BsdtarProducer::GZIP)],
            _ => Vec::new(),
        };
        all.push(p);
        all.extend(variants);
    }
    all
}

/// Every built-in extractor, the [`OPT_IN`] ones included, in a stable order (each merge
/// variant after its tool's clearing one); the `reference` extractor applies
/// `reference_policy`.
pub fn all_extractors(reference_policy: Policy) -> Vec<Box<dyn Extractor>> {
    let mut all = Vec::new();
    for e in extractors(reference_policy) {
        let merge: Option<Box<dyn Extractor>> = match e.name() {
            "gnu-tar" => Some(Box::new(GnuTarExtractor::MERGE)),
            "busybox-tar" => Some(Box::new(BusyboxTarExtractor::MERGE)),
            "bsdtar" => Some(Box::new(BsdtarExtractor::MERGE)),
            _ => None,
        };
        all.push(e);
        all.extend(merge);
    }
    all
}

/// The built-in producers of the default set ([`in_default_set`]), in a stable order
/// (in-process first, then external tools).
pub fn producers() -> Vec<Box<dyn Producer>> {
    vec![
        Box::new(TarRsProducer),
        Box::new(GnuTarProducer),
        Box::new(PythonTarfileProducer::new(TarfileFormat::Pax)),
        Box::new(PythonTarfileProducer::new(TarfileFormat::Gnu)),
        Box::new(BusyboxTarProducer::PLAIN),
        Box::new(BsdtarProducer::PLAIN),
    ]
}

/// The built-in extractors of the default set ([`in_default_set`]), in a stable order; the
/// `reference` extractor applies `reference_policy`.
pub fn extractors(reference_policy: Policy) -> Vec<Box<dyn Extractor>> {
    vec![
        Box::new(ReferenceExtractor::new(reference_policy)),
        Box::new(GnuTarExtractor::CLEAR),
        Box::new(PythonFilterExtractor::DATA),
        Box::new(PythonFilterExtractor::TAR),
        Box::new(BusyboxTarExtractor::CLEAR),
        Box::new(BsdtarExtractor::CLEAR),
        Box::new(TarRsExtractor),
    ]
}

/// The built-in producer called `name` (an [`OPT_IN`] one too).
///
/// # Errors
/// [`UnknownAdapter`] naming `name` and listing the known producers.
pub fn producer(name: &str) -> Result<Box<dyn Producer>, UnknownAdapter> {
    take_named(all_producers(), name, "producer", |p| p.name())
}

/// The built-in extractor called `name` (an [`OPT_IN`] one too); `reference` applies
/// `reference_policy`.
///
/// # Errors
/// [`UnknownAdapter`] naming `name` and listing the known extractors.
pub fn extractor(
    name: &str,
    reference_policy: Policy,
) -> Result<Box<dyn Extractor>, UnknownAdapter> {
    take_named(all_extractors(reference_policy), name, "extractor", |e| {
        e.name()
    })
}

/// The adapter of `all` whose `name_of` is `name`, or an [`UnknownAdapter`] for `role`
/// listing every name of `all` in order: the one lookup behind [`producer`] and
/// [`extractor`].
fn take_named<A: ?Sized>(
    mut all: Vec<Box<A>>,
    name: &str,
    role: &'static str,
    name_of: fn(&A) -> &str,
) -> Result<Box<A>, UnknownAdapter> {
    match all.iter().position(|a| name_of(a) == name) {
        Some(i) => Ok(all.swap_remove(i)),
        None => Err(UnknownAdapter {
            role,
            name: name.to_owned(),
            known: all.iter().map(|a| name_of(a).to_owned()).collect(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn names_are_unique_and_lookups_find_them() {
        let names: Vec<String> = producers().iter().map(|p| p.name().to_owned()).collect();
        assert_eq!(names.iter().collect::<HashSet<_>>().len(), names.len());
        for name in &names {
            assert_eq!(
                producer(name).map(|p| p.name().to_owned()).ok().as_ref(),
                Some(name)
            );
        }
        let names: Vec<String> = extractors(Policy::default())
            .iter()
            .map(|e| e.name().to_owned())
            .collect();
        assert_eq!(names.iter().collect::<HashSet<_>>().len(), names.len());
        for name in &names {
            let found = extractor(name, Policy::default()).map(|e| e.name().to_owned());
            assert_eq!(found.ok().as_ref(), Some(name));
        }
    }

    /// The opt-in variants are built in, found by name, outside the default set, and
    /// each merge extractor follows its tool's clearing one.
    #[test]
    fn opt_in_variants_are_listed_but_not_default() {
        let all: Vec<String> = all_producers()
            .iter()
            .map(|p| p.name().to_owned())
            .collect();
        assert_eq!(all.iter().collect::<HashSet<_>>().len(), all.len());
        assert_eq!(all[..3], ["tar-rs", "gnu-tar", "gnu-tar-lnk"]);
        let all: Vec<String> = all_extractors(Policy::default())
            .iter()
            .map(|e| e.name().to_owned())
            .collect();
        assert_eq!(all.iter().collect::<HashSet<_>>().len(), all.len());
        for tool in ["gnu-tar", "busybox-tar", "bsdtar"] {
            let i = all.iter().position(|n| n == tool).expect("the tool");
            assert_eq!(all[i + 1], format!("{tool}-merge"));
        }
        for name in OPT_IN {
            assert!(!in_default_set(name));
            let p = producer(name).map(|p| p.name().to_owned());
            let e = extractor(name, Policy::default()).map(|e| e.name().to_owned());
            assert!(p.ok().as_deref() == Some(*name) || e.ok().as_deref() == Some(*name));
        }
        assert!(producers().iter().all(|p| in_default_set(p.name())));
        assert!(extractors(Policy::default())
            .iter()
            .all(|e| in_default_set(e.name())));
    }

    #[test]
    fn unknown_names_list_the_known_ones() {
        for (err, start) in [
            (
                producer("zip").err(),
                "unknown producer `zip`; known producers: tar-rs, gnu-tar",
            ),
            (
                extractor("zip", Policy::default()).err(),
                "unknown extractor `zip`; known extractors: reference",
            ),
        ] {
            let err = err.map(|e| e.to_string()).unwrap_or_default();
            assert!(err.starts_with(start), "{err}");
        }
    }
}
