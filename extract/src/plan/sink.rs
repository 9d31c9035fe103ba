//! What the validation pass hands a writer as it goes (see [`crate::stage::Direct`]).

use std::sync::Arc;

use crate::sparse::SparseMap;
use crate::tree::{NodeId, Tree};
use crate::HydrateError;

/// Reads the next bytes of a regular member's payload (of a sparse member, its data
/// regions one after the other) into the buffer; 0 at its end.
pub(crate) type ReadPayload<'r> = dyn FnMut(&mut [u8]) -> Result<usize, HydrateError> + 'r;

/// A regular file whose payload the sink is given.
#[derive(Debug)]
pub(crate) struct Payload {
    /// Where the file is planned.
    pub(crate) node: NodeId,
    /// Its permission bits (after [`crate::Modes`]).
    pub(crate) mode: u32,
    /// Its modification time, seconds since the epoch.
    pub(crate) mtime: u64,
    /// The map of a sparse member: the payload is its data regions, in map order.
    pub(crate) sparse: Option<Arc<SparseMap>>,
}

/// What the validation pass tells a writer as it goes (see [`crate::stage::Direct`]): every
/// call comes after the member it is about has passed its checks, so nothing is written for
/// a member that is refused. [`NoSink`] ignores them all.
pub(crate) trait Sink {
    /// A directory is planned at `node` (its parent is planned already).
    fn dir(&mut self, tree: &Tree, node: NodeId);
    /// The regular file `file` is planned and has its payload next: `read` gives it. A
    /// refusal `read` returns is passed on; a fault of the writer's own is kept by the
    /// writer, not returned.
    fn file(
        &mut self,
        tree: &Tree,
        file: &Payload,
        read: &mut ReadPayload<'_>,
    ) -> Result<(), HydrateError>;
    /// `file` is a copy of the regular file now planned at `target` (a hardlink member;
    /// `file.sparse` is the target's map, whose holes the copy keeps).
    fn copy(&mut self, tree: &Tree, file: &Payload, target: NodeId);
    /// What was planned at `node` (an empty directory if `dir`, else a regular file) is
    /// superseded by a later member of the same name.
    fn remove(&mut self, tree: &Tree, node: NodeId, dir: bool);
}

/// The sink of a pass that writes nothing.
pub(crate) struct NoSink;

impl Sink for NoSink {
    fn dir(&mut self, _: &Tree, _: NodeId) {}
    fn file(&mut self, _: &Tree, _: &Payload, _: &mut ReadPayload<'_>) -> Result<(), HydrateError> {
        Ok(())
    }
    fn copy(&mut self, _: &Tree, _: &Payload, _: NodeId) {}
    fn remove(&mut self, _: &Tree, _: NodeId, _: bool) {}
}
