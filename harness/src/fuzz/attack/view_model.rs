//! A naive extractor over the fuzzer's view, for the tests: it takes every member name and
//! link target as the kernel resolves them (links followed, `..` climbing from where a link
//! led), with no containment at all, and records where each member lands and what each
//! link aims at. An attack whose `..` count is off by one lands somewhere the view has no
//! decoy, which the tests see.
//!
//! It follows PAX global records as Python `tarfile` does (every later member takes the
//! global `path` or `linkpath`), a hardlink to a symlink as the symlink itself (what
//! `link(2)` makes), a write to a hardlinked name as a write to its target, and reads the
//! members hidden in a link's or directory's payload (as bsdtar and Python do).

use super::member::{AttackKind, AttackMember};
use crate::jail::view_layout::{VIEW_DECOYS, VIEW_DIRS, VIEW_ROOT};
use crate::model::bytes::escape;
use crate::model::links;
use std::collections::BTreeMap;

/// A view path as components.
pub(super) type ViewPath = Vec<Vec<u8>>;

/// What the model holds at a path.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Node {
    Dir,
    File,
    Link(Vec<u8>),
    /// A second name of the file at that path.
    Alias(ViewPath),
}

/// One place a member reached: where it was made (`dir`, `write`, `node`, `link`) or what a
/// link aims at (`aim`).
#[derive(Clone, Debug)]
pub(super) struct Touch {
    pub(super) what: &'static str,
    pub(super) path: ViewPath,
}

/// The view: its directories and decoys, the root, and the prior workspace (`a`, `d/f`,
/// `l -> ../decoy`).
pub(super) struct ViewModel {
    nodes: BTreeMap<ViewPath, Node>,
    globals: BTreeMap<&'static str, Vec<u8>>,
}

/// The components of a view path given as text.
pub(super) fn view_path(s: &str) -> ViewPath {
    s.split('/')
        .filter(|c| !c.is_empty())
        .map(|c| c.as_bytes().to_vec())
        .collect()
}

/// The root under test.
pub(super) fn root() -> ViewPath {
    view_path(VIEW_ROOT)
}

/// A view path as text, `/` first.
pub(super) fn show(p: &[Vec<u8>]) -> String {
    let parts: Vec<String> = p.iter().map(|c| escape(c)).collect();
    format!("/{}", parts.join("/"))
}

impl ViewModel {
    pub(super) fn new() -> ViewModel {
        let mut v = ViewModel {
            nodes: BTreeMap::new(),
            globals: BTreeMap::new(),
        };
        for d in VIEW_DIRS {
            v.dirs(&view_path(d));
        }
        for f in VIEW_DECOYS {
            let p = view_path(f);
            v.dirs(&p[..p.len() - 1]);
            v.nodes.insert(p, Node::File);
        }
        let r = root();
        v.dirs(&r);
        let at = |name: &str| [r.clone(), view_path(name)].concat();
        v.nodes.insert(at("a"), Node::File);
        v.nodes.insert(at("d"), Node::Dir);
        v.nodes.insert(at("d/f"), Node::File);
        v.nodes.insert(at("l"), Node::Link(b"../decoy".to_vec()));
        v
    }

    /// `p` and its ancestors as directories.
    fn dirs(&mut self, p: &[Vec<u8>]) {
        for i in 0..=p.len() {
            self.nodes.entry(p[..i].to_vec()).or_insert(Node::Dir);
        }
    }

    /// `path` resolved from `base` as the kernel would ([`links::MAX_HOPS`] link hops at
    /// most: `None` beyond, a loop; `..` at `/` stays there; a missing component is taken
    /// as a name). The last component's link is followed if `follow_last`. `hops` is added
    /// the links followed.
    pub(super) fn resolve(
        &self,
        base: &[Vec<u8>],
        path: &[u8],
        follow_last: bool,
        hops: &mut usize,
    ) -> Option<ViewPath> {
        let rules = links::Rules {
            follow: if follow_last {
                links::Follow::All
            } else {
                links::Follow::NotLast
            },
            above_root: links::AboveRoot::Stays,
            dead_end: links::DeadEnd::PassesThrough,
        };
        let walk = links::walk(self, rules, base, path);
        *hops += walk.hops;
        match walk.end {
            links::End::Inside(p) => Some(p),
            _ => None,
        }
    }

    /// Places a member may not replace: `/` down to the root itself.
    fn protected(p: &[Vec<u8>]) -> bool {
        root().starts_with(p)
    }

    fn put(&mut self, p: &[Vec<u8>], node: Node) {
        if !ViewModel::protected(p) {
            self.nodes.insert(p.to_vec(), node);
        }
    }

    /// Extract `m` naively; returns where it landed and what it aims at (`None` parts of a
    /// resolution, link loops, are left out).
    pub(super) fn apply(&mut self, m: &AttackMember) -> Vec<Touch> {
        for (k, v) in &m.global {
            self.globals.insert(k, v.clone());
        }
        let name = self.globals.get("path").unwrap_or(&m.name).clone();
        let link = match m.kind {
            AttackKind::Symlink | AttackKind::Hardlink => {
                self.globals.get("linkpath").unwrap_or(&m.link).clone()
            }
            _ => m.link.clone(),
        };
        let r = root();
        let mut out = Vec::new();
        let mut touch = |what, path: &ViewPath| {
            out.push(Touch {
                what,
                path: path.clone(),
            })
        };
        let follow_last = matches!(m.kind, AttackKind::File | AttackKind::Dir);
        let Some(mut p) = self.resolve(&r, &name, follow_last, &mut 0) else {
            return out;
        };
        match m.kind {
            AttackKind::Dir => {
                touch("dir", &p);
                if !self.nodes.contains_key(&p) {
                    self.put(&p, Node::Dir);
                }
            }
            AttackKind::File => {
                if let Some(Node::Alias(t)) = self.nodes.get(&p) {
                    p = t.clone();
                }
                touch("write", &p);
                if self.nodes.get(&p) != Some(&Node::Dir) {
                    self.put(&p, Node::File);
                }
            }
            AttackKind::Fifo | AttackKind::CharDevice | AttackKind::BlockDevice => {
                touch("node", &p);
                self.put(&p, Node::File);
            }
            AttackKind::Symlink => {
                touch("link", &p);
                self.put(&p, Node::Link(link.clone()));
                let dir = &p[..p.len().saturating_sub(1)];
                if let Some(aim) = self.resolve(dir, &link, true, &mut 0) {
                    touch("aim", &aim);
                }
            }
            AttackKind::Hardlink => {
                touch("link", &p);
                let at = self.resolve(&r, &link, false, &mut 0);
                let followed = self.resolve(&r, &link, true, &mut 0);
                match at.as_ref().and_then(|a| self.nodes.get(a)) {
                    Some(Node::Link(t)) => {
                        let t = t.clone();
                        self.put(&p, Node::Link(t));
                    }
                    _ => {
                        if let Some(f) = &followed {
                            self.put(&p, Node::Alias(f.clone()));
                        }
                    }
                }
                if let Some(f) = &followed {
                    touch("aim", f);
                    if !m.data.is_empty() && m.hidden.is_empty() {
                        touch("write", f);
                    }
                }
            }
        }
        // What a reader that takes this member's size as 0 reads next.
        for h in &m.hidden {
            out.extend(self.apply(h));
        }
        out
    }
}

/// The view as the link walker sees it: its root is `/`, where every absolute target
/// starts.
impl links::Nodes for ViewModel {
    fn node(&self, path: &[Vec<u8>]) -> links::Seen<'_> {
        match self.nodes.get(path) {
            None => links::Seen::Missing,
            Some(Node::Dir) => links::Seen::Dir,
            Some(Node::Link(t)) => links::Seen::Symlink(t),
            Some(Node::File | Node::Alias(_)) => links::Seen::Other,
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
