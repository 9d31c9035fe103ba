//! `junit.xml` via quick-junit: one suite per pair, one test case per check.

use super::RunReport;
use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
use std::io;

/// The JUnit report could not be serialised or written: never an empty `junit.xml` instead.
#[derive(Debug, thiserror::Error)]
#[error("cannot serialise the JUnit report: {source}")]
pub struct JunitError {
    #[source]
    source: quick_junit::SerializeError,
}

/// Render the JUnit XML of `report` (see [`write_junit`]).
///
/// # Errors
/// [`JunitError`] if quick-junit cannot serialise it.
pub fn junit_xml(report: &RunReport) -> Result<String, JunitError> {
    junit_report(report)
        .to_string()
        .map_err(|source| JunitError { source })
}

/// Write the JUnit XML of `report` to `out`. A failing cell carries the first finding's
/// message and reproducer path; a pair whose capture was refused for every case is marked
/// skipped.
///
/// # Errors
/// [`JunitError`] if quick-junit cannot serialise the report or `out` refuses a write.
pub fn write_junit(report: &RunReport, out: impl io::Write) -> Result<(), JunitError> {
    junit_report(report)
        .serialize(out)
        .map_err(|source| JunitError { source })
}

fn junit_report(report: &RunReport) -> Report {
    let mut r = Report::new("snapconf");
    for p in &report.pairs {
        let mut suite = TestSuite::new(format!("{} x {}", p.producer, p.extractor));
        for c in report.columns() {
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
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn empty() -> RunReport {
        RunReport {
            schema: 1,
            ..RunReport::empty(Default::default(), 1, 0, "default")
        }
    }

    /// A writer whose every write fails, as a full disk does.
    struct Full;
    impl io::Write for Full {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::Error::other("no space left on device"))
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// A report that cannot be written is an error, never an empty document; a run without
    /// pairs is still a whole document.
    #[test]
    fn junit_is_a_whole_document_or_an_error() {
        let err = write_junit(&empty(), Full).expect_err("the write fails");
        assert!(err.to_string().contains("JUnit"), "{err}");
        let xml = junit_xml(&empty()).expect("renders");
        assert!(
            xml.starts_with("<?xml") && xml.contains("<testsuites"),
            "{xml}"
        );
    }
}
