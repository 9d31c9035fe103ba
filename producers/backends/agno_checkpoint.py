#!/usr/bin/env python3
"""snapconf adapter for agno's CheckpointArchive (PyPI `agno`, module agno.sandbox.checkpoint).

    agno_checkpoint.py capture ROOT ARCHIVE EXCLUDE_FILE   (scratch: EXCLUDE_FILE's directory)
    agno_checkpoint.py hydrate ROOT ARCHIVE SCRATCH
    agno_checkpoint.py --worker                            (JSON lines, see README.md)

Capture: CheckpointArchive().capture({"workspace": ROOT, "native": <empty dir>}, ARCHIVE,
state={}, exclude=["workspace/" + each exclusion]). agno requires both durable roots, so the
`native` root is an empty directory in the scratch dir. The archive is agno's own format: a
gzip-compressed PAX tar (the default `compress=True`) holding `manifest.json`, `native/` and
`workspace/...`, so it pairs only with itself.

Hydrate: CheckpointArchive().restore(ARCHIVE, SCRATCH/restored) (a new directory; agno
validates every member before it creates a path, and stages in a sibling it removes), then the
adapter moves it into place: ROOT is renamed into the scratch dir, SCRATCH/restored/workspace
is renamed to ROOT, and the old tree is removed. A refused restore leaves ROOT untouched.
`absolute_links` stays False, agno's host-side default: absolute symlinks are not restored.
"""

import os
import shutil
import sys
import tempfile
from pathlib import Path

from agno.sandbox.checkpoint import CheckpointArchive


def capture(root, archive, exclusions, scratch):
    native = tempfile.mkdtemp(prefix="native-", dir=scratch)
    excludes = ["workspace/" + e.strip("/") for e in exclusions if e.strip("/")]
    CheckpointArchive().capture(
        {"workspace": Path(root), "native": Path(native)}, Path(archive), state={}, exclude=excludes
    )


def _remove(path):
    for parent, dirs, _ in os.walk(path):
        for d in dirs:
            p = os.path.join(parent, d)
            if not os.path.islink(p):
                os.chmod(p, 0o700)
    os.chmod(path, 0o700)
    shutil.rmtree(path)


def hydrate(root, archive, scratch):
    restored = Path(tempfile.mkdtemp(prefix="restore-", dir=scratch)) / "restored"
    CheckpointArchive().restore(Path(archive), restored)
    old = Path(tempfile.mkdtemp(prefix="old-", dir=scratch)) / "old"
    os.rename(root, old)
    try:
        os.rename(restored / "workspace", root)
    except BaseException:
        os.rename(old, root)
        raise
    _remove(old)
    _remove(restored)


def main(argv):
    if argv[1:] == ["--worker"]:
        # The protocol (JSON lines, paths, refusals) is snapconf_worker's, beside this file;
        # `python3 -I` leaves the script's directory off sys.path, so it is added here.
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import snapconf_worker

        snapconf_worker.serve(capture=capture, hydrate=hydrate)
    elif len(argv) == 5 and argv[1] == "capture":
        with open(argv[4], "rb") as f:
            exclusions = [os.fsdecode(x) for x in f.read().split(b"\n") if x]
        capture(argv[2], argv[3], exclusions, os.path.dirname(os.path.abspath(argv[4])))
    elif len(argv) == 5 and argv[1] == "hydrate":
        hydrate(argv[2], argv[3], argv[4])
    else:
        sys.exit("usage: agno_checkpoint.py capture ROOT ARCHIVE EXCLUDE_FILE | hydrate ROOT ARCHIVE SCRATCH | --worker")


if __name__ == "__main__":
    main(sys.argv)
