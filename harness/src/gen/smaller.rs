//! `NoLarger`: a strategy wrapper whose `simplify` never offers a value larger (by a size
//! function) than the value current when it was called.
//!
//! Why: a proptest `Union` shrinks by moving to an earlier alternative, which is generated
//! afresh, and a prior re-resolved against a smaller W1 may fit more of its plans; both can
//! make a "simplified" case bigger (measured: about 0.3% of simplify steps, by up to 8
//! entries). A runner that drives `simplify`/`complicate` itself must see smaller cases at
//! every step, so larger candidates are skipped here: the inner tree is told they did not
//! reproduce (`complicate`) and asked for the next simplification.

use proptest::strategy::{NewTree, Strategy, ValueTree};
use proptest::test_runner::TestRunner;

/// How many larger inner candidates one `simplify` call may skip before giving up.
const MAX_SKIPS: usize = 10_000;

/// Wraps `inner`; `size` measures a value (for cases: entries and exclusions of W1 plus the
/// entries of W0).
#[derive(Clone, Debug)]
pub struct NoLarger<S: Strategy> {
    inner: S,
    size: fn(&S::Value) -> usize,
}

impl<S: Strategy> NoLarger<S> {
    /// `inner`, whose shrink steps are filtered by `size`.
    pub fn new(inner: S, size: fn(&S::Value) -> usize) -> Self {
        NoLarger { inner, size }
    }
}

impl<S: Strategy> Strategy for NoLarger<S> {
    type Tree = NoLargerTree<S::Tree>;
    type Value = S::Value;

    fn new_tree(&self, runner: &mut TestRunner) -> NewTree<Self> {
        Ok(NoLargerTree {
            inner: self.inner.new_tree(runner)?,
            size: self.size,
        })
    }
}

/// The value tree of [`NoLarger`].
pub struct NoLargerTree<T: ValueTree> {
    inner: T,
    size: fn(&T::Value) -> usize,
}

impl<T: ValueTree> ValueTree for NoLargerTree<T> {
    type Value = T::Value;

    fn current(&self) -> T::Value {
        self.inner.current()
    }

    /// Property: when this returns `true`, `size(current())` is at most what it was before
    /// the call.
    fn simplify(&mut self) -> bool {
        let kept = (self.size)(&self.inner.current());
        for _ in 0..MAX_SKIPS {
            if !self.inner.simplify() {
                return false;
            }
            if (self.size)(&self.inner.current()) <= kept {
                return true;
            }
            // Treat the larger candidate as "does not reproduce"; whether the inner tree can
            // step back or not, keep simplifying from where it is.
            self.inner.complicate();
        }
        false
    }

    fn complicate(&mut self) -> bool {
        self.inner.complicate()
    }
}
