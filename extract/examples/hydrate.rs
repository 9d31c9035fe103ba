//! Hydrates a workspace from a tar archive with the reference policy ([`Policy::default`]).
//!
//! ```text
//! cargo run -p snapconf-extract --example hydrate -- ARCHIVE ROOT
//! ```
//!
//! `ARCHIVE` is a tar file, plain or compressed (gzip, zstd or xz, told by its magic
//! number), or `-` for standard input; `ROOT` is the workspace directory to replace (it need
//! not exist, its parent must). On success `ROOT` holds exactly the archive's tree; on any
//! error it is exactly as it was.
//!
//! Exit codes:
//! - 0: hydrated; prints the members read, the payload bytes written and the members the
//!   policy left out (standard output);
//! - 1: refused: the archive breaks the policy, is malformed or truncated; prints the
//!   stable reason code, the member and a detail (standard error);
//! - 2: bad usage: not two arguments, or `ARCHIVE` cannot be opened;
//! - 3: an I/O fault that is not the archive's: `ROOT` is a symlink or not a directory, its
//!   parent is missing, the disk is full, reading the archive failed.

use std::ffi::OsString;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use snapconf_extract::{hydrate, hydrate_file, HydrateError, Policy};

fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let [archive, root] = args.as_slice() else {
        eprintln!("usage: hydrate ARCHIVE ROOT   (ARCHIVE `-` reads standard input)");
        return ExitCode::from(2);
    };
    let root = PathBuf::from(root);
    let policy = Policy::default();
    let outcome = if archive == "-" {
        hydrate(io::stdin().lock(), &root, &policy)
    } else {
        match File::open(archive) {
            // A plain regular file is validated whole before anything is written.
            Ok(file) => hydrate_file(&file, &root, &policy),
            Err(e) => {
                eprintln!("cannot open `{}`: {e}", Path::new(archive).display());
                return ExitCode::from(2);
            }
        }
    };
    match outcome {
        Ok(report) => {
            println!(
                "hydrated `{}`: {} members, {} bytes",
                root.display(),
                report.members,
                report.bytes
            );
            for name in &report.dropped {
                println!("left out: {}", String::from_utf8_lossy(name));
            }
            if let Some(why) = &report.leftover {
                println!("the new tree is in place, the old one is left beside it: {why}");
            }
            ExitCode::SUCCESS
        }
        Err(e @ HydrateError::Refused { .. }) => {
            eprintln!("`{}` unchanged: {e}", root.display());
            ExitCode::from(1)
        }
        Err(e @ HydrateError::Io { .. }) => {
            eprintln!("`{}` unchanged: {e}", root.display());
            ExitCode::from(3)
        }
    }
}
