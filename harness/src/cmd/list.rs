//! `snapconf list`.

use snapconf_harness::exit;
use snapconf_harness::policy_map::reference_policy;
use snapconf_harness::profile::Profile;
use snapconf_producers::Availability;

fn show(kind: &str, name: &str, a: Availability) {
    match a {
        Availability::Available { version } => println!("{kind:<10} {name:<20} {version}"),
        Availability::Unavailable {
            reason,
            install_hint,
        } => {
            println!("{kind:<10} {name:<20} unavailable: {reason} (install: {install_hint})")
        }
    }
}

pub fn list() -> anyhow::Result<i32> {
    for p in snapconf_producers::producers() {
        show("producer", p.name(), p.availability());
    }
    let policy = reference_policy(&Profile::default_profile(), None);
    for e in snapconf_producers::extractors(policy) {
        show("extractor", e.name(), e.availability());
    }
    Ok(exit::OK)
}
