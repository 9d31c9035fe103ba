//! `snapconf hydrate`, `snapconf recover` and `snapconf check-archive`: the reference
//! extractor on the command line, so a backend in any language can replace its `tar -xf`
//! with it.

use super::args::{CheckArchiveArgs, HydrateArgs, RecoverArgs, ServeHydrateArgs};
use super::policy_flags::policy;
use super::Usage;
use serde::Serialize;
use snapconf_extract as rx;
use snapconf_harness::archive::parsers::printable;
use snapconf_harness::exit;
use snapconf_harness::model::bytes::RawBytes;
use std::io::Read;
use std::os::fd::AsFd;
use std::path::Path;

fn open(path: &Path) -> Result<Box<dyn Read>, Usage> {
    if path.as_os_str() == "-" {
        return Ok(Box::new(std::io::stdin().lock()));
    }
    archive_arg(path)?;
    std::fs::File::open(path)
        .map(|f| Box::new(std::io::BufReader::new(f)) as Box<dyn Read>)
        .map_err(|e| Usage(format!("cannot open archive `{}`: {e}", shown(path))))
}

/// `path` for a message: its control bytes escaped (a name is never printed raw).
fn shown(path: &Path) -> String {
    printable(&path.display().to_string())
}

/// The usage errors of an ARCHIVE argument (not `-`): it does not exist or is a directory.
fn archive_arg(path: &Path) -> Result<(), Usage> {
    match std::fs::metadata(path) {
        Err(e) => Err(Usage(format!("cannot open archive `{}`: {e}", shown(path)))),
        Ok(m) if m.is_dir() => Err(Usage(format!(
            "archive `{}` is a directory, not a tar file",
            shown(path)
        ))),
        Ok(_) => Ok(()),
    }
}

/// The parent directory of `root` after the usage checks `hydrate` and `recover` share:
/// ROOT ends in a plain name (not `/`, `.` or `..`) and its parent is a directory.
fn root_parent(root: &Path) -> Result<&Path, Usage> {
    use std::path::Component;
    if !matches!(root.components().next_back(), Some(Component::Normal(_))) {
        return Err(Usage(format!(
            "root `{}` must end in a plain name (not `/`, `.` or `..`)",
            shown(root)
        )));
    }
    let parent = match root.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !parent.is_dir() {
        return Err(Usage(format!(
            "the parent of root `{}` is missing or not a directory",
            shown(root)
        )));
    }
    Ok(parent)
}

/// The usage errors of `hydrate ARCHIVE ROOT` ([`exit::USAGE`]), told before anything is
/// read: the archive ([`archive_arg`]), ROOT and its parent ([`root_parent`]), and a ROOT
/// that exists but is not a directory (a file, a symlink). The extractor checks the root
/// again as it works (an I/O failure then, [`exit::IO_FAILURE`]).
fn hydrate_args(archive: &Path, root: &Path) -> Result<(), Usage> {
    if archive.as_os_str() != "-" {
        archive_arg(archive)?;
    }
    root_parent(root)?;
    match std::fs::symlink_metadata(root) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(m) if m.is_symlink() => Err(Usage(format!(
            "root `{}` is a symlink; hydrate never writes through one",
            shown(root)
        ))),
        Ok(_) => Err(Usage(format!(
            "root `{}` exists and is not a directory",
            shown(root)
        ))),
        // Absent (a new root), or not inspectable: the extractor tells the latter.
        Err(_) => Ok(()),
    }
}

/// `snapconf hydrate ARCHIVE ROOT`: exit [`exit::OK`] hydrated, [`exit::FINDINGS`] refused
/// (ROOT unchanged), [`exit::USAGE`] bad arguments ([`hydrate_args`]), [`exit::IO_FAILURE`]
/// an I/O failure while hydrating (ROOT unchanged).
pub fn hydrate(a: HydrateArgs) -> anyhow::Result<i32> {
    let policy = policy(&a.policy);
    hydrate_args(&a.archive, &a.root)?;
    let result = if a.archive.as_os_str() == "-" {
        // Stdin as a file: redirected from a regular file it is read in place (or, when
        // compressed, decompressed beside the validation); a pipe or device takes
        // the single pass (validated and written as it is read).
        match std::io::stdin().as_fd().try_clone_to_owned() {
            Ok(fd) => rx::hydrate_file(&std::fs::File::from(fd), &a.root, &policy),
            Err(_) => rx::hydrate(open(&a.archive)?, &a.root, &policy),
        }
    } else {
        let file = std::fs::File::open(&a.archive)
            .map_err(|e| Usage(format!("cannot open archive `{}`: {e}", shown(&a.archive))))?;
        rx::hydrate_file(&file, &a.root, &policy)
    };
    Ok(report_hydration(result, &a.root))
}

/// `snapconf recover ROOT`: [`rx::recover`], one stdout line per staging directory removed
/// (`removed <path>`) or left alone because a live hydration holds it (`live <path>`), and
/// per legacy journal unlinked. Exit codes: [`exit::OK`] (recovered or nothing to do),
/// [`exit::IO_FAILURE`] (a leftover could not be removed: an I/O failure, as in `hydrate`),
/// [`exit::USAGE`] (ROOT does not end in a plain name, or its parent is not a directory).
pub fn recover(a: RecoverArgs) -> anyhow::Result<i32> {
    let root = &a.root;
    let parent = root_parent(root)?;
    match rx::recover(root) {
        Ok(done) => {
            for (what, names) in [
                ("removed", &done.removed),
                ("removed journal", &done.journals),
                ("live, left alone:", &done.live),
            ] {
                for name in names {
                    outln!("{what} {}", shown(&parent.join(name)));
                }
            }
            if done.removed.is_empty() && done.journals.is_empty() {
                eprintln!("nothing to recover beside `{}`", shown(root));
            }
            Ok(exit::OK)
        }
        Err(e) => {
            eprintln!("failed: {}", printable(&e.to_string()));
            Ok(exit::IO_FAILURE)
        }
    }
}

/// What `hydrate` prints (on stderr) and exits with for `result`, a hydration of `root`:
/// [`exit::OK`], [`exit::FINDINGS`] for a refusal, [`exit::IO_FAILURE`] for an I/O error.
fn report_hydration(result: Result<rx::HydrateReport, rx::HydrateError>, root: &Path) -> i32 {
    let root_shown = shown(root);
    match result {
        Ok(report) => {
            eprintln!(
                "hydrated `{root_shown}`: {} members, {} bytes",
                report.members, report.bytes
            );
            if let Some(why) = &report.leftover {
                eprintln!(
                    "warning: {}; later hydrations of `{root_shown}` fail until it is removed",
                    printable(why)
                );
            }
            exit::OK
        }
        Err(e) => {
            let text = printable(&e.to_string());
            match e.reason() {
                Some(code) => {
                    eprintln!("refused ({code}): {text}; `{root_shown}` is unchanged");
                    exit::FINDINGS
                }
                None => {
                    eprintln!("failed: {text}; `{root_shown}` is unchanged");
                    exit::IO_FAILURE
                }
            }
        }
    }
}

/// `snapconf serve-hydrate`: the fuzzer's persistent reference server
/// ([`snapconf_producers::process::server`]). Each stdin line is `ARCHIVE ROOT`, both
/// hex-encoded; each gets what `snapconf hydrate ARCHIVE ROOT` (same policy flags) prints
/// on stderr, and `exit N` on stdout with the exit code that command would have. It runs
/// in this process: the caller kills the whole server at a request's timeout, and a crash
/// ends the server (the request is then a hang and the caller starts another). A panic in
/// the extractor answers `exit 101`, as the panicking command would exit. Ends at the end
/// of stdin; a malformed line ends it with exit 2.
pub fn serve(a: ServeHydrateArgs) -> anyhow::Result<i32> {
    use std::io::{BufRead, Write};
    use std::os::unix::ffi::OsStringExt;
    let policy = policy(&a.policy);
    let stdin = std::io::stdin().lock();
    let mut stdout = std::io::stdout().lock();
    for line in stdin.split(b'\n') {
        let line = line?;
        let fields: Option<Vec<std::path::PathBuf>> = line
            .split(|&b| b == b' ')
            .map(|f| {
                hex::decode(f)
                    .ok()
                    .map(|b| std::ffi::OsString::from_vec(b).into())
            })
            .collect();
        let Some([archive, root]) = fields.as_deref() else {
            return Err(
                Usage("serve-hydrate: a request is `ARCHIVE ROOT`, hex-encoded".into()).into(),
            );
        };
        let code = match hydrate_args(archive, root).and_then(|()| {
            std::fs::File::open(archive)
                .map_err(|e| Usage(format!("cannot open archive `{}`: {e}", shown(archive))))
        }) {
            Err(e) => {
                eprintln!("snapconf: error: {e}");
                exit::USAGE
            }
            Ok(file) => std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                report_hydration(rx::hydrate_file(&file, root, &policy), root)
            }))
            .unwrap_or(101),
        };
        writeln!(stdout, "exit {code}")?;
        stdout.flush()?;
    }
    Ok(exit::OK)
}

#[derive(Serialize)]
struct Verdict {
    verdict: &'static str,
    reason: Option<&'static str>,
    member: Option<RawBytes>,
    detail: Option<String>,
    members: Vec<MemberJson>,
}

#[derive(Serialize)]
struct MemberJson {
    name: RawBytes,
    /// [`rx::MemberKind::name`].
    kind: &'static str,
    /// The raw type flag of an `other` kind, as a one-byte string.
    #[serde(skip_serializing_if = "Option::is_none")]
    type_flag: Option<RawBytes>,
    #[serde(skip_serializing_if = "Option::is_none")]
    link_target: Option<RawBytes>,
    size: u64,
    mode: String,
}

fn members_json(listing: rx::Listing) -> Vec<MemberJson> {
    listing
        .members
        .into_iter()
        .map(|m| MemberJson {
            name: RawBytes(m.name),
            kind: m.kind.name(),
            type_flag: match m.kind {
                rx::MemberKind::Other(flag) => Some(RawBytes(vec![flag])),
                _ => None,
            },
            link_target: m.link_target.map(RawBytes),
            size: m.size,
            mode: format!("{:04o}", m.mode),
        })
        .collect()
}

/// `snapconf check-archive FILE`: the verdict as JSON. Exit [`exit::OK`] accepted,
/// [`exit::FINDINGS`] refused, [`exit::USAGE`] FILE missing or a directory,
/// [`exit::IO_FAILURE`] reading it failed; `--all-parsers`: see [`super::parsers::check_all`].
pub fn check_archive(a: CheckArchiveArgs) -> anyhow::Result<i32> {
    let policy = policy(&a.policy);
    if a.all_parsers {
        return super::parsers::check_all(&a.file, &policy);
    }
    let input = open(&a.file)?;
    let (verdict, code) = match rx::validate(input, &policy) {
        Ok(listing) => (
            Verdict {
                verdict: "accept",
                reason: None,
                member: None,
                detail: None,
                members: members_json(listing),
            },
            exit::OK,
        ),
        Err(rx::HydrateError::Refused {
            reason,
            member,
            detail,
        }) => (
            Verdict {
                verdict: "refuse",
                reason: Some(reason.as_str()),
                member: Some(RawBytes(member)),
                detail: Some(detail),
                // The listing as far as the reference parser can read it (a file only: a
                // stream was consumed by the verdict), decompressed under the same limits as
                // the verdict, so a bomb is not inflated further for the listing.
                members: if a.file.as_os_str() == "-" {
                    vec![]
                } else {
                    std::fs::File::open(&a.file)
                        .ok()
                        .and_then(|f| {
                            let (_, tar) = rx::compression::tar_stream(
                                std::io::BufReader::new(f),
                                &policy.limits,
                            )
                            .ok()?;
                            rx::list_tar(tar).ok()
                        })
                        .map(members_json)
                        .unwrap_or_default()
                },
            },
            exit::FINDINGS,
        ),
        // Not a property of the archive: an I/O failure (exit 3), as in `hydrate`.
        Err(e) => {
            return Err(anyhow::anyhow!(
                "cannot read archive `{}`: {}",
                shown(&a.file),
                printable(&e.to_string())
            ))
        }
    };
    outln!("{}", serde_json::to_string_pretty(&verdict)?);
    Ok(code)
}
