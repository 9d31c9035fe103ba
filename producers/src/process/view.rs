//! Running a tool inside a filesystem view: a command prefix (a `bwrap` invocation, say)
//! that every external command started on this thread goes through while it is set.
//!
//! The fuzzer sets it around one hydration so that the extractor sees only a disposable
//! directory as its whole filesystem: absolute member names, any number of `..` and
//! absolute link targets then land inside that directory instead of on the host. The
//! prefix is per thread, not per process, so that two fuzz sessions on two threads never
//! run each other's tools in the wrong view.

use std::cell::RefCell;
use std::ffi::OsString;

/// The one view path that asks for the whole host, read-only
/// ([`crate::Extractor::view_paths`]): what a plugged-in backend gets, since the files it
/// needs (an interpreter under `/opt`, a virtualenv under `$HOME`, a Node installation) are
/// not known to snapconf. The view then shows every host directory read-only except the
/// ones it owns for decoys, whose host entries it shows one by one (see the harness's
/// `jail::mirror`).
pub const WHOLE_HOST: &str = "/";

thread_local! {
    static VIEW: RefCell<Option<Vec<OsString>>> = const { RefCell::new(None) };
}

/// The view prefix of this thread, if one is set (outermost first, ending with `--`).
pub fn current() -> Option<Vec<OsString>> {
    VIEW.with(|v| v.borrow().clone())
}

/// Run `f` with every external command this thread starts prefixed by `prefix` (see
/// [`crate::process::limits::prefix`], which puts it outermost). The previous prefix is
/// restored afterwards, also when `f` panics.
pub fn with_view<T>(prefix: Vec<OsString>, f: impl FnOnce() -> T) -> T {
    struct Restore(Option<Vec<OsString>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let old = self.0.take();
            VIEW.with(|v| *v.borrow_mut() = old);
        }
    }
    let old = VIEW.with(|v| v.borrow_mut().replace(prefix));
    let _restore = Restore(old);
    f()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_view_is_set_for_the_closure_only_and_per_thread() {
        assert!(current().is_none());
        let inside = with_view(vec!["bwrap".into(), "--".into()], || {
            let other = std::thread::spawn(current).join().expect("thread");
            (current(), other)
        });
        assert_eq!(inside.0, Some(vec!["bwrap".into(), "--".into()]));
        assert!(inside.1.is_none(), "another thread has no view");
        assert!(current().is_none(), "restored");
    }
}
