//! `snapconf list`.

use super::args::ListArgs;
use snapconf_harness::exit;
use snapconf_harness::model::policy_map::reference_policy;
use snapconf_harness::model::profile::Profile;
use snapconf_producers::{Availability, Extractor, Producer};

fn show(kind: &str, name: &str, a: Availability) {
    match a {
        Availability::Available { version } => outln!("{kind:<10} {name:<20} {version}"),
        Availability::Unavailable {
            reason,
            install_hint,
        } => {
            outln!("{kind:<10} {name:<20} unavailable: {reason} (install: {install_hint})")
        }
    }
}

pub fn list(a: ListArgs) -> anyhow::Result<i32> {
    let backends = super::backends::load(&a.backends)?;
    for p in snapconf_producers::producers() {
        show("producer", p.name(), p.availability());
    }
    let policy = reference_policy(&Profile::default_profile(), None);
    for e in snapconf_producers::extractors(policy) {
        show("extractor", e.name(), e.availability());
    }
    for b in &backends {
        show("producer", b.name(), b.producer().availability());
        show("extractor", b.name(), b.extractor().availability());
    }
    Ok(exit::OK)
}
