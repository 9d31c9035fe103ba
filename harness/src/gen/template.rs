//! The realistic template: a Python virtualenv whose site-packages file is a hardlink into a
//! uv-style package cache (H1–H3 in one workspace), built part by part so that shrinking can
//! drop parts.

use super::builder::Builder;
use super::plan::{VenvExclusion, VenvPart, VenvPlan};
use crate::model::bytes::RelPath;
use crate::model::spec::EntryKind;

/// The package cache directory.
pub const CACHE_DIR: &str = "cache";
/// The cache copy of the package file.
pub const CACHE_FILE: &str = "cache/uv/pkg/__init__.py";
/// The venv copy of the package file (a hardlink to [`CACHE_FILE`]).
pub const SITE_FILE: &str = ".venv/lib/python3.11/site-packages/pkg/__init__.py";
/// The virtualenv directory (no random name uses it, so the coverage detector keys on it).
pub const VENV_DIR: &str = ".venv";
/// The venv's config file.
pub const PYVENV_CFG: &str = ".venv/pyvenv.cfg";

const PKG_CONTENT: &[u8] = b"VALUE = 1\n";

fn path(s: &str) -> Option<RelPath> {
    RelPath::new(s).ok()
}

/// Add the template's parts to `b` (directories of the template become open to later random
/// plans, except `__pycache__`), and push its exclusion.
pub fn apply(b: &mut Builder, plan: &VenvPlan, exclusions: &mut Vec<RelPath>) {
    for part in &plan.parts {
        let (at, kind, mode) = match part {
            VenvPart::PyvenvCfg => (
                PYVENV_CFG,
                Builder::file(
                    b"home = /usr/local/bin\ninclude-system-site-packages = false\nversion = 3.11.9\n"
                        .to_vec(),
                ),
                None,
            ),
            VenvPart::Python => (
                ".venv/bin/python",
                Builder::symlink(b"/usr/local/bin/python".to_vec()),
                None,
            ),
            VenvPart::Python3 => (
                ".venv/bin/python3",
                Builder::symlink(b"python".to_vec()),
                None,
            ),
            VenvPart::CacheFile => (CACHE_FILE, Builder::file(PKG_CONTENT.to_vec()), None),
            VenvPart::SitePackage => {
                let kind = match path(CACHE_FILE) {
                    Some(cache) if b.linkable.contains(&cache) => {
                        EntryKind::Hardlink { target: cache }
                    }
                    _ => Builder::file(PKG_CONTENT.to_vec()),
                };
                (SITE_FILE, kind, None)
            }
            VenvPart::BinScript => (
                ".venv/bin/pkg-cli",
                Builder::file(b"#!/workspace/.venv/bin/python\nimport pkg\n".to_vec()),
                Some(0o755),
            ),
            VenvPart::Pycache => (
                ".venv/lib/python3.11/site-packages/pkg/__pycache__",
                EntryKind::Dir,
                None,
            ),
            VenvPart::Source => (
                "src/main.py",
                Builder::file(b"import pkg\nprint(pkg.VALUE)\n".to_vec()),
                None,
            ),
        };
        if let Some(p) = path(at) {
            b.add_at(&p, kind, mode);
        }
    }
    let dirs: Vec<RelPath> = b
        .entries
        .iter()
        .filter(|e| matches!(e.kind, EntryKind::Dir) && e.path.file_name() != b"__pycache__")
        .map(|e| e.path.clone())
        .collect();
    b.open_dirs.extend(dirs.into_iter().map(Some));
    let excluded = match plan.exclusion {
        VenvExclusion::None => None,
        VenvExclusion::CacheDir => path(CACHE_DIR),
        VenvExclusion::CacheFile => path(CACHE_FILE),
    };
    if let Some(x) = excluded.filter(|x| b.exists(x)) {
        exclusions.push(x);
    }
}
