// The one skip helper of snapconf's tests, shared by the three test crates without a
// dependency between them (`extract/` depends on nothing of ours):
// - harness/tests/it/support/mod.rs, extract/tests/it/common/mod.rs and
//   producers/tests/it/common/mod.rs (each crate's one test binary, tests/it/) include it
//   with `#[path = "../../../../test-support/skip.rs"] mod skip;`;
// - unit tests under `src/` include it with
//   `mod skip { include!("<relative path>/test-support/skip.rs"); }`
//   (hence outer doc comments only: `include!` takes no inner attributes).

/// The environment variable that turns every skip into a failure. `.ci/run` sets it to `1`,
/// so that a CI machine lacking a tool fails instead of passing a test that tested nothing.
/// Any value other than empty or `0` counts as set.
pub const REQUIRE_TOOLS: &str = "SNAPCONF_REQUIRE_TOOLS";

/// Reports that the calling test cannot check (all or part of) what it checks here, because
/// `missing` (a tool, a Python package, root, a mount permission...) is not available, and
/// how to get it (`install`, e.g. `apt-get install busybox`).
///
/// Prints one line to stderr, `SKIPPED <test>: <missing> (install: <install>)`, where
/// `<test>` is the running test's name (libtest names each test's thread after it; the
/// caller's location otherwise), and returns: the caller then returns or moves on to its
/// next tool. The line goes straight to the process's stderr, so `cargo test` shows it even
/// though the test passes. With `SNAPCONF_REQUIRE_TOOLS=1` ([`REQUIRE_TOOLS`]) it panics
/// with the same message instead.
///
/// Why: a test that returns early when a tool is missing passes as `ok`, so a bare
/// `cargo test` on a machine without the tools can pass while testing little. The line makes
/// every skip visible, and CI, which installs every tool and runs as root, sets the variable
/// so that a skip there fails the run.
#[track_caller]
pub fn skip(missing: &str, install: &str) {
    let thread = std::thread::current();
    let test = match thread.name() {
        Some(name) if name != "main" => name.to_owned(),
        _ => std::panic::Location::caller().to_string(),
    };
    let message = format!("SKIPPED {test}: {missing} (install: {install})");
    let required = std::env::var_os(REQUIRE_TOOLS).is_some_and(|v| !v.is_empty() && v != "0");
    if required {
        eprintln!("{REQUIRE_TOOLS} is set: a skipped test fails");
        panic!("{message}");
    }
    // Written to the stderr handle, not with `eprintln!`, which libtest captures (and shows
    // only for a failing test): a skip is seen in a plain `cargo test` run of a passing test.
    let _ = std::io::Write::write_all(&mut std::io::stderr(), format!("{message}\n").as_bytes());
}
