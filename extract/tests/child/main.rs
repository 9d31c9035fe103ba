//! `snapconf-extract-test-child`: the child process of the crash and fault tests
//! (`tests/it/crash.rs`, `tests/it/faults.rs`), which kill it or starve it of file size.
//! Test-only: not part of the crate's interface (see the `[[bin]]` comment in Cargo.toml).
//!
//! - `crash ARCHIVE ROOT`: hydrates `ARCHIVE` (a file, or `-` for stdin) into `ROOT` with
//!   hardlinks linked, and exits 0; the test kills it with `SIGKILL` at a random moment.
//! - `fault MODE ARCHIVE ROOT`: limits file size to 64 KiB (`RLIMIT_FSIZE`; the caller
//!   ignores `SIGXFSZ`, so a write past it fails with `EFBIG`), hydrates `ARCHIVE` into
//!   `ROOT` (`hydrate_file` for MODE `file` and `zstd`, `hydrate` of the stream for
//!   `stream`) and exits 0 only if the hydration failed with an I/O error.
//!
//! Any other use, or a step that fails, exits 2 with a message on stderr.

use std::fs;
use std::path::Path;
use std::process::ExitCode;

use snapconf_extract::{hydrate, hydrate_file, Hardlinks, HydrateError, Policy};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let result = match args[..] {
        ["crash", archive, root] => crash(archive, Path::new(root)),
        ["fault", mode, archive, root] => fault(mode, archive, Path::new(root)),
        _ => Err(format!(
            "usage: snapconf-extract-test-child crash ARCHIVE|- ROOT | fault file|stream|zstd ARCHIVE ROOT (got {args:?})"
        )),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("snapconf-extract-test-child: {message}");
            ExitCode::from(2)
        }
    }
}

/// The crash test's policy (its `policy()`): hardlinks linked.
fn crash_policy() -> Policy {
    Policy {
        hardlinks: Hardlinks::Link,
        ..Policy::default()
    }
}

fn crash(archive: &str, root: &Path) -> Result<(), String> {
    let done = if archive == "-" {
        hydrate(std::io::stdin().lock(), root, &crash_policy())
    } else {
        let f = fs::File::open(archive).map_err(|e| format!("open {archive}: {e}"))?;
        hydrate_file(&f, root, &crash_policy())
    };
    done.map(drop).map_err(|e| format!("hydrate: {e}"))
}

fn fault(mode: &str, archive: &str, root: &Path) -> Result<(), String> {
    let limit = rustix::process::Rlimit {
        current: Some(64 << 10),
        maximum: None,
    };
    rustix::process::setrlimit(rustix::process::Resource::Fsize, limit)
        .map_err(|e| format!("setrlimit: {e}"))?;
    let f = fs::File::open(archive).map_err(|e| format!("open {archive}: {e}"))?;
    let r = match mode {
        "file" | "zstd" => hydrate_file(&f, root, &Policy::default()),
        "stream" => hydrate(f, root, &Policy::default()),
        other => return Err(format!("unknown fault mode `{other}`")),
    };
    match r {
        Err(e @ HydrateError::Io { .. }) => {
            eprintln!("child refused as expected: {e}");
            Ok(())
        }
        other => Err(format!("expected an I/O error, got {other:?}")),
    }
}
