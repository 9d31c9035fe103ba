//! The pool that hands a reset jail to the next case, and where jails go by default.

use super::Jail;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// At most one spare jail, shared by the clones of one case environment (the engine's `Env`): a case
/// whose adapters all ran in process and that ends without a `containment` or `hang`
/// finding hands its jail back (after [`Jail::reset`]) and the next case takes it, which
/// saves creating and removing the decoys and the canary directory for every case. The
/// spare is removed when the last clone is dropped.
#[derive(Clone, Default)]
pub struct JailPool(Arc<Mutex<Option<Jail>>>);

impl std::fmt::Debug for JailPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("JailPool")
    }
}

impl JailPool {
    /// The spare jail if it was made under `base`, else a new one ([`Jail::new`]).
    ///
    /// # Errors
    /// As [`Jail::new`].
    pub fn take(&self, base: Option<&Path>) -> std::io::Result<Jail> {
        let spare = self.0.lock().unwrap_or_else(|e| e.into_inner()).take();
        match spare {
            Some(j) if j.base.as_deref() == base => Ok(j),
            _ => Jail::new(base),
        }
    }

    /// The path of the spare jail, if there is one.
    pub fn spare(&self) -> Option<PathBuf> {
        let spare = self.0.lock().unwrap_or_else(|e| e.into_inner());
        spare.as_ref().map(|j| j.path.clone())
    }

    /// Keep `jail` as the spare after [`Jail::reset`]; a jail that cannot be reset is
    /// dropped (removed) instead.
    pub fn give_back(&self, mut jail: Jail) {
        if jail.reset().is_ok() {
            *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(jail);
        }
    }
}

/// Where jails go by default: `/dev/shm` when it is a writable directory (a tmpfs: cases
/// run several times faster than on a disk), else the system temp dir.
pub fn default_jail_base() -> Option<PathBuf> {
    let shm = Path::new("/dev/shm");
    let writable = shm.is_dir() && rustix::fs::access(shm, rustix::fs::Access::WRITE_OK).is_ok();
    writable.then(|| shm.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pool hands the same jail back for the same base, a new one for another base,
    /// and removes its spare when the last clone goes.
    #[test]
    fn pool_reuses_a_jail_and_removes_it_when_dropped() {
        let pool = JailPool::default();
        let other = tempfile::tempdir().expect("tempdir");
        let first = pool.take(None).expect("take");
        let path = first.path().to_path_buf();
        pool.give_back(first);
        assert_eq!(pool.spare(), Some(path.clone()));
        let again = pool.take(None).expect("take");
        assert_eq!(again.path(), path);
        pool.give_back(again);
        let elsewhere = pool.take(Some(other.path())).expect("take");
        assert!(elsewhere
            .path()
            .starts_with(other.path().canonicalize().expect("canon")));
        assert!(
            !path.exists(),
            "a spare of another base is dropped, not kept"
        );
        pool.give_back(elsewhere);
        let spare = pool.spare().expect("spare");
        let clone = pool.clone();
        drop(pool);
        assert!(spare.exists(), "a clone still holds the spare");
        drop(clone);
        assert!(!spare.exists(), "the spare is removed with the last clone");
    }
}
