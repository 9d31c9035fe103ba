//! `junit.xml` via quick-junit: one suite per pair, one test case per check.

use super::RunReport;
use crate::checks::Check;
use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};

/// Render the JUnit XML of `report`. A failing cell carries the first finding's message and
/// reproducer path; a pair whose capture was refused for every case is marked skipped.
pub fn junit_xml(report: &RunReport) -> String {
    let mut r = Report::new("snapconf");
    for p in &report.pairs {
        let mut suite = TestSuite::new(format!("{} x {}", p.producer, p.extractor));
        for c in Check::ALL {
            let n = p.findings.get(c.id()).copied().unwrap_or(0);
            let status = if n > 0 {
                let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                let first = report.findings.iter().find(|f| {
                    f.producer == p.producer && f.extractor == p.extractor && f.check == c
                });
                s.set_type(c.id());
                match first {
                    Some(f) => {
                        s.set_message(format!("{n} case(s): {}", f.message));
                        s.set_description(format!(
                            "{}\nreproducer: {} ({})",
                            c.explain(),
                            f.case_dir,
                            f.shrink.describe(f.entries)
                        ));
                    }
                    None => {
                        s.set_message(format!("{n} case(s)"));
                    }
                }
                s
            } else if p.cases > 0 && p.skipped == p.cases {
                let mut s = TestCaseStatus::skipped();
                s.set_message("every capture was refused");
                s
            } else {
                TestCaseStatus::success()
            };
            let mut tc = TestCase::new(c.id(), status);
            tc.set_classname(format!("snapconf.{}.{}", p.producer, p.extractor));
            suite.add_test_case(tc);
        }
        r.add_test_suite(suite);
    }
    r.to_string().unwrap_or_default()
}
