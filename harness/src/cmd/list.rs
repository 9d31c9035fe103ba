//! `snapconf list`.

use super::args::ListArgs;
use snapconf_harness::exit;
use snapconf_harness::model::policy_map::reference_policy;
use snapconf_harness::model::profile::Profile;
use snapconf_producers::{Availability, Extractor, Producer};

/// One line of the listing; an adapter outside the default set of a run says so.
fn show(kind: &str, name: &str, a: Availability) {
    let opt_in = if snapconf_producers::in_default_set(name) {
        ""
    } else {
        " (opt-in: name it, or `all`)"
    };
    match a {
        Availability::Available { version } => {
            outln!("{kind:<10} {name:<20} {version}{opt_in}")
        }
        Availability::Unavailable {
            reason,
            install_hint,
        } => {
            outln!("{kind:<10} {name:<20} unavailable: {reason} (install: {install_hint}){opt_in}")
        }
    }
}

pub fn list(a: ListArgs) -> anyhow::Result<i32> {
    let backends = super::backends::load(&a.backends)?;
    for p in snapconf_producers::all_producers() {
        show("producer", p.name(), p.availability());
    }
    let policy = reference_policy(&Profile::default_profile(), None);
    for e in snapconf_producers::all_extractors(policy) {
        show("extractor", e.name(), e.availability());
    }
    for b in &backends {
        show("producer", b.name(), b.producer().availability());
        show("extractor", b.name(), b.extractor().availability());
    }
    Ok(exit::OK)
}
