//! The reference extractor in a child process (`snapconf hydrate`), so that it can run
//! under `RLIMIT_FSIZE` and be killed like an external tool.

use snapconf_extract as rx;
use snapconf_producers::process::run::run_limited;
use snapconf_producers::{Availability, Extractor, HydrateRequest, Outcome, ToolError};
use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;
use std::process::Command;

/// `BIN hydrate --hardlinks … ARCHIVE ROOT` with the policy of the run's reference
/// extractor. Exit 0 is success, any other exit a refusal (`snapconf hydrate` exits 1 with
/// the root unchanged), a signal a hang. Named `reference`, like the in-process adapter it
/// stands in for. Its recovery step is `snapconf_extract::recover(root)`.
#[derive(Clone, Debug)]
pub struct ChildReference {
    bin: PathBuf,
    flags: Vec<OsString>,
    promises: snapconf_producers::LinkPromises,
}

impl ChildReference {
    /// A child-process reference extractor running `bin` with `policy`.
    pub fn new(bin: PathBuf, policy: &rx::Policy) -> ChildReference {
        ChildReference {
            bin,
            flags: policy_flags(policy),
            promises: snapconf_producers::adapters::reference::link_promises(policy),
        }
    }
}

impl ChildReference {
    /// `BIN hydrate FLAGS ARCHIVE ROOT` for `req`: what a one-shot run starts, and what a
    /// request to the server stands for.
    fn command(&self, req: &HydrateRequest<'_>) -> Command {
        let mut cmd = Command::new(&self.bin);
        cmd.arg("hydrate")
            .args(&self.flags)
            .arg(req.archive)
            .arg(req.root);
        cmd
    }
}

/// The `snapconf hydrate` flags that select `policy` (see `PolicyArgs`).
pub fn policy_flags(policy: &rx::Policy) -> Vec<OsString> {
    use rx::{AbsoluteSymlinks, Duplicates, EscapingSymlinks, Hardlinks, Modes, SpecialFiles};
    let pairs = [
        (
            "--hardlinks",
            match policy.hardlinks {
                Hardlinks::Reject => "reject",
                Hardlinks::Copy => "copy",
                Hardlinks::Link => "link",
            },
        ),
        (
            "--absolute-symlinks",
            match policy.absolute_symlinks {
                AbsoluteSymlinks::Reject => "reject",
                AbsoluteSymlinks::Keep => "keep",
                AbsoluteSymlinks::Rebase => "rebase",
                AbsoluteSymlinks::Drop => "drop",
            },
        ),
        (
            "--escaping-symlinks",
            match policy.escaping_symlinks {
                EscapingSymlinks::Reject => "reject",
                EscapingSymlinks::Keep => "keep",
            },
        ),
        (
            "--special-files",
            match policy.special_files {
                SpecialFiles::Reject => "reject",
                SpecialFiles::Drop => "drop",
            },
        ),
        (
            "--duplicates",
            match policy.duplicates {
                Duplicates::Reject => "reject",
                Duplicates::LastWins => "last-wins",
            },
        ),
        (
            "--modes",
            match policy.modes {
                Modes::Exact => "exact",
                Modes::DataFilter => "data-filter",
            },
        ),
    ];
    let mut out: Vec<OsString> = Vec::new();
    for (flag, value) in pairs {
        out.push(flag.into());
        out.push(value.into());
    }
    if policy.allow_empty {
        out.push("--allow-empty".into());
    }
    if let Some(r) = &policy.original_root {
        out.push("--original-root".into());
        out.push(OsString::from_vec(r.clone()));
    }
    out
}

impl Extractor for ChildReference {
    fn name(&self) -> &str {
        "reference"
    }

    fn availability(&self) -> Availability {
        Availability::Available {
            version: format!("{} hydrate", self.bin.display()),
        }
    }

    fn hydrate(&self, req: &HydrateRequest<'_>) -> Result<Outcome, ToolError> {
        run_limited(&mut self.command(req), req.scratch, req.timeout, req.limits)
    }

    fn honours_limits(&self) -> bool {
        true
    }

    fn link_promises(&self) -> snapconf_producers::LinkPromises {
        self.promises
    }

    fn view_paths(&self) -> Option<Vec<PathBuf>> {
        Some(vec![self.bin.clone()])
    }

    /// `BIN serve-hydrate` with the same policy flags: `hydrate` per request, in one
    /// process (see `snapconf serve-hydrate`).
    fn server_command(&self) -> Option<Command> {
        let mut cmd = Command::new(&self.bin);
        cmd.arg("serve-hydrate").args(&self.flags);
        Some(cmd)
    }

    fn hydrate_served(
        &self,
        req: &HydrateRequest<'_>,
        server: &mut snapconf_producers::process::server::Server,
    ) -> Result<Outcome, ToolError> {
        if req.limits.is_some() {
            return self.hydrate(req);
        }
        server.request(
            &self.command(req),
            &[req.archive.as_os_str(), req.root.as_os_str()],
            req.timeout,
        )
    }

    fn recover(&self, req: &HydrateRequest<'_>) -> Result<Option<Outcome>, ToolError> {
        Ok(Some(match rx::recover(req.root) {
            Ok(_) => Outcome::Success,
            Err(e) => Outcome::Refused {
                message: snapconf_producers::adapters::reference::refusal_message(&e),
            },
        }))
    }
}
