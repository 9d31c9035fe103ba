#!/usr/bin/env python3
"""snapconf example backend: Python's tarfile, per call or as a persistent worker.

    pytar.py capture ROOT ARCHIVE EXCLUDE_FILE   one capture (EXCLUDE_FILE: one path a line)
    pytar.py hydrate ROOT ARCHIVE                one hydration (replaces ROOT's contents)
    pytar.py --worker                            JSON lines on stdin/stdout (see README.md)

Capture writes a PAX archive of ROOT with members `.` and `./a/b`, leaves out excluded paths,
stores every name of a hardlinked inode as a full file (the `copy` hardlink profile) and
drops FIFOs and device nodes (tarfile already skips sockets). Hydrate empties ROOT, then
extracts with tarfile's `tar` filter (PEP 706). Standard library only.
"""

import os
import shutil
import stat
import sys
import tarfile


def _excluded(name, exclusions):
    return any(name == e or name.startswith(e + "/") for e in exclusions)


def capture(root, archive, exclusions):
    exclusions = [e.rstrip("/") for e in exclusions if e.rstrip("/")]

    def keep(info):
        rel = "" if info.name == "." else info.name[2:] if info.name.startswith("./") else info.name
        if rel and _excluded(rel, exclusions):
            return None
        if info.ischr() or info.isblk() or info.isfifo():
            return None
        if info.islnk():
            # A second name of an inode: store it in full, as what it is (file or link).
            path = os.path.join(root, rel)
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode):
                info.type, info.linkname, info.size = tarfile.SYMTYPE, os.readlink(path), 0
            else:
                info.type, info.linkname, info.size = tarfile.REGTYPE, "", st.st_size
        return info

    with tarfile.open(archive, "w", format=tarfile.PAX_FORMAT) as tar:
        tar.add(root, arcname=".", filter=keep)


def _clear(root):
    for name in os.listdir(root):
        path = os.path.join(root, name)
        if os.path.isdir(path) and not os.path.islink(path):
            for parent, dirs, _ in os.walk(path):
                for d in dirs:
                    p = os.path.join(parent, d)
                    if not os.path.islink(p):
                        os.chmod(p, 0o700)
            os.chmod(path, 0o700)
            shutil.rmtree(path)
        else:
            os.unlink(path)


def hydrate(root, archive):
    _clear(root)
    with tarfile.open(archive) as tar:
        tar.extractall(root, filter="tar")


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
        capture(argv[2], argv[3], exclusions)
    elif len(argv) == 4 and argv[1] == "hydrate":
        hydrate(argv[2], argv[3])
    else:
        sys.exit("usage: pytar.py capture ROOT ARCHIVE EXCLUDE_FILE | hydrate ROOT ARCHIVE | --worker")


if __name__ == "__main__":
    main(sys.argv)
