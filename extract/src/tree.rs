//! The planned tree as a trie: one node per distinct path, holding only its last component
//! and its parent.
//!
//! Storing whole paths per member makes memory quadratic in name depth (a 4 KiB name of 256
//! components implies 256 directories, each with a path of up to 4 KiB) and makes every
//! ancestor check hash whole prefixes. Here a member costs its last component plus a few
//! words, and walking a name hashes each component once.
//!
//! Lookups go through a keyed hash of `(parent, component)`; the stored component is
//! compared on every hit, so a hash collision can never merge two names: it is reported and
//! the archive refused (fail closed; with `RandomState` keys it does not happen in practice).

use std::collections::hash_map::RandomState;
use std::collections::HashMap;
use std::hash::BuildHasher;

/// Index of a node; [`ROOT`] is the root itself.
pub(crate) type NodeId = u32;

/// The root node (empty name, its own parent).
pub(crate) const ROOT: NodeId = 0;

/// Two different components hashed alike under one parent, or the tree is full.
#[derive(Debug)]
pub(crate) struct TreeFull;

/// The trie.
#[derive(Debug)]
pub(crate) struct Tree {
    parents: Vec<NodeId>,
    names: Vec<Box<[u8]>>,
    index: HashMap<(NodeId, u64), NodeId>,
    keys: RandomState,
}

impl Default for Tree {
    fn default() -> Self {
        Tree {
            parents: vec![ROOT],
            names: vec![Box::default()],
            index: HashMap::new(),
            keys: RandomState::new(),
        }
    }
}

impl Tree {
    fn key(&self, parent: NodeId, comp: &[u8]) -> (NodeId, u64) {
        (parent, self.keys.hash_one(comp))
    }

    /// The child `comp` of `parent`, if planned.
    pub(crate) fn child(&self, parent: NodeId, comp: &[u8]) -> Result<Option<NodeId>, TreeFull> {
        match self.index.get(&self.key(parent, comp)) {
            None => Ok(None),
            Some(&id) if *self.names[id as usize] == *comp => Ok(Some(id)),
            Some(_) => Err(TreeFull),
        }
    }

    /// The child `comp` of `parent`, created if absent; `true` if it was created.
    pub(crate) fn insert(
        &mut self,
        parent: NodeId,
        comp: &[u8],
    ) -> Result<(NodeId, bool), TreeFull> {
        if let Some(id) = self.child(parent, comp)? {
            return Ok((id, false));
        }
        let id = NodeId::try_from(self.parents.len()).map_err(|_| TreeFull)?;
        self.parents.push(parent);
        self.names.push(comp.into());
        let key = self.key(parent, comp);
        self.index.insert(key, id);
        Ok((id, true))
    }

    /// The parent of `id` (the root's parent is the root).
    pub(crate) fn parent(&self, id: NodeId) -> NodeId {
        self.parents[id as usize]
    }

    /// The last component of `id` (empty for the root).
    pub(crate) fn name(&self, id: NodeId) -> &[u8] {
        &self.names[id as usize]
    }

    /// The components from the root down to `id` (empty for the root).
    pub(crate) fn ancestry(&self, id: NodeId) -> Vec<NodeId> {
        let mut chain = Vec::new();
        let mut cur = id;
        while cur != ROOT {
            chain.push(cur);
            cur = self.parent(cur);
        }
        chain.reverse();
        chain
    }

    /// The root-relative path of `id`, components joined by `/` (empty for the root).
    pub(crate) fn path(&self, id: NodeId) -> Vec<u8> {
        let mut out = Vec::new();
        for (i, n) in self.ancestry(id).into_iter().enumerate() {
            if i > 0 {
                out.push(b'/');
            }
            out.extend_from_slice(self.name(n));
        }
        out
    }
}
