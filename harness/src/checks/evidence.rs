//! [`Evidence`]: what a driver saw in one step (a capture or a hydration), handed to every
//! check; and [`Violation`], what a check returns.
//!
//! A driver fills in what its step produced and leaves the rest empty; a check whose
//! evidence is absent holds vacuously. Trees that cost a walk (the root after the step) are
//! read at most once, and only if a check asks for them.

use super::Check;
use crate::archive::listing::Member;
use crate::archive::parser_listing::ParserListing;
use crate::checks::Judged;
use crate::error::{HarnessError, IoContext};
use crate::model::profile::Profile;
use crate::model::tree::Tree;
use crate::workspace::observe::observe;
use snapconf_extract::{HydrateReport, Listing, Policy};
use snapconf_producers::Outcome;
use std::cell::OnceCell;
use std::path::Path;

/// Which step the evidence is of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// A producer captured a workspace into an archive.
    Capture,
    /// An extractor hydrated an archive into a root.
    Hydrate,
}

/// What a capture wrote, for the member-list checks.
#[derive(Clone, Copy, Debug)]
pub struct Archived<'a> {
    /// The archive's members, in order; or why the reference could not list them (then
    /// no member check can hold).
    pub members: Result<&'a [Member], &'a str>,
    /// The workspace-relative paths the capture was told to exclude.
    pub exclusions: &'a [Vec<u8>],
    /// Decoys or canaries (paths in the jail, outside the root) whose bytes the archive
    /// holds: read through a link.
    pub stored_canaries: &'a [&'a str],
}

/// The reference extractor's two readings of one archive (the fuzz oracle's evidence).
#[derive(Clone, Copy, Debug)]
pub struct ReferenceRun<'a> {
    /// The policy both ran under.
    pub policy: &'a Policy,
    /// `validate`'s verdict.
    pub validated: &'a Result<Listing, snapconf_extract::HydrateError>,
    /// `hydrate`'s verdict.
    pub hydrated: &'a Result<HydrateReport, snapconf_extract::HydrateError>,
}

/// How a restore of a session's checkpoint (`snapconf lifecycle`) was made.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RestoreKind {
    /// Into an empty root: a resume in a new container.
    Cold,
    /// Over the live workspace, which has moved on since the checkpoint was taken.
    Warm,
    /// Over the live workspace right after its capture was refused: the last good
    /// checkpoint, which must come back without anything of the failed turn.
    AfterRefusal,
}

impl RestoreKind {
    /// The restore in words, for messages: `cold restore`, `warm restore`, `restore after
    /// the refused capture`.
    pub fn words(self) -> &'static str {
        match self {
            RestoreKind::Cold => "cold restore",
            RestoreKind::Warm => "warm restore",
            RestoreKind::AfterRefusal => "restore after the refused capture",
        }
    }
}

/// Where one step stands in a session of turns through one backend instance (`snapconf
/// lifecycle`, docs/design.md "Sessions").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionStep {
    /// The turn, from 1.
    pub turn: usize,
    /// For a restore: the turn whose checkpoint it restores, and how.
    pub restore: Option<(usize, RestoreKind)>,
    /// For a capture refused right after a refused turn, of a workspace that holds nothing
    /// the profile lets a capture refuse: whether a fresh instance of the same producer
    /// captured the same workspace (`Some(true)`: the session's instance is stuck).
    pub fresh_capture: Option<bool>,
}

/// A step run in the fuzzer's filesystem view (the jail seen as `/`): where the root sits
/// and the whole jail before and after the step, decoy directories planted before it
/// included (see `traversal`).
#[derive(Clone, Copy, Debug)]
pub struct InView<'a> {
    /// The root's path in the view, without the leading `/` (jail-relative:
    /// `home/user/ws/root`).
    pub root: &'a [u8],
    /// The jail before the step (after planting), keyed by jail-relative path.
    pub before: &'a crate::jail::Snapshot,
    /// The jail after the step.
    pub after: &'a crate::jail::Snapshot,
}

/// A whole-tree alternative that counts as "intact" after a failed hydration: for a killed
/// extractor, the complete new tree (`Ok(true)` if `after` is it).
pub type AlsoIntact<'a> = dyn Fn(&Tree) -> Result<bool, HarnessError> + 'a;

/// Everything a driver saw in one step. Build with [`Evidence::capture`] or
/// [`Evidence::hydration`], then set the fields the step produced.
pub struct Evidence<'a> {
    /// Which step.
    pub step: Step,
    /// The step in words, first in every message: "capture by `gnu-tar`", "hydration
    /// over the prior workspace", "hydration under fault kill@3".
    pub what: &'a str,
    /// How the tool ended. A refusal whose message has more to say (a backend's recovery
    /// step) carries it in the message.
    pub outcome: &'a Outcome,
    /// The fault injected into this step (`--faults`), in words (`kill (SIGKILL after 1
    /// ms)`): the tool's death or hang is then the fault's doing, not a finding.
    pub fault: Option<&'a str>,
    /// Lines naming what changed in the jail outside the root during the step (empty if
    /// nothing did, or if the driver could not look).
    pub outside: &'a [String],
    /// Processes the step left running (killed), one line each.
    pub stragglers: &'a [String],
    /// What a capture wrote.
    pub archived: Option<Archived<'a>>,
    /// The root the step wrote into (a hydration's), read lazily by [`Evidence::root_tree`].
    pub root: Option<&'a Path>,
    /// The tree the profile promises after a successful hydration (normalised), when the
    /// archive is a capture of a known workspace.
    pub expected: Option<&'a Tree>,
    /// The profile, to normalise the observed tree as `expected` is.
    pub profile: Option<&'a Profile>,
    /// The workspace that was in the root before the hydration (W0), if there was one.
    pub prior: Option<&'a Tree>,
    /// The driver's own cheaper word on whether the prior is untouched (identical `lstat`
    /// state of every path), if it has one: `Some(true)` skips reading the root.
    pub prior_unchanged: Option<bool>,
    /// Another tree that also counts as intact after a failure (see [`AlsoIntact`]).
    pub also_intact: Option<&'a AlsoIntact<'a>>,
    /// What the extractor promises about the links it writes (`escaping-link`).
    pub promises: Option<snapconf_producers::LinkPromises>,
    /// The extractor's name when snapconf's own adapter emptied the root before the tool
    /// ran ([`snapconf_producers::Extractor::clears_root`]); `atomic-hydration` says so.
    pub cleared_by: Option<&'a str>,
    /// The reference's judgement of the archive's safety (`fuzz`).
    pub judged: Option<&'a Judged>,
    /// The reference's own two readings (the `extract_reference` oracle).
    pub reference: Option<ReferenceRun<'a>>,
    /// Member lists of the same bytes by several parsers, by parser name.
    pub listings: &'a [(&'a str, ParserListing)],
    /// Where the step stands in a session of turns (`snapconf lifecycle`); `None` for a
    /// single case.
    pub session: Option<SessionStep>,
    /// The fuzzer's filesystem view the step ran in, if it ran in one (`traversal` then
    /// needs an observed write outside).
    pub view: Option<InView<'a>>,
    root_tree: OnceCell<Result<Tree, String>>,
    root_replaced: OnceCell<Option<String>>,
}

impl<'a> Evidence<'a> {
    fn new(step: Step, what: &'a str, outcome: &'a Outcome) -> Evidence<'a> {
        Evidence {
            step,
            what,
            outcome,
            fault: None,
            outside: &[],
            stragglers: &[],
            archived: None,
            root: None,
            expected: None,
            profile: None,
            prior: None,
            prior_unchanged: None,
            also_intact: None,
            promises: None,
            cleared_by: None,
            judged: None,
            reference: None,
            listings: &[],
            session: None,
            view: None,
            root_tree: OnceCell::new(),
            root_replaced: OnceCell::new(),
        }
    }

    /// Evidence of a capture described by `what`, which ended as `outcome`.
    pub fn capture(what: &'a str, outcome: &'a Outcome) -> Evidence<'a> {
        Evidence::new(Step::Capture, what, outcome)
    }

    /// Evidence of a hydration into `root`, described by `what`, which ended as `outcome`.
    pub fn hydration(what: &'a str, outcome: &'a Outcome, root: &'a Path) -> Evidence<'a> {
        Evidence {
            root: Some(root),
            ..Evidence::new(Step::Hydrate, what, outcome)
        }
    }

    /// Evidence about archive bytes alone (no tool ran): parser listings, say.
    pub fn archive_only(what: &'a str) -> Evidence<'a> {
        static NOTHING: Outcome = Outcome::Success;
        Evidence::new(Step::Capture, what, &NOTHING)
    }

    /// The root as it is after the step (`observe`d once, on first use); `None` without a
    /// root.
    ///
    /// # Errors
    /// The root cannot be read, as a message (a failed extractor may leave it unreadable,
    /// which some checks report as a finding).
    pub fn root_tree(&self) -> Option<Result<&Tree, &str>> {
        let root = self.root?;
        let t = self.root_tree.get_or_init(|| {
            // Never observe through a root replaced by a link: that reads elsewhere.
            if let Some(how) = self.root_replaced() {
                return Err(format!("the root was {how}"));
            }
            observe(root).map_err(|e| format!("cannot observe `{}`: {e}", root.display()))
        });
        Some(t.as_ref().map_err(String::as_str))
    }

    /// How the step left the root itself, when it is no longer a directory: `removed`,
    /// `replaced by a symlink to ...`, `replaced by a file` (`None` while it is a directory
    /// or there is no root). An extractor that does this is a `containment` finding.
    pub fn root_replaced(&self) -> Option<String> {
        // Asked by several checks: one `lstat` per step.
        self.root_replaced
            .get_or_init(|| self.root.and_then(replaced))
            .clone()
    }

    /// [`Evidence::root_tree`] where an unreadable root is snapconf's fault; `None` also
    /// when the step removed or replaced the root ([`Evidence::root_replaced`], which
    /// `containment` reports), since there is no tree to judge then.
    ///
    /// # Errors
    /// [`HarnessError`] naming the root.
    pub fn root_tree_or_err(&self) -> Result<Option<&Tree>, HarnessError> {
        if self.root_replaced().is_some() {
            return Ok(None);
        }
        match self.root_tree() {
            None => Ok(None),
            Some(Ok(t)) => Ok(Some(t)),
            Some(Err(e)) => Err(std::io::Error::other(e.to_string()))
                .ctx(|| "cannot observe the hydrated root".into()),
        }
    }

    /// The step in the words `containment` and `atomic-hydration` messages use (and so the
    /// baselines that fingerprint them): `capture`, `hydration`, or `hydration under fault
    /// F`.
    pub fn step_words(&self) -> String {
        match (self.fault, self.step) {
            (Some(f), _) => format!("hydration under fault {f}"),
            (None, Step::Capture) => "capture".to_string(),
            (None, Step::Hydrate) => "hydration".to_string(),
        }
    }

    /// The message of a refusal or hang, `None` for a success.
    pub fn failure_message(&self) -> Option<&str> {
        match self.outcome {
            Outcome::Success => None,
            Outcome::Refused { message } | Outcome::Hang { message } => Some(message),
        }
    }
}

/// One violated property in one step: the check, a one-line message, and the expected and
/// observed sides of the evidence (listings, diffs, tool messages) where there are some.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// Which check.
    pub check: Check,
    /// One line (or a few) saying what happened; paths escaped (`\xNN`).
    pub message: String,
    /// What was expected (an `ls -l`-style listing, a rule), where there is one.
    pub expected: Option<String>,
    /// What was observed: listing, diff, tool message.
    pub observed: Option<String>,
}

impl Violation {
    /// A violation of `check` with a message only.
    pub fn new(check: Check, message: String) -> Violation {
        Violation {
            check,
            message,
            expected: None,
            observed: None,
        }
    }
}

/// Member check `check` on `ev`: nothing when there is no archive; when the reference
/// could not list it, one violation saying so (the property cannot be shown to hold, so
/// it does not pass); else the one violation `find` reports on the archive and its
/// members, if any.
pub(crate) fn on_members(
    check: Check,
    ev: &Evidence<'_>,
    find: impl FnOnce(&Archived<'_>, &[Member]) -> Option<Violation>,
) -> Vec<Violation> {
    let Some(a) = ev.archived else {
        return Vec::new();
    };
    match a.members {
        Ok(members) => find(&a, members).into_iter().collect(),
        Err(why) => vec![unlistable(check, ev, why)],
    }
}

/// The violation of member check `check` when the reference could not list the archive
/// (`why`).
fn unlistable(check: Check, ev: &Evidence<'_>, why: &str) -> Violation {
    Violation::new(
        check,
        format!(
            "the archive of {} cannot be listed, so its members cannot be checked: {why}",
            ev.what
        ),
    )
}

/// Every check in `checks` on `ev`, in order: their violations in that order.
///
/// # Errors
/// The first fault of snapconf's own machinery (an unreadable jail, say).
pub fn violations_of(checks: &[Check], ev: &Evidence<'_>) -> Result<Vec<Violation>, HarnessError> {
    let mut out = Vec::new();
    for c in checks {
        out.extend(c.violations(ev)?);
    }
    Ok(out)
}

/// The first non-blank line of a tool's message; for a Python traceback, whose first line
/// says nothing, the first and the last (`tarfile.SpecialFileError: ...`).
pub fn first_line(s: &str) -> String {
    let first = s
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    if first.ends_with("Traceback (most recent call last):") {
        if let Some(last) = s.lines().rev().find(|l| !l.trim().is_empty()) {
            return format!("{first} ... {}", last.trim());
        }
    }
    first.to_string()
}

/// How `root` is no longer a directory, if it is not (see [`Evidence::root_replaced`]).
fn replaced(root: &Path) -> Option<String> {
    match std::fs::symlink_metadata(root) {
        Ok(m) if m.is_dir() => None,
        Ok(m) if m.file_type().is_symlink() => Some(match std::fs::read_link(root) {
            Ok(t) => format!(
                "replaced by a symlink to `{}`",
                crate::model::bytes::escape(t.as_os_str().as_encoded_bytes())
            ),
            Err(_) => "replaced by a symlink".to_string(),
        }),
        Ok(_) => Some("replaced by a non-directory".to_string()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some("removed".to_string()),
        Err(e) => Some(format!("made unreadable ({e})")),
    }
}
