//! Property (issue 3): for every case the generators produce, capturing with `tar-rs` and
//! hydrating with the reference extractor (into an empty root and over the prior W0) yields
//! exactly `expected(spec, profile)`, with no finding of any check.

use proptest::prelude::*;
use snapconf_harness::engine::case::{run_case, Env};
use snapconf_harness::gen::{case_strategy, GenConfig};
use snapconf_harness::model::policy_map::reference_policy;
use snapconf_harness::model::profile::Profile;
use std::time::Duration;

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    /// tar-rs capture + reference hydration round-trips every generated case.
    #[test]
    fn tar_rs_capture_and_reference_hydration_round_trip(case in case_strategy(&GenConfig::default())) {
        let profile = Profile::default_profile();
        let env = Env {
            profile: profile.clone(),
            timeout: Duration::from_secs(20),
            faults: Default::default(),
            jails: Default::default(),
            checks: snapconf_harness::checks::Check::ALL.to_vec(),
        jail_base: snapconf_harness::jail::default_jail_base(),
        };
        let producer = snapconf_producers::producer("tar-rs").expect("tar-rs is built in");
        let reference = snapconf_producers::extractor("reference", reference_policy(&profile, None))
            .expect("reference is built in");
        let outcome = run_case(&case, producer.as_ref(), &[reference.as_ref()], &env, None)
            .expect("the pipeline runs");
        prop_assert!(
            outcome.findings.is_empty(),
            "tar-rs x reference must round-trip {:?}: {:#?}",
            case,
            outcome.findings
        );
    }
}
