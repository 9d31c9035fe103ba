//! `traversal`: an accepted archive puts no member under a link that leaves the root.
//!
//! Property: after an accepted hydration, no file, directory, symlink or hardlink member of
//! the archive (special files are dropped by every profile, rightly unwritten) sits at a path whose
//! parent, resolved as the kernel would at that member's turn in the listing order (from
//! the prior workspace and the members before it, links followed, `..` climbing from
//! where a link led), leaves the root while the same parent read lexically stays inside;
//! unless the final tree shows the member written inside the root at its name (a
//! careful extractor replaces the link by a directory, as node-tar 6.1.2 and later do), at
//! its name read as text, or at what follows its last `..` (GNU tar and BusyBox strip
//! `s/../x` to `x`).
//!
//! Out of a view (`snapconf fuzz --no-view`, or where no view can be built: an absolute
//! target is then the real host, and nothing is planted) this needs no target outside to
//! exist: a member the extractor accepted under such a link counts even if nothing outside
//! changed. (`snapconf run` never judges this check: it needs the fuzzer's listing.) node-tar 6.1.0 with
//! `d/`, `d -> ../out`, `d/pwned` follows the link; with no `../out` the write fails
//! (`ENOENT`), node-tar warns and succeeds. That rule cannot tell it from node-tar 7,
//! which keeps the link and skips `d/pwned` with a warning, writing nothing through it.
//!
//! In the fuzzer's filesystem view (the jail seen as `/`, so every place an archive can
//! aim at lies in the jail) the target is made to exist instead: before the step the
//! fuzzer plants an empty decoy directory, with its missing parents, where each such
//! member's parent lands in the view ([`decoy_dirs`], the same walk as the check; never
//! where a member itself lands, which the directory would hide), and the
//! check then needs the write: a member counts only if the step made or changed the entry
//! at its name there (`containment` sees the same write). node-tar 6.1.0 then shows it;
//! node-tar 7's skipped member is no finding, nor is a member whose place in the view is
//! back inside the root, in a read-only host directory, or past the planting bound.
//!
//! A member named with a plain `..` of its own (`../x`, no link on the way) is not this
//! check's: extractors strip such names (see `containment` and `unsafe-accept`). A link
//! left leaving the root is `escaping-link`'s when the extractor promised otherwise, and a
//! hardlink whose *target* goes through such a link is read, not written, there:
//! `containment` (a second link to a decoy) and `escaping-link` (`no_outside_hardlinks`)
//! see it. A member written inside and only later put behind a link (`d/x`, then
//! `d -> ../out`) is not this check's either.
//!
//! Evidence: [`Judged::members`](super::Judged::members) (the reference parser's listing
//! of the archive, kept even when the reference refuses it), [`Evidence::prior`], a
//! successful outcome, the root after the step and, in a view, [`Evidence::view`] (the
//! whole jail before and after). Every walk is [`links::walk`]'s.

use super::escaping_link::Observed;
use super::{Check, CheckDef, Evidence, InView, Violation};
use crate::archive::listing::Member;
use crate::error::HarnessError;
use crate::model::bytes::escape;
use crate::model::links;
use crate::model::tree::{NodeKind, Tree};
use snapconf_extract::MemberKind;
use snapconf_producers::Outcome;
use std::collections::{BTreeMap, HashSet};

/// The definition registered as [`Check::TRAVERSAL`].
pub const DEF: CheckDef = CheckDef {
    id: "traversal",
    explain: "an accepted archive put a member under a link leaving the root (written, or \
              claimed written, through it)",
    column: 106,
    severity: 1,
    judge,
};

fn judge(ev: &Evidence<'_>) -> Result<Vec<Violation>, HarnessError> {
    let (Some(j), Outcome::Success) = (ev.judged, ev.outcome) else {
        return Ok(Vec::new());
    };
    if j.members.is_empty() {
        return Ok(Vec::new());
    }
    let Some(after) = ev.root_tree_or_err()? else {
        return Ok(Vec::new());
    };
    let found = judged(ev.prior, &j.members, after, ev.view.as_ref());
    let Some(first) = found.first() else {
        return Ok(Vec::new());
    };
    Ok(vec![Violation {
        check: Check::TRAVERSAL,
        message: format!(
            "{} accepted a member under a link leaving the root: {first} ({} such member(s))",
            ev.what,
            found.len()
        ),
        expected: Some("no member under a link that leaves the root\n".into()),
        observed: Some(format!("{}\n", found.join("\n"))),
    }])
}

/// What the model holds at a path.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Held {
    Dir,
    Other,
    Link(Vec<u8>),
}

/// The root as the listing has made it so far: the prior, then each member applied naively.
struct Model(BTreeMap<Vec<Vec<u8>>, Held>);

impl links::Nodes for Model {
    fn node(&self, path: &[Vec<u8>]) -> links::Seen<'_> {
        match self.0.get(path) {
            None => links::Seen::Missing,
            Some(Held::Dir) => links::Seen::Dir,
            Some(Held::Other) => links::Seen::Other,
            Some(Held::Link(t)) => links::Seen::Symlink(t),
        }
    }
}

/// The kernel's rules: links followed, `..` at the root leaves it, missing parts taken as
/// names (what the walk would reach once an extractor made them).
const KERNEL: links::Rules = links::Rules {
    follow: links::Follow::All,
    above_root: links::AboveRoot::Leaves,
    dead_end: links::DeadEnd::PassesThrough,
};

fn comps(name: &[u8]) -> Vec<Vec<u8>> {
    snapconf_extract::name_components(name)
        .map(<[u8]>::to_vec)
        .collect()
}

fn show(path: &[Vec<u8>]) -> String {
    escape(&path.join(&b'/'))
}

impl Model {
    fn of(prior: Option<&Tree>) -> Model {
        let mut m = BTreeMap::new();
        for (p, n) in prior.map(|t| &t.nodes).into_iter().flatten() {
            let held = match &n.kind {
                NodeKind::Dir => Held::Dir,
                NodeKind::Symlink { target } => Held::Link(target.as_bytes().to_vec()),
                _ => Held::Other,
            };
            m.insert(comps(p.as_bytes()), held);
        }
        Model(m)
    }

    /// Apply `m` as an extractor with no containment would: missing parents made, a
    /// symlink replacing what is there, a directory made where nothing is, anything else
    /// made where no directory is. Where the name resolves outside, nothing changes here.
    fn apply(&mut self, m: &Member) {
        let rules = links::Rules {
            follow: links::Follow::NotLast,
            ..KERNEL
        };
        let links::End::Inside(p) = links::walk(self, rules, &[] as &[&[u8]], &m.name).end else {
            return;
        };
        if p.is_empty() {
            return;
        }
        for i in 1..p.len() {
            self.0.entry(p[..i].to_vec()).or_insert(Held::Dir);
        }
        let held = match m.kind {
            MemberKind::Dir => Held::Dir,
            MemberKind::Symlink => Held::Link(m.link_target.clone().unwrap_or_default()),
            MemberKind::Hardlink => {
                let target = m.link_target.clone().unwrap_or_default();
                match links::walk(self, rules, &[] as &[&[u8]], &target).end {
                    links::End::Inside(t) => match self.0.get(&t) {
                        Some(Held::Link(l)) => Held::Link(l.clone()),
                        _ => Held::Other,
                    },
                    _ => Held::Other,
                }
            }
            _ => Held::Other,
        };
        match (self.0.get(&p), &held) {
            (Some(Held::Dir), Held::Dir | Held::Other) => {}
            (Some(Held::Link(_)), Held::Dir) => {}
            _ => {
                self.0.insert(p, held);
            }
        }
    }
}

/// True if `after` holds a node of `m`'s kind where the extractor may have put `m` inside
/// the root: where its name resolves (the last component not followed), where it reads as
/// text (`s/../x` as `x`), or after its last `..` (`s/../x` as `x`: GNU tar and BusyBox
/// strip names up to there).
fn written_inside(after: &Tree, m: &Member) -> bool {
    let rules = links::Rules {
        follow: links::Follow::NotLast,
        above_root: links::AboveRoot::Leaves,
        dead_end: links::DeadEnd::Stops,
    };
    let mut places = Vec::new();
    if let links::End::Inside(p) =
        links::walk(&Observed(after), rules, &[] as &[&[u8]], &m.name).end
    {
        places.push(p);
    }
    if let links::End::Inside(p) = links::lexical(&[] as &[&[u8]], &m.name, links::AboveRoot::Stays)
    {
        places.push(p);
    }
    let c = comps(&m.name);
    if let Some(last) = c.iter().rposition(|x| x == b"..") {
        places.push(c[last + 1..].to_vec());
    }
    places.into_iter().any(|p| {
        let Ok(rel) = crate::model::bytes::RelPath::new(p.join(&b'/')) else {
            return false;
        };
        let Some(node) = after.nodes.get(&rel) else {
            return false;
        };
        match m.kind {
            MemberKind::Dir => node.kind == NodeKind::Dir,
            MemberKind::Symlink => matches!(node.kind, NodeKind::Symlink { .. }),
            _ => node.kind != NodeKind::Dir,
        }
    })
}

/// A member under a link leaving the root at its turn (see the module docs), before the
/// final tree is asked whether it was written inside.
struct Under {
    /// Its index in the listing.
    index: usize,
    /// Its parent, components from the root.
    parent: Vec<Vec<u8>>,
    /// How the parent left the root, in words.
    via: String,
    /// Where the parent resolves in the fuzzer's view (components from the view's `/`),
    /// when a view root was given and the parent resolves outside the root there.
    outside: Option<Vec<Vec<u8>>>,
}

/// The fuzzer's view as the walker sees it: the model of the root at `root` (components
/// from the view's `/`), its ancestors directories, anything else outside missing (a
/// missing part is passed through, as an extractor would make it). An absolute text starts
/// at the view's `/`.
struct ViewOf<'m> {
    model: &'m Model,
    root: &'m [Vec<u8>],
}

impl links::Nodes for ViewOf<'_> {
    fn node(&self, path: &[Vec<u8>]) -> links::Seen<'_> {
        if path.len() > self.root.len() && path.starts_with(self.root) {
            links::Nodes::node(self.model, &path[self.root.len()..])
        } else if self.root.starts_with(path) {
            links::Seen::Dir
        } else {
            links::Seen::Missing
        }
    }

    fn anchor<'t>(&self, text: &'t [u8]) -> links::Anchor<'t> {
        if text.starts_with(b"/") {
            links::Anchor::Root(text)
        } else {
            links::Anchor::Here(text)
        }
    }
}

/// Where `text` (a parent, read from the root at `root` in the view) resolves in the view
/// over `model`: links followed (as `follow` says), `..` at the view's `/` staying there.
/// `None` inside the root, or in a loop.
fn in_view(
    model: &Model,
    root: &[Vec<u8>],
    text: &[u8],
    follow: links::Follow,
) -> Option<Vec<Vec<u8>>> {
    let rules = links::Rules {
        above_root: links::AboveRoot::Stays,
        follow,
        ..KERNEL
    };
    match links::walk(&ViewOf { model, root }, rules, root, text).end {
        links::End::Inside(p) if !p.starts_with(root) => Some(p),
        _ => None,
    }
}

/// Every file, directory, symlink or hardlink member of `members` (in listing order, over
/// `prior`; special files, which every profile drops, are not counted) whose parent
/// resolves outside the root through a link at its turn while it stays inside read
/// lexically; with `view_root` (the root's components in the fuzzer's view), where each
/// such parent lands in the view. Each is handed to `each` as it is found, not kept: an
/// archive may hold a million members with names of thousands of components.
fn under_links(
    prior: Option<&Tree>,
    members: &[Member],
    view_root: Option<&[Vec<u8>]>,
    mut each: impl FnMut(Under),
) {
    let mut model = Model::of(prior);
    for (index, m) in members.iter().enumerate() {
        // Special files are dropped by every profile's policy: not written, rightly.
        let written = matches!(
            m.kind,
            MemberKind::File | MemberKind::Dir | MemberKind::Symlink | MemberKind::Hardlink
        );
        let mut parent = comps(&m.name);
        if written && parent.pop().is_some() && !parent.is_empty() {
            let text = parent.join(&b'/');
            let kernel = links::walk(&model, KERNEL, &[] as &[&[u8]], &text);
            let lexical = links::lexical(&[] as &[&[u8]], &text, links::AboveRoot::Leaves);
            if let (links::End::Leaves(how), links::End::Inside(_)) = (&kernel.end, &lexical) {
                let via = match &how.through {
                    Some(l) => {
                        let target = match model.0.get(l) {
                            Some(Held::Link(t)) => escape(t),
                            _ => String::new(),
                        };
                        format!("through `{} -> {target}`", show(l))
                    }
                    None => "by a `..` after a link".to_string(),
                };
                let outside = view_root.and_then(|r| in_view(&model, r, &text, links::Follow::All));
                each(Under {
                    index,
                    parent,
                    via,
                    outside,
                });
            }
        }
        model.apply(m);
    }
}

/// The decoy directories the fuzzer plants before a step in its view, so that a write
/// through a link leaving the root can be seen: where each member [`traversals`] would
/// consider has its parent in the view (jail-relative paths, no leading `/`, the view's
/// `/` itself left out), in listing order, each once. `root` is the root's path in the
/// view without its leading `/` (`home/user/ws/root`).
///
/// None at or under a place where a member of the archive itself lands outside the root
/// in the view (see `landings`): a directory planted there would take that member's write
/// (a file's `EISDIR`, a directory's `EEXIST`) and hide an escape that `containment`
/// sees without it. Each distinct path is looked at once (a set, not a list: an archive
/// may aim thousands of members outside).
pub fn decoy_dirs(prior: Option<&Tree>, members: &[Member], root: &[u8]) -> Vec<Vec<u8>> {
    let root = comps(root);
    let lands = landings(prior, members, &root);
    // At or under a landing: the path itself, or a prefix of it ending before a `/`.
    let taken = |p: &[u8]| {
        lands.contains(p)
            || p.iter()
                .enumerate()
                .any(|(i, &b)| b == b'/' && lands.contains(&p[..i]))
    };
    let mut seen = HashSet::new();
    let mut out: Vec<Vec<u8>> = Vec::new();
    under_links(prior, members, Some(&root), |u| {
        let Some(p) = u.outside.filter(|p| !p.is_empty()) else {
            return;
        };
        let joined = p.join(&b'/');
        if seen.insert(joined.clone()) && !taken(&joined) {
            out.push(joined);
        }
    });
    out
}

/// Where the members of `members` (over `prior`, in listing order; the kinds
/// [`under_links`] counts) land outside the root `root` in the fuzzer's view, as paths
/// from the view's `/` (no leading `/`), each once: the member's name, and the readings
/// [`written_inside`] grants an extractor (the name folded as text, as `path.join` does;
/// what follows its last `..`), each resolved as the kernel would. Every link on the way
/// is followed, and for a file the one its name ends in too (`open(O_CREAT)` writes
/// through it, where `mkdir`, `symlink` and `link` do not).
fn landings(prior: Option<&Tree>, members: &[Member], root: &[Vec<u8>]) -> HashSet<Vec<u8>> {
    let mut model = Model::of(prior);
    let mut out = HashSet::new();
    for m in members {
        let written = matches!(
            m.kind,
            MemberKind::File | MemberKind::Dir | MemberKind::Symlink | MemberKind::Hardlink
        );
        if written {
            let follow = match m.kind {
                MemberKind::File => links::Follow::All,
                _ => links::Follow::NotLast,
            };
            let c = comps(&m.name);
            let mut texts = Vec::new();
            if c.last().is_some_and(|l| l != b"..") {
                texts.push(m.name.clone());
            }
            let folded = links::lexical(&[] as &[&[u8]], &m.name, links::AboveRoot::Stays);
            if let links::End::Inside(p) = folded {
                texts.push(p.join(&b'/'));
            }
            if let Some(last) = c.iter().rposition(|x| x == b"..") {
                texts.push(c[last + 1..].join(&b'/'));
            }
            for t in texts.iter().filter(|t| !t.is_empty()) {
                out.extend(in_view(&model, root, t, follow).map(|p| p.join(&b'/')));
            }
        }
        model.apply(m);
    }
    out
}

/// In a view: the jail-relative path where `m` lands through its parent `outside`
/// (components from the view's `/`) when the step wrote there (new there, or changed);
/// `None` when it did not, or when its last component is not a plain name.
fn written_outside(v: &InView<'_>, outside: &[Vec<u8>], m: &Member) -> Option<Vec<u8>> {
    let last = comps(&m.name).pop().filter(|c| c != b"..")?;
    let mut at = outside.join(&b'/');
    if !at.is_empty() {
        at.push(b'/');
    }
    at.extend_from_slice(&last);
    let now = v.after.0.get(&at)?;
    (v.before.0.get(&at) != Some(now)).then_some(at)
}

/// One line per file, directory, symlink or hardlink member of `members` (in listing order,
/// over `prior`; special files, which every profile drops, are not counted) whose parent
/// resolves outside the root through a link at its turn while it stays inside read
/// lexically, and which `after` (the final tree) does not show written inside. See the
/// module docs.
pub fn traversals(prior: Option<&Tree>, members: &[Member], after: &Tree) -> Vec<String> {
    judged(prior, members, after, None)
}

/// [`traversals`], in the fuzzer's view when `view` is given: there a member counts only
/// when the step wrote at its place outside (its parent as resolved in the view, and its
/// name), the decoy directories planted before the step making that place exist.
fn judged(
    prior: Option<&Tree>,
    members: &[Member],
    after: &Tree,
    view: Option<&InView<'_>>,
) -> Vec<String> {
    let root = view.map(|v| comps(v.root));
    let mut out = Vec::new();
    under_links(prior, members, root.as_deref(), |u| {
        let m = &members[u.index];
        if written_inside(after, m) {
            return;
        }
        let head = format!(
            "member {} `{}` ({:?}): its parent `{}` leaves the root {} at that point of the \
             listing",
            u.index + 1,
            escape(&m.name),
            m.kind,
            show(&u.parent),
            u.via,
        );
        match view {
            // In a view: only a write seen at the member's place outside (a link that
            // comes back into the root, a loop, a place that cannot be written: none).
            Some(v) => {
                if let Some(at) = u.outside.as_deref().and_then(|o| written_outside(v, o, m)) {
                    out.push(format!(
                        "{head}, and the step wrote outside at `/{}`",
                        escape(&at)
                    ));
                }
            }
            None => out.push(format!(
                "{head}, and the final tree has no such member inside"
            )),
        }
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::bytes::{RawBytes, RelPath};
    use crate::model::tree::Node;

    fn dir(n: &str) -> Member {
        Member::new(n.as_bytes(), MemberKind::Dir, None, 0)
    }
    fn file(n: &str) -> Member {
        Member::new(n.as_bytes(), MemberKind::File, None, 1)
    }
    fn link(n: &str, t: &str) -> Member {
        Member::new(n.as_bytes(), MemberKind::Symlink, Some(t.as_bytes()), 0)
    }

    /// A tree of `(path, None)` directories, `(path, Some(""))` files and symlinks.
    fn tree(entries: &[(&str, Option<&str>)]) -> Tree {
        let mut t = Tree::default();
        for (p, target) in entries {
            let kind = match target {
                None => NodeKind::Dir,
                Some("") => NodeKind::File {
                    size: 0,
                    sha256: String::new(),
                },
                Some(t) => NodeKind::Symlink {
                    target: RawBytes(t.as_bytes().to_vec()),
                },
            };
            t.nodes
                .insert(RelPath::new(*p).expect("path"), Node { kind, mode: 0 });
        }
        t
    }

    /// The published cache-poisoning archive of node-tar 6.1.0: `d/`, `d -> ../out`,
    /// `d/pwned`, with `../out` absent (the final tree holds the link and no `d/pwned`).
    #[test]
    fn a_member_under_a_link_leaving_the_root_is_flagged_without_its_target() {
        let members = [dir("d"), link("d", "../out"), file("d/pwned")];
        let after = tree(&[("d", Some("../out"))]);
        let found = traversals(None, &members, &after);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].contains("`d/pwned`"), "{found:?}");
        assert!(found[0].contains("`d -> ../out`"), "{found:?}");
    }

    /// The fixed shape: the link replaced by a directory holding the member; a link that
    /// stays inside; a plain `..` name; members before the swap: none is flagged.
    #[test]
    fn members_inside_are_not_flagged() {
        let members = [dir("d"), link("d", "../out"), file("d/pwned")];
        let after = tree(&[("d", None), ("d/pwned", Some(""))]);
        assert!(traversals(None, &members, &after).is_empty());
        let members = [dir("in"), link("s", "in"), file("s/x")];
        let after = tree(&[("in", None), ("in/x", Some("")), ("s", Some("in"))]);
        assert!(traversals(None, &members, &after).is_empty());
        let members = [file("../out/x")];
        assert!(traversals(None, &members, &tree(&[])).is_empty());
        let members = [dir("d"), file("d/x"), link("d", "../out")];
        let after = tree(&[("d", Some("../out"))]);
        assert!(traversals(None, &members, &after).is_empty());
        // A FIFO under the prior's link, dropped by policy: not written, rightly.
        let prior = tree(&[("l", Some("../decoy"))]);
        let fifo = Member::new(b"l/n", MemberKind::Fifo, None, 0);
        assert!(traversals(Some(&prior), &[fifo], &tree(&[])).is_empty());
        // BusyBox and GNU tar strip `s/../` and write `tmp/f` inside.
        let members = [link("s", "../../out"), file("s/../tmp/f")];
        let after = tree(&[("s", Some("../../out")), ("tmp", None), ("tmp/f", Some(""))]);
        assert!(traversals(None, &members, &after).is_empty());
        let after = tree(&[("s", Some("../../out"))]);
        assert_eq!(
            traversals(None, &members, &after).len(),
            1,
            "not written inside"
        );
    }

    /// Lexically inside, outside once followed: `y -> .`, then `x -> y/..`, then `x/f`
    /// (tar-fs CVE-2025-48387); `d -> .` and `d/../f`; the prior's own `l -> ../decoy`;
    /// an absolute link.
    #[test]
    fn links_through_links_and_the_prior_are_followed() {
        let members = [link("y", "."), link("x", "y/.."), file("x/f")];
        let after = tree(&[("y", Some(".")), ("x", Some("y/.."))]);
        assert_eq!(traversals(None, &members, &after).len(), 1);
        let members = [link("d", "."), file("d/../e/f")];
        let after = tree(&[("d", Some("."))]);
        let found = traversals(None, &members, &after);
        assert_eq!(found.len(), 1, "{found:?}");
        let prior = tree(&[("l", Some("../decoy"))]);
        let found = traversals(Some(&prior), &[file("l/x")], &prior);
        assert_eq!(found.len(), 1, "{found:?}");
        let members = [link("e", "/etc"), file("e/passwd")];
        let after = tree(&[("e", Some("/etc"))]);
        assert_eq!(traversals(None, &members, &after).len(), 1);
    }

    /// The view's root as the decoy tests pass it.
    const VIEW_ROOT_BYTES: &[u8] = b"home/user/ws/root";

    /// [`decoy_dirs`] of `members` (no prior) in the view, escaped.
    fn dirs(members: &[Member]) -> Vec<String> {
        decoy_dirs(None, members, VIEW_ROOT_BYTES)
            .iter()
            .map(|d| escape(d))
            .collect()
    }

    /// Where the fuzzer plants decoy directories in its view (root `home/user/ws/root`):
    /// the parent of each member under a link leaving the root, resolved in the view; not
    /// for a link that comes back into the root, nor the view's `/` itself.
    #[test]
    fn decoy_dirs_are_where_members_under_links_land_in_the_view() {
        let root = VIEW_ROOT_BYTES;
        let poison = [dir("d"), link("d", "../absent"), file("d/pwned")];
        assert_eq!(dirs(&poison), ["home/user/ws/absent"]);
        let tar_fs = [link("y", "."), link("x", "y/.."), file("x/absent/pwned")];
        assert_eq!(dirs(&tar_fs), ["home/user/ws/absent"]);
        let abs = [link("e", "/etc/deep"), file("e/passwd"), file("e/x/y")];
        assert_eq!(dirs(&abs), ["etc/deep", "etc/deep/x"]);
        let up = [
            link("s", "../../../../../../tmp"),
            file("s/../home/user/decoy"),
        ];
        assert_eq!(dirs(&up), ["home/user"]);
        let back = [dir("in"), link("d", "../root/in"), file("d/x")];
        assert!(dirs(&back).is_empty(), "back inside the root");
        let top = [link("s", "/"), file("s/decoy")];
        assert!(dirs(&top).is_empty(), "the view's `/` exists");
        let prior = tree(&[("l", Some("../decoy/sub"))]);
        assert_eq!(
            decoy_dirs(Some(&prior), &[file("l/x")], root),
            [b"home/user/ws/decoy/sub".to_vec()]
        );
    }

    /// No decoy directory where a member of the archive itself lands outside the root in
    /// the view, nor under such a place: planted there it would take that member's write
    /// (`e/x` a file: `EISDIR`, and a strict extractor stops before anything outside
    /// changed), hiding the escape that `containment` sees without it. A file lands through
    /// the link its name ends in; a directory or link member does not (`mkdir`, `symlink`).
    #[test]
    fn no_decoy_dir_is_planted_where_a_member_lands() {
        let masked = [link("e", "../out"), file("e/x"), file("e/x/y")];
        assert_eq!(dirs(&masked), ["home/user/ws/out"]);
        let deeper = [link("e", "../out"), file("e/x"), file("e/x/y/z")];
        assert_eq!(dirs(&deeper), ["home/user/ws/out"]);
        let a_dir = [link("e", "../out"), dir("e/x"), file("e/x/y")];
        assert_eq!(dirs(&a_dir), ["home/user/ws/out"]);
        // `e/x/q/..` is written at `e/x` by an extractor that folds names as text.
        let folded = [link("e", "../out"), file("e/x/q/..")];
        assert!(dirs(&folded).is_empty(), "{:?}", dirs(&folded));
        let through_last = [link("m", "../out/x"), file("m/y"), file("m")];
        assert!(dirs(&through_last).is_empty(), "{:?}", dirs(&through_last));
        // A directory member named as the link itself is made beside it, not through it.
        let dir_over_link = [link("e", "../absent"), dir("e"), file("e/pwned")];
        assert_eq!(dirs(&dir_over_link), ["home/user/ws/absent"]);
    }

    /// Planting is computed before every execution, whatever the extractor answers: an
    /// archive aiming many members at distinct places outside costs time linear in them,
    /// not quadratic (each distinct place is looked at once).
    #[test]
    fn decoy_dirs_are_linear_in_the_members() {
        let timed = |n: usize| {
            let mut members = vec![link("e", "../out")];
            members.extend((0..n).map(|i| file(&format!("e/p{i}/f"))));
            let began = std::time::Instant::now();
            let dirs = decoy_dirs(None, &members, b"home/user/ws/root");
            assert_eq!(dirs.len(), n);
            began.elapsed()
        };
        let (small, large) = (timed(2_500), timed(40_000));
        // Sixteen times the members: about 16 times the time if linear, 256 if quadratic
        // (a list searched for each new place).
        assert!(
            large < small * 48,
            "{small:?} for 2,500, {large:?} for 40,000"
        );
    }

    /// Planting's memory does not grow with the members times their depth: a thousand
    /// members of 2,000 components each under a link leaving the root (a few MB of tar,
    /// far less compressed) once kept every parent, twice, as components (225 MB); now
    /// each is handed on as it is found. Measured as the peak resident size of a child
    /// process running this test alone (the test binary again, `--exact`), since other
    /// tests of this process would raise its peak.
    #[test]
    fn decoy_dirs_keep_no_per_member_paths() {
        const CHILD: &str = "SNAPCONF_TEST_MEMORY_CHILD";
        let name = "checks::traversal::tests::decoy_dirs_keep_no_per_member_paths";
        if std::env::var_os(CHILD).is_none() {
            let exe = std::env::current_exe().expect("the test binary");
            let out = std::process::Command::new(exe)
                .args([name, "--exact", "--test-threads=1", "--nocapture"])
                .env(CHILD, "1")
                .output()
                .expect("the test binary runs");
            let text = String::from_utf8_lossy(&out.stdout).into_owned()
                + &String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "{text}");
            assert!(text.contains("1 passed"), "the child ran no test: {text}");
            return;
        }
        let peak = || -> u64 {
            let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
            status
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.split_whitespace().next()?.parse().ok())
                .unwrap_or(0)
        };
        let deep = format!("e/{}f", "a/".repeat(2_000));
        let mut members = vec![link("e", "../out")];
        members.extend((0..1_000).map(|_| file(&deep)));
        let before = peak();
        let dirs = decoy_dirs(None, &members, b"home/user/ws/root");
        let grown = peak().saturating_sub(before);
        assert_eq!(dirs.len(), 1);
        assert!(grown < 100 << 10, "peak grew by {grown} kB");
    }

    /// In the view a member under a link leaving the root counts only when the step wrote
    /// at its place outside (new there, or changed); out of a view the claimed write counts.
    #[test]
    fn in_a_view_only_an_observed_write_outside_counts() {
        use crate::jail::{Snapshot, StatKey};
        let key = |kind: &'static str, size: u64| StatKey {
            kind,
            mode: 0o755,
            size,
            ino: 1,
            nlink: 1,
            uid: 0,
            gid: 0,
            mtime: (0, 0),
            ctime: (0, 0),
            target: None,
            sha256: None,
        };
        let snap = |entries: &[(&str, &'static str, u64)]| {
            Snapshot(
                entries
                    .iter()
                    .map(|(p, k, n)| (p.as_bytes().to_vec(), key(k, *n)))
                    .collect(),
            )
        };
        let members = [dir("d"), link("d", "../absent"), file("d/pwned")];
        let after_root = tree(&[("d", Some("../absent"))]);
        let planted = snap(&[("home/user/ws/absent", "dir", 0)]);
        let written = snap(&[
            ("home/user/ws/absent", "dir", 0),
            ("home/user/ws/absent/pwned", "file", 6),
        ]);
        let view = |before, after| InView {
            root: b"home/user/ws/root",
            before,
            after,
        };
        let found = judged(None, &members, &after_root, Some(&view(&planted, &written)));
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].contains("wrote outside at `/home/user/ws/absent/pwned`"),
            "{found:?}"
        );
        assert!(found[0].contains("(File)") && found[0].contains("through `d -> ../absent`"));
        // Skipped (node-tar 7): nothing written there.
        assert!(judged(None, &members, &after_root, Some(&view(&planted, &planted))).is_empty());
        // A decoy file there, unchanged, then changed.
        let decoy = snap(&[
            ("home/user/ws/absent", "dir", 0),
            ("home/user/ws/absent/pwned", "file", 6),
        ]);
        assert!(judged(None, &members, &after_root, Some(&view(&decoy, &decoy))).is_empty());
        let grown = snap(&[
            ("home/user/ws/absent", "dir", 0),
            ("home/user/ws/absent/pwned", "file", 12),
        ]);
        assert_eq!(
            judged(None, &members, &after_root, Some(&view(&decoy, &grown))).len(),
            1
        );
        // Out of a view: the claimed write.
        assert_eq!(traversals(None, &members, &after_root).len(), 1);
    }

    /// Judged through the registry: only an accepted hydration with a listing counts.
    #[test]
    fn the_check_needs_an_accepted_hydration() {
        let dir_ = tempfile::tempdir().expect("tempdir");
        let root = dir_.path().join("root");
        std::fs::create_dir(&root).expect("mkdir");
        std::os::unix::fs::symlink("../out", root.join("d")).expect("symlink");
        let judged = crate::checks::Judged {
            unsafe_reason: Some("through-symlink".into()),
            privileged_mode: false,
            verdict: "refuse".into(),
            members: vec![dir("d"), link("d", "../out"), file("d/pwned")],
        };
        let ok = Outcome::Success;
        let mut ev = Evidence::hydration("hydration", &ok, &root);
        ev.judged = Some(&judged);
        let v = Check::TRAVERSAL.violations(&ev).expect("judged");
        assert_eq!(v.len(), 1, "{v:?}");
        let refused = Outcome::Refused {
            message: "no".into(),
        };
        let mut ev = Evidence::hydration("hydration", &refused, &root);
        ev.judged = Some(&judged);
        assert!(Check::TRAVERSAL.violations(&ev).expect("judged").is_empty());
    }
}
