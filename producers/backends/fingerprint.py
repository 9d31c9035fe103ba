"""A stateful worker backend: it remembers, per root, the checkpoint it last restored
there and a fingerprint of the tree it left, and skips a restore of that same checkpoint
into that root.

The skip is right only while the root still holds what the restore left. With
`FINGERPRINT_CHECK_TREE=1` (fingerprint-checked.toml) the worker fingerprints the root
again before it skips, and restores when the tree has moved on; without it
(fingerprint.toml) it trusts the stale fingerprint, so a warm restore over a workspace
that changed since is skipped and the changes stay. `snapconf lifecycle` finds that;
a single `snapconf run` cannot, since every hydration there goes into a new root.

Capture writes every kept name of a file as a regular member (hardlinks are copied),
refuses FIFOs and devices (the profile's `special-files = "refuse-at-capture"`), leaves
sockets out, and keeps symlinks as they are. A restore extracts into the request's
scratch directory first, then swaps the tree in, so a refused restore leaves the root as
it was.
"""

import hashlib
import os
import stat
import sys
import tarfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import snapconf_worker  # noqa: E402

CHECK_TREE = os.environ.get("FINGERPRINT_CHECK_TREE") == "1"

# root -> (SHA-256 of the archive last restored there, fingerprint of the tree it left)
restored = {}


def _excluded(rel, exclude):
    return any(rel == x or rel.startswith(x + "/") for x in exclude)


def _walk(root):
    """Every path under `root`, parents first, names sorted; links never followed."""
    for name in sorted(os.listdir(root)):
        path = os.path.join(root, name)
        yield path
        if stat.S_ISDIR(os.lstat(path).st_mode):
            yield from _walk(path)


def capture(root, archive, exclude):
    with tarfile.open(archive, "w", format=tarfile.PAX_FORMAT) as tar:
        for path in _walk(root):
            rel = os.path.relpath(path, root)
            if _excluded(rel, exclude):
                continue
            st = os.lstat(path)
            if stat.S_ISSOCK(st.st_mode):
                continue
            if not (stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
                raise ValueError(f"special file `{rel}` is not captured")
            info = tar.gettarinfo(path, arcname=rel)
            if info.islnk():
                # Every name of a shared inode is written whole (hardlinks = "copy").
                info.type, info.linkname, info.size = tarfile.REGTYPE, "", st.st_size
            if info.isreg():
                with open(path, "rb") as f:
                    tar.addfile(info, f)
            else:
                tar.addfile(info)


def _clear(directory):
    """Remove everything in `directory` (made writable and searchable first)."""
    for name in os.listdir(directory):
        path = os.path.join(directory, name)
        if stat.S_ISDIR(os.lstat(path).st_mode):
            os.chmod(path, 0o700)
            _clear(path)
            os.rmdir(path)
        else:
            os.unlink(path)


def _fingerprint(root):
    """SHA-256 over every path's kind, permission bits, content or target."""
    h = hashlib.sha256()
    try:
        for path in _walk(root):
            st = os.lstat(path)
            h.update(os.fsencode(os.path.relpath(path, root)) + b"\0")
            h.update(f"{stat.S_IFMT(st.st_mode)} {stat.S_IMODE(st.st_mode)}\0".encode())
            if stat.S_ISREG(st.st_mode):
                with open(path, "rb") as f:
                    h.update(hashlib.sha256(f.read()).digest())
            elif stat.S_ISLNK(st.st_mode):
                h.update(os.fsencode(os.readlink(path)))
    except OSError as error:
        h.update(f"unreadable: {error.errno}".encode())
    return h.hexdigest()


def hydrate(root, archive, scratch):
    with open(archive, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    known = restored.get(root)
    if known is not None and known[0] == digest:
        if not CHECK_TREE or _fingerprint(root) == known[1]:
            return  # the root already holds this checkpoint
    stage = os.path.join(scratch, "stage")
    os.mkdir(stage)
    with tarfile.open(archive) as tar:
        tar.extractall(stage, filter="tar")
    os.chmod(root, 0o755)
    _clear(root)
    for name in os.listdir(stage):
        os.rename(os.path.join(stage, name), os.path.join(root, name))
    restored[root] = (digest, _fingerprint(root))


snapconf_worker.serve(capture=capture, hydrate=hydrate)
