//! The built-in adapters, in a stable order, and lookups by name.

use crate::adapter::{Extractor, Producer};
use crate::adapters::bsdtar::{BsdtarExtractor, BsdtarProducer};
use crate::adapters::busybox_tar::{BusyboxTarExtractor, BusyboxTarProducer};
use crate::adapters::gnu_tar::{GnuTarExtractor, GnuTarProducer};
use crate::adapters::python_data::PythonDataExtractor;
use crate::adapters::python_tar::PythonTarExtractor;
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

/// Every built-in producer, in a stable order (in-process first, then external tools).
pub fn producers() -> Vec<Box<dyn Producer>> {
    vec![
        Box::new(TarRsProducer),
        Box::new(GnuTarProducer),
        Box::new(PythonTarfileProducer::new(TarfileFormat::Pax)),
        Box::new(PythonTarfileProducer::new(TarfileFormat::Gnu)),
        Box::new(BusyboxTarProducer),
        Box::new(BsdtarProducer),
    ]
}

/// Every built-in extractor, in a stable order; the `reference` extractor applies
/// `reference_policy`.
pub fn extractors(reference_policy: Policy) -> Vec<Box<dyn Extractor>> {
    vec![
        Box::new(ReferenceExtractor::new(reference_policy)),
        Box::new(GnuTarExtractor),
        Box::new(PythonDataExtractor),
        Box::new(PythonTarExtractor),
        Box::new(BusyboxTarExtractor),
        Box::new(BsdtarExtractor),
        Box::new(TarRsExtractor),
    ]
}

/// The built-in producer called `name`.
///
/// # Errors
/// [`UnknownAdapter`] naming `name` and listing the known producers.
pub fn producer(name: &str) -> Result<Box<dyn Producer>, UnknownAdapter> {
    let mut all = producers();
    match all.iter().position(|p| p.name() == name) {
        Some(i) => Ok(all.swap_remove(i)),
        None => Err(UnknownAdapter {
            role: "producer",
            name: name.to_owned(),
            known: all.iter().map(|p| p.name().to_owned()).collect(),
        }),
    }
}

/// The built-in extractor called `name`; `reference` applies `reference_policy`.
///
/// # Errors
/// [`UnknownAdapter`] naming `name` and listing the known extractors.
pub fn extractor(
    name: &str,
    reference_policy: Policy,
) -> Result<Box<dyn Extractor>, UnknownAdapter> {
    let mut all = extractors(reference_policy);
    match all.iter().position(|e| e.name() == name) {
        Some(i) => Ok(all.swap_remove(i)),
        None => Err(UnknownAdapter {
            role: "extractor",
            name: name.to_owned(),
            known: all.iter().map(|e| e.name().to_owned()).collect(),
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

    #[test]
    fn unknown_names_list_the_known_ones() {
        let err = producer("zip")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            err.starts_with("unknown producer `zip`; known producers: tar-rs, gnu-tar"),
            "{err}"
        );
        let err = extractor("zip", Policy::default())
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            err.starts_with("unknown extractor `zip`; known extractors: reference"),
            "{err}"
        );
    }
}
