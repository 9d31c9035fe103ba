//! The one link walker: a path resolved component by component over a tree model (a
//! spec's index, an observed [`Tree`](crate::model::tree::Tree), the fuzzer's view),
//! following its symlinks the way the kernel would, or read lexically.
//!
//! The caller gives the tree ([`Nodes`]: what a path names, and where an absolute target
//! starts), the directory the walk starts in, the path and its [`Rules`]; [`walk`] says
//! where it [`End`]s: inside the root at a path, out of it (through which link, at which
//! component), in a loop, or at a component that names nothing or no directory.
//!
//! Shapes (from the root's top, `d` a directory, `f` a file):
//!
//! | tree | from | path | rules | end |
//! | --- | --- | --- | --- | --- |
//! | `d/` | `[]` | `d/../d` | any | `Inside([d])` |
//! | — | `[]` | `..` | `..` leaves | `Leaves` by a climb at component 0 |
//! | — | `[]` | `..` | `..` stays | `Inside([])` (as `..` at `/`) |
//! | `a -> .`, `b -> a/..` | `[]` | `b` | links followed | `Leaves` through `b` |
//! | `l0 -> l1`, …, `l40 -> f` | `[]` | `l0` | links followed | [`End::Loop`] (41 links) |
//! | `d/` | `[]` | `d/x/y` | dead ends stop | `Missing([d, x])` |
//! | `d/` | `[]` | `d/x/y` | dead ends pass | `Inside([d, x, y])` |
//! | `f` | `[]` | `f/g` | dead ends stop | `NotDir([f])` |
//!
//! The hop limit is [`MAX_HOPS`] for every walk of the harness.

/// Symlinks one resolution may follow; the next one makes it a loop (`ELOOP`). Linux
/// allows 40 in all per path lookup (`MAXSYMLINKS` in `include/linux/namei.h`, checked
/// against the lookup's total link count in `fs/namei.c`; path_resolution(7)); POSIX only
/// guarantees `_POSIX_SYMLOOP_MAX`, 8 (`<limits.h>`). The harness models Linux, where its
/// extractors run, so a chain of 40 links resolves and one of 41 is a loop.
pub const MAX_HOPS: usize = 40;

/// What a tree holds at a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Seen<'a> {
    /// Nothing.
    Missing,
    /// A directory.
    Dir,
    /// A symlink with this target.
    Symlink(&'a [u8]),
    /// Anything else (a file, a FIFO, a device): nothing can be below it.
    Other,
}

/// Where a text (the walked path or a symlink's target) is read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Anchor<'t> {
    /// From where the walk stands (the directory holding the link): these bytes.
    Here(&'t [u8]),
    /// From the root of the walk: these bytes (a leading `/` is an empty component).
    Root(&'t [u8]),
    /// Absolute, and not under the root of the walk: reading it leaves the root.
    Away,
}

/// A tree model the walker can look into.
pub trait Nodes {
    /// What `path` (components from the root; never empty, never `.` or `..` in it) names.
    fn node(&self, path: &[Vec<u8>]) -> Seen<'_>;

    /// Where `text` starts. The default: a text starting with `/` is [`Anchor::Away`] (the
    /// tree knows nothing above its root), any other [`Anchor::Here`].
    fn anchor<'t>(&self, text: &'t [u8]) -> Anchor<'t> {
        if text.starts_with(b"/") {
            Anchor::Away
        } else {
            Anchor::Here(text)
        }
    }
}

/// Which symlinks a walk follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Follow {
    /// None: every component is a name and the tree is never asked what it names (a
    /// lexical walk; see [`lexical`]).
    Lexical,
    /// Every symlink met, the one the last component names too (`stat`, `open`).
    All,
    /// Every symlink met but one the walked path's last component names (`lstat`,
    /// `O_NOFOLLOW`, the name a link or a file is made at).
    NotLast,
}

/// What `..` does at the root.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AboveRoot {
    /// The walk leaves the root ([`End::Leaves`]).
    Leaves,
    /// The walk stays at the root, as `..` does at `/`.
    Stays,
}

/// What a component naming nothing, or a non-directory with components after it, does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeadEnd {
    /// The walk ends there ([`End::Missing`], [`End::NotDir`]), as the kernel's `ENOENT`
    /// and `ENOTDIR`.
    Stops,
    /// The component is taken as a name and the walk goes on (as `realpath -m` does): what
    /// a dangling link would reach once the missing parts are made.
    PassesThrough,
}

/// The caller's rules for one walk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rules {
    /// Which symlinks are followed.
    pub follow: Follow,
    /// `..` at the root.
    pub above_root: AboveRoot,
    /// Missing components and non-directories.
    pub dead_end: DeadEnd,
}

/// Why a walk left the root.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// A `..` at the root (under [`AboveRoot::Leaves`]).
    Climb,
    /// An absolute text the tree places outside its root ([`Anchor::Away`]).
    Absolute,
}

/// Where a walk left the root.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Leaving {
    /// The symlink (its path) whose target took the walk out; `None` if the walked path
    /// itself did.
    pub through: Option<Vec<Vec<u8>>>,
    /// The component that did, counted from 0 among the `/`-separated components of that
    /// text as its [`Anchor`] gave it (0 for [`Exit::Absolute`]).
    pub component: usize,
    /// How.
    pub exit: Exit,
}

/// Where a walk ends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum End {
    /// Inside the root at this path (components; empty for the root itself). What the
    /// last component names is the caller's to ask: under [`DeadEnd::PassesThrough`] it,
    /// or one before it, may name nothing; under [`Follow::NotLast`] it may be a symlink.
    Inside(Vec<Vec<u8>>),
    /// Out of the root.
    Leaves(Leaving),
    /// More than [`MAX_HOPS`] symlinks followed.
    Loop,
    /// Under [`DeadEnd::Stops`]: this path names nothing (its parent is a directory).
    Missing(Vec<Vec<u8>>),
    /// Under [`DeadEnd::Stops`]: this path names a non-directory and a component other than
    /// an empty one or `.` follows it. (A trailing `/` or `/.` after a file is not taken for
    /// a component, where the kernel would answer `ENOTDIR`: the expected-tree index has
    /// always read `f/` as `f`.)
    NotDir(Vec<Vec<u8>>),
}

/// A finished walk: where it ended and how many symlinks it followed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Walk {
    /// Where it ended.
    pub end: End,
    /// Symlinks followed (at most [`MAX_HOPS`] + 1, the one that made it a loop).
    pub hops: usize,
}

/// One component waiting to be read: its bytes, the text it came from (an index into the
/// walk's texts; 0 is the walked path) and its place in that text.
struct Step {
    comp: Vec<u8>,
    text: usize,
    index: usize,
}

/// True if a component other than an empty one or `.` is still to be read.
fn more(pending: &[Step]) -> bool {
    pending.iter().any(|s| !s.comp.is_empty() && s.comp != b".")
}

/// Queue `text`'s components (read from where `at` stands, or from the root) in front of
/// what is pending; `Err` if it leaves the root as an absolute text.
fn read<N: Nodes + ?Sized>(
    nodes: &N,
    text: &[u8],
    id: usize,
    at: &mut Vec<Vec<u8>>,
    pending: &mut Vec<Step>,
) -> Result<(), Exit> {
    let rest = match nodes.anchor(text) {
        Anchor::Here(rest) => rest,
        Anchor::Root(rest) => {
            at.clear();
            rest
        }
        Anchor::Away => return Err(Exit::Absolute),
    };
    let comps: Vec<&[u8]> = rest.split(|&b| b == b'/').collect();
    pending.extend(comps.iter().enumerate().rev().map(|(index, c)| Step {
        comp: c.to_vec(),
        text: id,
        index,
    }));
    Ok(())
}

/// Resolve `path` from the directory `from` (components from the root; the walker takes it
/// for a directory and does not look it up) over `nodes` under `rules`.
///
/// Components are read left to right: empty ones and `.` are skipped; `..` climbs (what
/// it does at the root is [`Rules::above_root`]); a name descends, and unless the walk is
/// [lexical](Follow::Lexical) the tree is asked what it names. A symlink is followed (but
/// see [`Follow::NotLast`]): it counts a hop, its target is read from its directory (or
/// where its [`Anchor`] says) and then the rest of the path, so a `..` after a link climbs
/// from where the link led, not from the link's name. A missing component or a
/// non-directory is [`Rules::dead_end`]'s.
///
/// Errors are ends, not `Err`: [`End::Leaves`], [`End::Loop`] (the [`MAX_HOPS`] + 1st
/// link), [`End::Missing`], [`End::NotDir`].
pub fn walk<N, C>(nodes: &N, rules: Rules, from: &[C], path: &[u8]) -> Walk
where
    N: Nodes + ?Sized,
    C: AsRef<[u8]>,
{
    let mut at: Vec<Vec<u8>> = from.iter().map(|c| c.as_ref().to_vec()).collect();
    // The links whose targets were read, by text id - 1 (id 0 is `path`).
    let mut links: Vec<Vec<Vec<u8>>> = Vec::new();
    let mut pending: Vec<Step> = Vec::new();
    let mut hops = 0;
    let leaving = |links: &[Vec<Vec<u8>>], text: usize, component: usize, exit| {
        End::Leaves(Leaving {
            through: text.checked_sub(1).and_then(|i| links.get(i)).cloned(),
            component,
            exit,
        })
    };
    let done = |end, hops| Walk { end, hops };
    if let Err(exit) = read(nodes, path, 0, &mut at, &mut pending) {
        return done(leaving(&links, 0, 0, exit), hops);
    }
    while let Some(step) = pending.pop() {
        match step.comp.as_slice() {
            b"" | b"." => continue,
            b".." => {
                if at.pop().is_none() && rules.above_root == AboveRoot::Leaves {
                    return done(leaving(&links, step.text, step.index, Exit::Climb), hops);
                }
                continue;
            }
            _ => at.push(step.comp),
        }
        if rules.follow == Follow::Lexical {
            continue;
        }
        match nodes.node(&at) {
            Seen::Dir => {}
            Seen::Symlink(target) => {
                if rules.follow == Follow::NotLast && !more(&pending) {
                    continue;
                }
                hops += 1;
                if hops > MAX_HOPS {
                    return done(End::Loop, hops);
                }
                links.push(at.clone());
                at.pop();
                if let Err(exit) = read(nodes, target, links.len(), &mut at, &mut pending) {
                    return done(leaving(&links, links.len(), 0, exit), hops);
                }
            }
            Seen::Missing => {
                if rules.dead_end == DeadEnd::Stops {
                    return done(End::Missing(at), hops);
                }
            }
            Seen::Other => {
                if rules.dead_end == DeadEnd::Stops && more(&pending) {
                    return done(End::NotDir(at), hops);
                }
            }
        }
    }
    done(End::Inside(at), hops)
}

/// No tree: every text is read from where the walk stands, a leading `/` as an empty
/// component (callers judge absolute texts before they walk lexically).
struct Names;

impl Nodes for Names {
    fn node(&self, _: &[Vec<u8>]) -> Seen<'_> {
        Seen::Missing
    }

    fn anchor<'t>(&self, text: &'t [u8]) -> Anchor<'t> {
        Anchor::Here(text)
    }
}

/// `path` read from `from` without a tree: no link followed, every component a name, `..`
/// at the root per `above_root`. Ends [`End::Inside`] or [`End::Leaves`] (by
/// [`Exit::Climb`]) only; a leading `/` is read as an empty component.
pub fn lexical<C: AsRef<[u8]>>(from: &[C], path: &[u8], above_root: AboveRoot) -> End {
    let rules = Rules {
        follow: Follow::Lexical,
        above_root,
        dead_end: DeadEnd::PassesThrough,
    };
    walk(&Names, rules, from, path).end
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// A tree given as `(path, target)`: `None` a directory, `Some("")` a file, else a
    /// symlink; absolute targets `/root/...` are under the root, other absolute ones away.
    struct T(BTreeMap<Vec<Vec<u8>>, Option<Vec<u8>>>);

    fn comps(s: &str) -> Vec<Vec<u8>> {
        s.split('/')
            .filter(|c| !c.is_empty())
            .map(|c| c.as_bytes().to_vec())
            .collect()
    }

    fn t(entries: &[(&str, Option<&str>)]) -> T {
        T(entries
            .iter()
            .map(|(p, target)| (comps(p), target.map(|t| t.as_bytes().to_vec())))
            .collect())
    }

    impl Nodes for T {
        fn node(&self, path: &[Vec<u8>]) -> Seen<'_> {
            match self.0.get(path) {
                None => Seen::Missing,
                Some(None) => Seen::Dir,
                Some(Some(t)) if t.is_empty() => Seen::Other,
                Some(Some(t)) => Seen::Symlink(t),
            }
        }

        fn anchor<'t>(&self, text: &'t [u8]) -> Anchor<'t> {
            match text.strip_prefix(b"/root") {
                Some(rest) if rest.is_empty() || rest.starts_with(b"/") => Anchor::Root(rest),
                _ if text.starts_with(b"/") => Anchor::Away,
                _ => Anchor::Here(text),
            }
        }
    }

    const KERNEL: Rules = Rules {
        follow: Follow::All,
        above_root: AboveRoot::Leaves,
        dead_end: DeadEnd::Stops,
    };

    fn end(tree: &T, rules: Rules, from: &str, path: &str) -> End {
        walk(tree, rules, &comps(from), path.as_bytes()).end
    }

    fn climb(through: Option<&str>, component: usize) -> End {
        End::Leaves(Leaving {
            through: through.map(comps),
            component,
            exit: Exit::Climb,
        })
    }

    /// `a -> .` stands for the root, so `b -> a/..` climbs above it: the `..` after a link
    /// applies to where the link led, not to its name (lexically, `a/..` is the root).
    #[test]
    fn a_dotdot_after_a_link_to_the_root_leaves_it() {
        let tree = t(&[("a", Some(".")), ("b", Some("a/.."))]);
        assert_eq!(end(&tree, KERNEL, "", "b"), climb(Some("b"), 1));
        assert_eq!(end(&tree, KERNEL, "", "a"), End::Inside(vec![]));
        assert_eq!(
            lexical(&[] as &[&[u8]], b"a/..", AboveRoot::Leaves),
            End::Inside(vec![])
        );
    }

    /// A chain of 40 links resolves; a chain of 41 is a loop, as is a link to itself.
    #[test]
    fn forty_one_links_are_a_loop() {
        let chain = |n: usize| {
            let mut e: Vec<(String, Option<String>)> = (0..n)
                .map(|i| (format!("l{i}"), Some(format!("l{}", i + 1))))
                .collect();
            e.push((format!("l{n}"), Some(String::new())));
            T(e.iter()
                .map(|(p, t)| (comps(p), t.as_ref().map(|t| t.as_bytes().to_vec())))
                .collect())
        };
        let w = walk(&chain(40), KERNEL, &[] as &[&[u8]], b"l0");
        assert_eq!((w.end, w.hops), (End::Inside(comps("l40")), 40));
        let w = walk(&chain(41), KERNEL, &[] as &[&[u8]], b"l0");
        assert_eq!((w.end, w.hops), (End::Loop, MAX_HOPS + 1));
        let tree = t(&[("self", Some("self"))]);
        assert_eq!(end(&tree, KERNEL, "", "self"), End::Loop);
    }

    /// `..` at the root leaves it or stays, as the caller says; from a directory it climbs
    /// once.
    #[test]
    fn dotdot_at_the_root() {
        let tree = t(&[("d", None)]);
        assert_eq!(end(&tree, KERNEL, "", ".."), climb(None, 0));
        assert_eq!(end(&tree, KERNEL, "d", "./../.."), climb(None, 2));
        assert_eq!(end(&tree, KERNEL, "d", ".."), End::Inside(vec![]));
        let stays = Rules {
            above_root: AboveRoot::Stays,
            ..KERNEL
        };
        assert_eq!(end(&tree, stays, "", "../../d"), End::Inside(comps("d")));
        assert_eq!(
            lexical(&[b"d"], b"x/../../../d", AboveRoot::Leaves),
            climb(None, 3),
            "leaves and comes back: still left"
        );
    }

    /// An absolute target restarts at the root when the tree places it under the root, and
    /// leaves otherwise, on the walked path or on a link met on the way.
    #[test]
    fn absolute_targets() {
        let tree = t(&[
            ("d", None),
            ("d/in", Some("/root/d")),
            ("d/out", Some("/etc")),
            ("d/f", Some("")),
        ]);
        assert_eq!(end(&tree, KERNEL, "d", "in/f"), End::Inside(comps("d/f")));
        assert_eq!(
            end(&tree, KERNEL, "d", "/root/d/in"),
            End::Inside(comps("d"))
        );
        let away = End::Leaves(Leaving {
            through: Some(comps("d/out")),
            component: 0,
            exit: Exit::Absolute,
        });
        assert_eq!(end(&tree, KERNEL, "", "d/out/passwd"), away);
        let walked = End::Leaves(Leaving {
            through: None,
            component: 0,
            exit: Exit::Absolute,
        });
        assert_eq!(end(&tree, KERNEL, "d", "/etc"), walked);
        // A link the walk does not follow is not read.
        let nofollow = Rules {
            follow: Follow::NotLast,
            ..KERNEL
        };
        assert_eq!(
            end(&tree, nofollow, "", "d/out/."),
            End::Inside(comps("d/out"))
        );
        assert_eq!(end(&tree, nofollow, "", "d/out/.."), away);
    }

    /// A missing middle component stops the walk, or is passed through as a name (links
    /// after it still followed); so is a file with components after it, but not a trailing
    /// `/` or `.` after a file.
    #[test]
    fn missing_middle_components() {
        let tree = t(&[("d", None), ("d/up", Some("..")), ("f", Some(""))]);
        assert_eq!(end(&tree, KERNEL, "", "d/x/y"), End::Missing(comps("d/x")));
        assert_eq!(
            end(&tree, KERNEL, "", "d/x/../up"),
            End::Missing(comps("d/x"))
        );
        assert_eq!(end(&tree, KERNEL, "", "f/g"), End::NotDir(comps("f")));
        assert_eq!(end(&tree, KERNEL, "", "f/./"), End::Inside(comps("f")));
        let passes = Rules {
            dead_end: DeadEnd::PassesThrough,
            ..KERNEL
        };
        assert_eq!(end(&tree, passes, "", "d/x/y"), End::Inside(comps("d/x/y")));
        assert_eq!(
            end(&tree, passes, "", "x/../d/up/.."),
            climb(None, 4),
            "through the missing `x`, then `d/up -> ..`"
        );
        assert_eq!(end(&tree, passes, "", "f/../d"), End::Inside(comps("d")));
    }
}
